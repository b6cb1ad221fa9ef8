package io.datamem.impl.cpu;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.impl.Rss;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A large {@code calloc} commits no memory up front, through every aligned path, as libc's does. */
class LazyCallocTest {

    private static final long GIB = 1L << 30;

    @ParameterizedTest
    @ValueSource(strings = {"aligned64", "pool(aligned64)", "aligned:4096", "aligned:2097152",
            "aligned64+guard+stats+tracking", "pool(aligned64)+limit=2g+stats"})
    void aGibibyteOfZerosIsNotResident(String name) {
        Assumptions.assumeTrue(Rss.available(), "needs /proc/self/status");
        DataMemAllocator a = DataMem.createHandler(name).allocator();
        long alignment = a.traits().byteAlignment();
        long before = Rss.bytes();
        MemorySegment p = a.calloc(1, GIB);
        assertNotEquals(0, p.address());
        long grown = Rss.bytes() - before;
        try {
            assertTrue(grown < (128L << 20), name + ": calloc(1 GiB) made " + (grown >> 20) + " MiB resident");
            assertEquals(0, p.address() % alignment, "aligned as the traits promise");
            MemorySegment s = p.reinterpret(GIB);
            for (long offset : new long[] {0, 4096, GIB / 2 + 8, GIB - 8}) {
                assertEquals(0L, s.get(ValueLayout.JAVA_LONG, offset), name + " at " + offset);
            }
            long small = 512 << 10;
            s.set(ValueLayout.JAVA_LONG, small - 8, -1L);
            MemorySegment q = a.realloc(p, GIB, small);   // moves out of the mapping, keeping the data
            assertNotEquals(0, q.address());
            p = MemorySegment.NULL;
            assertEquals(-1L, q.reinterpret(small).get(ValueLayout.JAVA_LONG, small - 8));
            assertEquals(0L, q.reinterpret(small).get(ValueLayout.JAVA_LONG, 0));
            a.free(q, small);
        } finally {
            if (p.address() != 0) {
                a.free(p, GIB);
            }
        }
    }
}
