package io.datamem.spi;

import io.datamem.spi.ProviderTerm.Option;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The grammar every provider reads: terms, their options and byte sizes. */
class ProviderTermTest {

    @Test
    void optionsComeInOrderWithoutTheNestedName() {
        ProviderTerm t = new ProviderTerm("hugepages:2m, threshold = 4m ,fallback=thp(aligned:4096)");
        assertEquals(List.of(new Option("2m", ""), new Option("threshold", "4m"), new Option("fallback", "thp")),
                t.options("hugepages"));
        assertFalse(t.options("hugepages").getFirst().hasValue());
        assertTrue(t.options("hugepages").get(1).hasValue());
        assertEquals("threshold=4m", t.options("hugepages").get(1).toString());
        assertEquals("aligned:4096", t.nested());
        assertEquals(List.of(), new ProviderTerm("pool(aligned64)").options("pool"));
        assertEquals(List.of(new Option("max", "1m")), new ProviderTerm("pool(aligned64):max=1m").options("pool"));
        assertEquals(List.of(new Option("64k", "")), new ProviderTerm("limit=64k").options("limit"));
        assertEquals(List.of(new Option("a", "b=c")), new ProviderTerm("x:a=b=c").options("x"));
    }

    @Test
    void malformedOptionsAreRefusedQuotingTheTerm() {
        IllegalArgumentException empty = assertThrows(IllegalArgumentException.class,
                () -> new ProviderTerm("numa:bind=0,,strict").options("numa"));
        assertEquals("'numa:bind=0,,strict' has an empty option (expected: numa:OPTION,OPTION,...)", empty.getMessage());
        IllegalArgumentException separator = assertThrows(IllegalArgumentException.class,
                () -> new ProviderTerm("numax").options("numa"));
        assertEquals("'numax' (expected: numa or numa:OPTIONS)", separator.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new ProviderTerm("numa:").options("numa"));
        IllegalArgumentException nameless = assertThrows(IllegalArgumentException.class,
                () -> new ProviderTerm("numa:=0").options("numa"));
        assertTrue(nameless.getMessage().contains("an option without a name"), nameless.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new ProviderTerm("pool(x)").options("numa"));
        assertThrows(NullPointerException.class, () -> new ProviderTerm("numa").options(null));
        assertThrows(IllegalArgumentException.class, () -> new Option("", "x"));
        assertThrows(NullPointerException.class, () -> new Option("k", null));
    }

    @Test
    void byteSizesArePowersOf1024AndBounded() {
        assertEquals(100, ProviderTerm.byteSize("limit", "100", Long.MAX_VALUE));
        assertEquals(64L << 10, ProviderTerm.byteSize("limit", " 64K ", Long.MAX_VALUE));
        assertEquals(64L << 20, ProviderTerm.byteSize("limit", "64mib", Long.MAX_VALUE));
        assertEquals(1L << 30, ProviderTerm.byteSize("limit", "1GB", Long.MAX_VALUE));
        assertEquals(2L << 40, ProviderTerm.byteSize("limit", "2t", Long.MAX_VALUE));
        assertEquals(1L << 20, ProviderTerm.byteSize("max", "1m", 1L << 20));
        IllegalArgumentException over = assertThrows(IllegalArgumentException.class,
                () -> ProviderTerm.byteSize("max", "2m", 1L << 20));
        assertEquals("max: '2m' (expected: at most 1048576 bytes)", over.getMessage());
        for (String bad : List.of("", "k", "-1", "1x", "1.5m", "m1", "99999999999999999999", "1 0")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> ProviderTerm.byteSize("limit", bad, Long.MAX_VALUE), bad);
            assertTrue(e.getMessage().startsWith("limit: "), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> ProviderTerm.byteSize("limit", "8589934592g", Long.MAX_VALUE));
    }

    @Test
    void aRefusalQuotesTheHandlerAndTheTermAndSaysWhatWasExpected() {
        IllegalArgumentException e = new ProviderTerm("numa:bind").refused("h+stats", "no target", "numa:bind=N");
        assertEquals("handler name 'h+stats': 'numa:bind': no target (expected: numa:bind=N)", e.getMessage());
        assertThrows(NullPointerException.class, () -> new ProviderTerm("x").refused(null, "w", "e"));
    }
}
