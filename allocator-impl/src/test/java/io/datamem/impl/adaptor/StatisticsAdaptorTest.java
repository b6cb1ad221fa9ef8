package io.datamem.impl.adaptor;

import io.datamem.impl.internal.adaptor.StatisticsAdaptorImpl;
import io.datamem.impl.snapshot.LayerSnapshot;
import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.junit.CheckedMemory;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Figures, the size histogram and nested scopes of the statistics adaptor. */
@CheckedMemory("default_allocator+stats")
class StatisticsAdaptorTest {

    private final StatisticsAdaptorImpl stats = StatisticsAdaptorImpl.of(DataMem.builtinDefault().allocator());

    @Test
    void theHistogramCountsEveryAllocationByPowerOfTwo() {
        assertEquals(0, StatisticsAdaptorImpl.bucketOf(0));
        assertEquals(1, StatisticsAdaptorImpl.bucketOf(1));
        assertEquals(2, StatisticsAdaptorImpl.bucketOf(2));
        assertEquals(2, StatisticsAdaptorImpl.bucketOf(3));
        assertEquals(13, StatisticsAdaptorImpl.bucketOf(4096));
        assertEquals(58, StatisticsAdaptorImpl.bucketOf(io.datamem.DataMemAllocator.MAX_BYTE_SIZE));
        List<MemorySegment> ps = new ArrayList<>();
        long[] sizes = {0, 1, 3, 100, 127, 128, 4096, 5000};
        for (long s : sizes) {
            ps.add(stats.malloc(s));
        }
        StatisticsAdaptorImpl.SizeHistogram h = stats.histogram();
        assertEquals(8, h.total());
        assertEquals(1, h.count(0));
        assertEquals(1, h.count(1));
        assertEquals(1, h.count(2));
        assertEquals(2, h.count(7), "[64, 127]");
        assertEquals(1, h.count(8), "[128, 255]");
        assertEquals(2, h.count(13), "[4096, 8191]");
        assertEquals(64, StatisticsAdaptorImpl.SizeHistogram.lowerBound(7));
        assertEquals(127, StatisticsAdaptorImpl.SizeHistogram.upperBound(7));
        assertTrue(h.toString().contains("[64, 127] bytes: 2"), h.toString());
        for (int i = 0; i < sizes.length; i++) {
            stats.free(ps.get(i), sizes[i]);
        }
        assertEquals(h, stats.histogram(), "frees do not change the histogram");
    }

    @Test
    void scopesCountTheirOwnBlockAndAddUpWhenPopped() {
        MemorySegment before = stats.malloc(1000);
        LayerSnapshot.Statistics outer;
        StatisticsAdaptorImpl.Scope block = stats.push();
        try (block) {
            MemorySegment a = stats.malloc(100);
            StatisticsAdaptorImpl.Scope inner = stats.push();
            MemorySegment b = stats.calloc(10, 50);
            MemorySegment c = stats.realloc(b, 500, 800);
            stats.free(c, 800);
            assertTrue(block.isOpen() && inner.isOpen(), "two scopes open");
            inner.close();
            LayerSnapshot.Statistics in = inner.figures();
            assertFalse(inner.isOpen());
            assertTrue(block.isOpen());
            assertEquals(new LayerSnapshot.Statistics("StatisticsAdaptor", 0, 800, 800, 800, 1, 1, 1, 0), in);
            stats.free(before, 1000); // allocated before the scope: its bytes go negative
            stats.free(a, 100);
            outer = block.figures();
            assertEquals(-1000, outer.currentBytes());
            assertEquals(900, outer.peakBytes(), "100 in use, then the inner block's 800 on top");
            assertEquals(2, outer.allocations());
            assertEquals(3, outer.frees());
            assertEquals(1, outer.reallocations());
            inner.close(); // already closed: a no-op
            assertEquals(in, inner.figures(), "a closed scope's figures are final");
        }
        assertFalse(block.isOpen());
        assertEquals(new LayerSnapshot.Statistics("StatisticsAdaptor", 0, 1900, 1900, 1900, 3, 3, 1, 0), stats.figures());
    }

    @Test
    void scopesCloseInnermostFirst() {
        StatisticsAdaptorImpl.Scope outer = stats.push();
        StatisticsAdaptorImpl.Scope inner = stats.push();
        assertThrows(IllegalStateException.class, outer::close);
        inner.close();
        inner.close();
        outer.close();
        assertFalse(outer.isOpen());
        assertFalse(inner.isOpen());
    }

    @Test
    void failuresAndCallerMistakesAreCountedApart() {
        assertEquals(0, stats.malloc(1L << 50).address());
        assertThrows(IllegalArgumentException.class, () -> stats.malloc(-1));
        try (StatisticsAdaptorImpl.Scope s = stats.push()) {
            assertEquals(0, stats.calloc(1L << 50, 1).address());
            assertEquals(1, s.figures().failures());
        }
        assertEquals(2, stats.failures());
        assertEquals(0, stats.allocations());
        assertEquals(0, stats.histogram().total());
    }

    @Test
    void arraysUnderTheCheckedHandlerAreCounted(DataMemHandler handler, StatisticsAdaptor checked) {
        assertEquals("default_allocator+guard+stats+tracking", handler.name());
        try (StatisticsAdaptor.Scope s = checked.push()) {
            NDArray a = NDArray.zeros(DType.INT64, 100);
            a.resize(200);
            a.close();
            assertEquals(new LayerSnapshot.Statistics("StatisticsAdaptor", 0, 1600, 1600, 1600, 1, 1, 1, 0), s.figures(),
                    "the statistics sit above the guard: they see the sizes the array asked for");
        }
    }
}
