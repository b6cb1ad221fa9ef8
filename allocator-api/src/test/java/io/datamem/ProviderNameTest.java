package io.datamem;

import io.datamem.DataMem;
import io.datamem.spi.DataMemProvider;
import io.datamem.internal.Messages;
import io.datamem.spi.Availability;
import io.datamem.spi.ProviderTerm;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The handler-name syntax and resolution errors. */
class ProviderNameTest {

    @Test
    void termsSplitAtTopLevelPlusSigns() {
        assertEquals(List.of(new ProviderTerm("pool(aligned64+stats)"), new ProviderTerm("limit=100")),
                ProviderTerm.split(" pool(aligned64+stats) + limit=100 "));
        ProviderTerm t = new ProviderTerm("cuda:registered(numa:local)");
        assertEquals("cuda", t.family());
        assertEquals("numa:local", t.nested());
        assertEquals("cuda:registered", t.withoutNested());
        ProviderTerm n = new ProviderTerm("numa:interleave=0,1");
        assertEquals("numa", n.family());
        assertEquals("interleave=0,1", n.argument());
        assertNull(n.nested());
        assertEquals("aligned64", new ProviderTerm("aligned64").family());
        assertEquals("", new ProviderTerm("pool(x)").argument());
        assertEquals("64", new ProviderTerm("limit=64").argument());
    }

    @Test
    void malformedNamesAreRejectedWithThePosition() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ProviderTerm.split("a++b")).getMessage()
                .contains("empty term at 2"));
        assertThrows(IllegalArgumentException.class, () -> new ProviderTerm("pool(a"));
        assertThrows(IllegalArgumentException.class, () -> new ProviderTerm("a)"));
        assertThrows(IllegalArgumentException.class, () -> new ProviderTerm(" "));
        assertThrows(IllegalArgumentException.class, () -> Availability.unavailable(" "));
    }

    @Test
    void unknownNamesSuggestTheClosestSpellingAndListTheFamiliesInOneShortLine() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> DataMem.handler("no_such_allocator"));
        String m = e.getMessage();
        assertTrue(m.startsWith("unknown handler name 'no_such_allocator': no provider accepts 'no_such_allocator'"
                + " as a leaf"), m);
        assertFalse(m.contains("did you mean"), "nothing is close to no_such_allocator: " + m);
        assertTrue(m.contains("Available: default_allocator, workspace; with io.datamem:allocator-impl: aligned, hugepages, "
                + "numa, pool, shared, stats, tracking, limit, guard, log, faults, jfr; with io.datamem:allocator-cuda: cuda; "
                + "with io.datamem:allocator-sycl: sycl; with io.datamem:allocator-ucx: ucx"), m);
        assertTrue(m.length() < 450, "one short line (family names, not every spelling): " + m);

        String typo = assertThrows(IllegalArgumentException.class, () -> DataMem.handler("default_alocator"))
                .getMessage();
        assertTrue(typo.contains("; did you mean default_allocator?"), typo);
        String adaptorTypo = assertThrows(IllegalArgumentException.class,
                () -> DataMem.handler("default_allocator+nope")).getMessage();
        assertTrue(adaptorTypo.contains("no provider accepts 'nope' as an adaptor"), adaptorTypo);
        // suggestions come from the known families even when their artifact is absent
        String aligned = assertThrows(IllegalArgumentException.class, () -> DataMem.handler("alligned64"))
                .getMessage();
        assertTrue(aligned.contains("did you mean aligned64?"), aligned);
        String huge = assertThrows(IllegalArgumentException.class, () -> DataMem.handler("hugepage:2m"))
                .getMessage();
        assertTrue(huge.contains("did you mean hugepages:2m?"), huge);
    }

    @Test
    void aFamilyWhoseArtifactIsAbsentNamesTheArtifactToAdd() {
        // only allocator-api is on this module's test class path
        assertEquals("handler 'aligned64': the family 'aligned' is provided by io.datamem:allocator-impl, which is "
                        + "not on the class path or module path; add that artifact (docs/getting-started.md)",
                assertThrows(IllegalArgumentException.class, () -> DataMem.handler("aligned64")).getMessage());
        assertEquals("handler 'cuda:pinned': the family 'cuda' is provided by io.datamem:allocator-cuda, which is "
                        + "not on the class path or module path; add that artifact (docs/getting-started.md)",
                assertThrows(IllegalArgumentException.class, () -> DataMem.handler("cuda:pinned")).getMessage());
        for (String[] c : new String[][] {{"sycl:device", "'sycl' is provided by io.datamem:allocator-sycl"},
                {"ucx", "'ucx' is provided by io.datamem:allocator-ucx"},
                {"default_allocator+stats", "'stats' is provided by io.datamem:allocator-impl"},
                {"pool(aligned64)", "'pool' is provided by io.datamem:allocator-impl"},
                {"aligned:4096", "'aligned' is provided by io.datamem:allocator-impl"},
                {"hugepages:1g", "'hugepages' is provided by io.datamem:allocator-impl"},
                {"numa:local", "'numa' is provided by io.datamem:allocator-impl"}}) {
            String m = assertThrows(IllegalArgumentException.class, () -> DataMem.createHandler(c[0])).getMessage();
            assertTrue(m.contains(c[1]) && m.contains("add that artifact"), c[0] + ": " + m);
        }
    }

    @Test
    void messagesQuoteABoundedPrefixOfAnyInput() {
        String a = "a".repeat(1_000_000);
        for (String name : List.of(a, "default_allocator+" + a, "(" + a, a + ")", a + "++b", "pool(" + a + ")",
                "default_allocator+stats".repeat(50_000), " + " + a)) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DataMem.handler(name));
            assertTrue(e.getMessage().length() < 500, () -> e.getMessage().length() + " characters: "
                    + e.getMessage().substring(0, 500));
            assertTrue(e.getMessage().matches("(?s).*…' \\(\\d+ characters\\).*"), e.getMessage());
        }
        assertTrue(assertThrows(IllegalArgumentException.class, () -> DataMem.handler(a)).getMessage()
                .contains("'" + "a".repeat(128) + "…' (1000000 characters) is 1000000 UTF-8 bytes (expected: at "
                        + "most 127"));
        String named = assertThrows(IllegalArgumentException.class,
                () -> new DataMemHandler(a, 1, DataMem.builtinDefault().allocator())).getMessage();
        assertTrue(named.length() < 300, named);
        assertEquals("'abc'", Messages.quote("abc"));
        assertEquals("'" + "x".repeat(128) + "'", Messages.quote("x".repeat(128)));
        assertEquals("'" + "x".repeat(128) + "…' (129 characters)", Messages.quote("x".repeat(129)));
        assertEquals("null", Messages.quote(null));
        String pairs = "\uD83D\uDE00".repeat(70); // 140 chars of surrogate pairs: never split one
        assertEquals("'" + pairs.substring(0, 128) + "…' (140 characters)", Messages.quote(pairs));
        String odd = "x" + pairs;
        assertEquals("'" + odd.substring(0, 127) + "…' (141 characters)", Messages.quote(odd));
    }

    @Test
    void namedHandlersAreCachedAndTheDefaultIsTheSingleton() {
        assertSame(DataMem.builtinDefault(), DataMem.handler(" default_allocator "));
        assertTrue(DataMemProvider.installed().getFirst().names().contains("default_allocator"));
    }
}
