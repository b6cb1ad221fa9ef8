package io.datamem.impl;

import io.datamem.impl.internal.placement.HugePageAllocatorImpl;
import io.datamem.impl.internal.placement.NumaBuilder;
import io.datamem.impl.internal.pool.PoolOptions;
import io.datamem.impl.placement.HugePageAllocator;
import io.datamem.impl.placement.NumaAllocator;
import io.datamem.impl.pool.PoolingAllocator;
import io.datamem.spi.ProviderTerm;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Each family's options parse from a handler-name term and write themselves back as one that
 * parses to the same settings (the grammar lives with the settings: {@code NumaBuilder.parse}
 * and {@code Builder.spec}, {@code HugePageAllocatorImpl.parse} and {@code Builder.spec},
 * {@code PoolOptions.parse} and {@code spec}). No machine is touched.
 */
class TermRoundTripTest {

    private static ProviderTerm term(String text) {
        return new ProviderTerm(text);
    }

    @Test
    void numaTermsWriteThemselvesBack() {
        for (String[] c : List.of(
                new String[] {"numa:local", "numa:local"},
                new String[] {"numa:bind=0", "numa:bind=0"},
                new String[] {"numa:bind=0,strict,populate", "numa:bind=0,strict,populate"},
                new String[] {"numa:interleave=0,1", "numa:interleave=0,1"},
                new String[] {"numa:preferred=1(hugepages)", "numa:preferred=1"},
                new String[] {"numa:firsttouch", "numa:firsttouch"})) {
            String spec = NumaBuilder.parse(term(c[0]), "h").spec();
            assertEquals(c[1], spec, c[0]);
            assertEquals(spec, NumaBuilder.parse(term(spec), "h").spec(), spec);
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> NumaBuilder.parse(term("numa:bind"), "mine"));
        assertTrue(e.getMessage().startsWith("handler name 'mine': 'numa:bind': "), e.getMessage());
    }

    @Test
    void hugePageTermsWriteThemselvesBack() {
        for (String[] c : List.of(
                new String[] {"hugepages", "hugepages"},
                new String[] {"hugepages:thp", "hugepages"},
                new String[] {"hugepages:2m,fallback=thp", "hugepages:2m,fallback=thp"},
                new String[] {"hugepages:1g,fallback=normal,threshold=1m(aligned64)",
                        "hugepages:1g,fallback=normal,threshold=1048576"})) {
            String spec = HugePageAllocatorImpl.parse(term(c[0]), "h").spec();
            assertEquals(c[1], spec, c[0]);
            assertEquals(spec, HugePageAllocatorImpl.parse(term(spec), "h").spec(), spec);
        }
        assertThrows(IllegalArgumentException.class, () -> HugePageAllocatorImpl.parse(term("hugepages:3m"), "h"));
    }

    @Test
    void poolOptionsWriteThemselvesBack() {
        assertEquals("", PoolOptions.parse(term("pool(aligned64)"), "h").spec());
        PoolOptions o = PoolOptions.parse(term("pool(aligned64):max=1m,slab=128k"), "h");
        assertEquals(new PoolOptions(1L << 20, 128L << 10,
                PoolOptions.DEFAULTS.maxRetainedByteSize()), o);
        assertEquals(":max=1048576,slab=131072", o.spec());
        assertEquals(o, PoolOptions.parse(term("pool(aligned64)" + o.spec()), "h"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PoolOptions.parse(term("pool(aligned64):size=1m"), "mine"));
        assertTrue(e.getMessage().startsWith("handler name 'mine': pool option 'size=1m'"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> PoolOptions.parse(term("pool()"), "h"));
    }
}
