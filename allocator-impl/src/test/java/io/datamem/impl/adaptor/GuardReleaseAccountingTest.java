package io.datamem.impl.adaptor;

import io.datamem.impl.internal.adaptor.StatisticsAdaptorImpl;
import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.impl.AllocatorStack;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * When the guard catches corruption on a {@code free} or {@code realloc} it frees the block and says
 * so ({@link GuardViolationException#blockReleased()}); the adaptors above it account the block as
 * freed, so no false leak is reported. Misuses the guard refuses leave the block live everywhere.
 */
class GuardReleaseAccountingTest {

    private static void overrun(MemorySegment p, long byteSize) {
        p.reinterpret(byteSize + 1).set(ValueLayout.JAVA_BYTE, byteSize, (byte) 0x41);
    }

    @Test
    void anOverrunCaughtOnFreeIsAccountedAsFreedAbove() {
        DataMemHandler h = DataMem.createHandler("aligned64+guard+stats+tracking");
        DataMemAllocator a = h.allocator();
        StatisticsAdaptorImpl stats = AllocatorStack.find(h, StatisticsAdaptorImpl.class).orElseThrow();
        TrackingAdaptor tracking = AllocatorStack.find(h, TrackingAdaptor.class).orElseThrow();
        GuardAdaptor guard = AllocatorStack.find(h, GuardAdaptor.class).orElseThrow();
        MemorySegment p = a.malloc(100);
        overrun(p, 100);
        GuardViolationException e = assertThrows(GuardViolationException.class, () -> a.free(p, 100));
        assertEquals(Misuse.Kind.OVERRUN, e.misuse().kind());
        assertTrue(e.blockReleased());
        assertEquals(0, guard.liveCount());
        assertEquals(0, stats.currentBytes(), "statistics count the block as freed");
        assertEquals(1, stats.frees());
        assertEquals(0, tracking.liveAllocations().size(), "tracking counts the block as freed: " + tracking.leakReport());
        assertTrue(tracking.leakReport().startsWith("no leaks"), tracking.leakReport());
        assertThrows(IllegalArgumentException.class, () -> a.free(p, 100), "tracking refuses the second free");
        assertEquals(1, stats.frees(), "and nothing below counted it");
    }

    @Test
    void anOverrunCaughtOnReallocIsAccountedAsFreedAbove() {
        DataMemHandler h = DataMem.createHandler("aligned64+guard+limit=1m+log=/dev/null+jfr+stats+tracking");
        DataMemAllocator a = h.allocator();
        StatisticsAdaptorImpl stats = AllocatorStack.find(h, StatisticsAdaptorImpl.class).orElseThrow();
        TrackingAdaptor tracking = AllocatorStack.find(h, TrackingAdaptor.class).orElseThrow();
        LimitingAdaptor limit = AllocatorStack.find(h, LimitingAdaptor.class).orElseThrow();
        MemorySegment p = a.malloc(100);
        overrun(p, 100);
        GuardViolationException e = assertThrows(GuardViolationException.class, () -> a.realloc(p, 100, 5000));
        assertTrue(e.blockReleased());
        assertEquals(0, stats.currentBytes());
        assertEquals(0, limit.snapshot().inUseBytes(), "the limit released the block and rolled back the growth");
        assertEquals(0, tracking.liveAllocations().size(), tracking.leakReport());
    }

    /**
     * An array resized over a block the guard finds overrun: the guard frees the block and throws;
     * the array is then closed and its close frees nothing again (no double free for the guard to
     * catch, and the figures above stay true).
     */
    @Test
    void anArrayResizedOverAnOverrunBlockIsClosedAndNotFreedTwice() {
        DataMemHandler h = DataMem.createHandler("aligned64+guard+stats+tracking");
        StatisticsAdaptorImpl stats = AllocatorStack.find(h, StatisticsAdaptorImpl.class).orElseThrow();
        TrackingAdaptor tracking = AllocatorStack.find(h, TrackingAdaptor.class).orElseThrow();
        GuardAdaptor guard = AllocatorStack.find(h, GuardAdaptor.class).orElseThrow();
        io.datamem.array.NDArray a = DataMem.callWith(h,
                () -> io.datamem.array.NDArray.empty(io.datamem.array.DType.FLOAT64, 8));
        a.setDouble(1.0, 0);
        overrun(MemorySegment.ofAddress(a.address()), 64);
        GuardViolationException e = assertThrows(GuardViolationException.class, () -> a.resize(1000));
        assertTrue(e.blockReleased());
        assertTrue(a.isClosed(), "the array's memory is gone");
        assertThrows(IllegalStateException.class, () -> a.getDouble(0));
        a.close();                                         // a no-op: nothing is freed twice
        assertEquals(0, guard.liveCount());
        assertEquals(0, stats.currentBytes());
        assertEquals(1, stats.frees(), "one free, the guard's");
        assertEquals(0, tracking.liveAllocations().size(), tracking.leakReport());
        guard.drainQuarantine();
        assertEquals(1, guard.violations().size(), "only the overrun: " + guard.report());
    }

    @Test
    void aMisuseTheGuardRefusesLeavesTheBlockLiveAbove() {
        DataMemHandler h = DataMem.createHandler("aligned64+guard+limit=1m+stats+tracking");
        DataMemAllocator a = h.allocator();
        StatisticsAdaptorImpl stats = AllocatorStack.find(h, StatisticsAdaptorImpl.class).orElseThrow();
        TrackingAdaptor tracking = AllocatorStack.find(h, TrackingAdaptor.class).orElseThrow();
        LimitingAdaptor limit = AllocatorStack.find(h, LimitingAdaptor.class).orElseThrow();
        GuardAdaptor guard = AllocatorStack.find(h, GuardAdaptor.class).orElseThrow();
        MemorySegment p = a.malloc(100);
        // Tracking on top would refuse a wrong size itself; call below it to reach the guard.
        GuardViolationException e = assertThrows(GuardViolationException.class, () -> stats.free(p, 99));
        assertFalse(e.blockReleased());
        assertEquals(100, stats.currentBytes());
        assertEquals(100, limit.snapshot().inUseBytes());
        assertEquals(1, guard.liveCount());
        a.free(p, 100);
        assertEquals(0, stats.currentBytes());
        assertEquals(0, tracking.liveAllocations().size());
    }
}
