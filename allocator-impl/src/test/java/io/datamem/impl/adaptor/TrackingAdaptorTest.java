package io.datamem.impl.adaptor;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The live set, the stack-trace levels, the leak report and the free-size check. */
class TrackingAdaptorTest {

    private final StatisticsAdaptor upstream = StatisticsAdaptor.of(DataMem.builtinDefault().allocator());

    private TrackingAdaptor tracking(TrackingAdaptor.StackTraces level) {
        return TrackingAdaptor.builder(upstream).stackTraces(level).build();
    }

    @Test
    void theLeakReportSaysWhatIsLiveAndWhereItWasAllocated() {
        TrackingAdaptor t = tracking(TrackingAdaptor.StackTraces.FULL);
        DataMemHandler h = DataMemHandler.of("tracked", t);
        NDArray kept = DataMem.callWith(h, () -> NDArray.zeros(DType.FLOAT64, 128));
        NDArray closed = DataMem.callWith(h, () -> NDArray.zeros(DType.FLOAT64, 16));
        closed.close();
        List<TrackingAdaptor.Allocation> live = t.liveAllocations();
        assertEquals(1, live.size());
        TrackingAdaptor.Allocation a = live.getFirst();
        assertEquals(kept.address(), a.address());
        assertEquals(1024, a.byteSize());
        assertEquals(Thread.currentThread().getName(), a.threadName());
        assertEquals(Thread.currentThread().threadId(), a.threadId());
        assertFalse(a.stackTrace().isEmpty());
        assertTrue(a.stackTrace().getFirst().getClassName().startsWith("io.datamem.array."),
                "the trace starts at the caller of the adaptor stack: " + a.stackTrace().getFirst());
        String report = t.leakReport();
        assertTrue(report.startsWith("LEAK: 1 allocation(s) still live, 1024 bytes in all"), report);
        assertTrue(report.contains("0x" + Long.toHexString(kept.address()) + " (1024 bytes)"), report);
        assertTrue(report.contains("theLeakReportSaysWhatIsLiveAndWhereItWasAllocated"), report);
        assertEquals(1, t.liveCount());
        assertEquals(1024, t.liveBytes());
        kept.close();
        assertEquals("no leaks\n", t.leakReport());
        assertTrue(t.isClean());
    }

    @Test
    void stackTraceLevels() {
        TrackingAdaptor off = tracking(TrackingAdaptor.StackTraces.OFF);
        MemorySegment p = off.malloc(10);
        assertTrue(off.liveAllocations().getFirst().stackTrace().isEmpty());
        assertTrue(off.leakReport().contains("no stack trace recorded: stack traces are off"), off.leakReport());
        off.free(p, 10);
        TrackingAdaptor every = TrackingAdaptor.builder(upstream).stackTraces(TrackingAdaptor.StackTraces.SAMPLED)
                .sampleInterval(1).build();
        MemorySegment q = every.malloc(10);
        assertFalse(every.liveAllocations().getFirst().stackTrace().isEmpty(), "an interval of 1 samples all");
        every.free(q, 10);
        assertEquals(TrackingAdaptor.StackTraces.FULL, TrackingAdaptor.StackTraces.parse(" Full "));
        assertThrows(IllegalArgumentException.class, () -> TrackingAdaptor.StackTraces.parse("most"));
        assertThrows(IllegalArgumentException.class, () -> TrackingAdaptor.builder(upstream).sampleInterval(0));
    }

    @Test
    void theDefaultLevelComesFromTheSystemProperty() {
        String before = System.getProperty(TrackingAdaptor.STACK_TRACES_PROPERTY);
        try {
            System.clearProperty(TrackingAdaptor.STACK_TRACES_PROPERTY);
            assertEquals(TrackingAdaptor.StackTraces.SAMPLED, TrackingAdaptor.of(upstream).stackTraces());
            System.setProperty(TrackingAdaptor.STACK_TRACES_PROPERTY, "off");
            assertEquals(TrackingAdaptor.StackTraces.OFF, TrackingAdaptor.of(upstream).stackTraces());
            System.setProperty(TrackingAdaptor.STACK_TRACES_PROPERTY, "lots");
            assertThrows(IllegalArgumentException.class, () -> TrackingAdaptor.of(upstream));
        } finally {
            if (before == null) {
                System.clearProperty(TrackingAdaptor.STACK_TRACES_PROPERTY);
            } else {
                System.setProperty(TrackingAdaptor.STACK_TRACES_PROPERTY, before);
            }
        }
    }

    @Test
    void aWrongSizeIsRefusedBeforeReachingTheUpstream() {
        TrackingAdaptor t = tracking(TrackingAdaptor.StackTraces.OFF);
        MemorySegment p = t.malloc(64);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> t.free(p, 32));
        String hex = "0x" + Long.toHexString(p.address());
        assertTrue(e.getMessage().startsWith("free(" + hex + ", 32): WRONG_SIZE, the block was allocated with 64"
                + " bytes"), e.getMessage());
        assertEquals(0, upstream.frees(), "nothing forwarded");
        assertEquals(1, t.liveCount(), "the block stays live and listed");
        assertThrows(IllegalArgumentException.class, () -> t.realloc(p, 65, 10));
        MemorySegment q = t.realloc(p, 64, 128);
        t.free(q, 128);
        IllegalArgumentException twice = assertThrows(IllegalArgumentException.class, () -> t.free(q, 128));
        assertTrue(twice.getMessage().contains("NOT_LIVE"), twice.getMessage());
        assertEquals(List.of(TrackingAdaptor.Problem.Kind.WRONG_SIZE, TrackingAdaptor.Problem.Kind.WRONG_SIZE,
                TrackingAdaptor.Problem.Kind.NOT_LIVE), t.problems().stream().map(TrackingAdaptor.Problem::kind).toList());
        assertTrue(t.leakReport().contains("3 refused operation(s)"), t.leakReport());
        assertFalse(t.isClean());
        assertEquals(0, upstream.currentBytes());
    }

    @Test
    void aFailedReallocKeepsTheOldBlockLive() {
        TrackingAdaptor t = tracking(TrackingAdaptor.StackTraces.OFF);
        MemorySegment p = t.malloc(64);
        assertEquals(0, t.realloc(p, 64, 1L << 50).address());
        assertEquals(64, t.liveAllocations().getFirst().byteSize());
        t.free(p, 64);
        assertTrue(t.isClean());
    }
}
