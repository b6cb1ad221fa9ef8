package io.datamem;

import io.datamem.spi.Availability;
import io.datamem.spi.ProviderTerm;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
    void unknownNamesListWhatIsAvailable() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> DataMem.handler("no_such_allocator"));
        assertTrue(e.getMessage().startsWith("unknown handler name 'no_such_allocator'"), e.getMessage());
        assertTrue(e.getMessage().contains("Available: default_allocator"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> DataMem.handler("default_allocator+nope"));
    }

    @Test
    void namedHandlersAreCachedAndTheDefaultIsTheSingleton() {
        assertSame(DataMem.builtinDefault(), DataMem.handler(" default_allocator "));
        assertTrue(DataMem.providers().getFirst().names().contains("default_allocator"));
    }
}
