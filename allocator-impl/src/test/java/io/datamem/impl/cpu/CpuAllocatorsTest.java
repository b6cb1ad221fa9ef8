package io.datamem.impl.cpu;

import io.datamem.impl.internal.adaptor.StatisticsAdaptorImpl;
import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.impl.adaptor.StatisticsAdaptor;
import io.datamem.impl.internal.cpu.AlignedAllocator;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Provider names, argument checks and statistics of the CPU allocators. */
class CpuAllocatorsTest {

    @Test
    void providersResolveEveryDocumentedName() {
        DataMemHandler a64 = DataMem.handler("aligned64");
        assertSame(a64, DataMem.handler("aligned64"), "named handlers are cached");
        assertEquals(64, ((AlignedAllocator) a64.allocator()).byteAlignment());
        assertEquals(4096, ((AlignedAllocator) DataMem.handler("aligned:4096").allocator()).byteAlignment());
        DataMemHandler stats = DataMem.createHandler("aligned:128+stats");
        assertEquals("aligned:128+stats", stats.name());
        StatisticsAdaptor s = assertInstanceOf(StatisticsAdaptor.class, stats.allocator());
        assertInstanceOf(AlignedAllocator.class, s.upstream());
        assertNotSame(stats, DataMem.createHandler("aligned:128+stats"));
        assertEquals(128, stats.traits().byteAlignment());
    }

    @Test
    void badNamesSayWhatWasExpected() {
        assertEquals("byteAlignment: 3 (expected: a power of two >= 8)",
                assertThrows(IllegalArgumentException.class, () -> DataMem.handler("aligned:3")).getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> DataMem.handler("aligned:x")).getMessage()
                .contains("expected: aligned64 or aligned:N"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> DataMem.handler("stats")).getMessage()
                .contains("is an adaptor; put a leaf allocator first, as in aligned64+stats"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> DataMem.handler("aligned64+aligned64"))
                .getMessage().contains("only adaptors may follow '+'"));
        String unknown = assertThrows(IllegalArgumentException.class, () -> DataMem.handler("magic")).getMessage();
        assertTrue(unknown.contains("Available: default_allocator, aligned, hugepages, numa, pool, shared, workspace; adaptors after "
                + "'+': stats,"), unknown);
        String typo = assertThrows(IllegalArgumentException.class, () -> DataMem.handler("alligned64")).getMessage();
        assertTrue(typo.contains("no provider accepts 'alligned64' as a leaf; did you mean aligned64?"), typo);
        assertThrows(IllegalArgumentException.class, () -> AlignedAllocator.of(4));
        assertThrows(IllegalArgumentException.class, () -> AlignedAllocator.of(96));
    }

    @Test
    void statisticsFollowTheSizesCallersPass() {
        StatisticsAdaptor s = StatisticsAdaptorImpl.of(DataMem.builtinDefault().allocator());
        DataMemHandler h = DataMemHandler.of("stats-test", s);
        NDArray a = DataMem.callWith(h, () -> NDArray.zeros(DType.FLOAT64, 1000));
        assertEquals(8000, s.figures().currentBytes());
        a.resize(500);
        assertEquals(4000, s.figures().currentBytes());
        assertEquals(8000, s.figures().peakBytes());
        a.resize(2000);
        assertEquals(16000, s.figures().peakBytes());
        a.close();
        assertEquals(0, s.figures().currentBytes());
        assertEquals(1, s.figures().allocations());
        assertEquals(1, s.figures().frees());
        assertEquals(2, s.figures().reallocations());
        assertEquals(s.figures().allocatedBytes(), s.figures().freedBytes());
        assertEquals(0, s.malloc(1L << 50).address());
        assertEquals(1, s.figures().failures());
        assertEquals(0, s.figures().currentBytes(), "a failure changes no accounting");
        s.free(MemorySegment.NULL, 0);
        assertEquals(1, s.figures().frees());
    }
}
