package io.datamem.impl.adaptor;

import io.datamem.impl.internal.adaptor.TrackingAdaptorImpl;
import io.datamem.impl.snapshot.LiveBlock;
import io.datamem.impl.internal.adaptor.StatisticsAdaptorImpl;
import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The live set, the stack-trace levels, the leak report and the free-size check. */
class TrackingAdaptorTest {

    private final StatisticsAdaptorImpl upstream = StatisticsAdaptorImpl.of(DataMem.builtinDefault().allocator());

    private TrackingAdaptorImpl tracking(TrackingAdaptorImpl.StackTraces level) {
        return TrackingAdaptorImpl.builder(upstream).stackTraces(level).build();
    }

    @Test
    void theLeakReportSaysWhatIsLiveAndWhereItWasAllocated() {
        TrackingAdaptorImpl t = tracking(TrackingAdaptorImpl.StackTraces.FULL);
        DataMemHandler h = DataMemHandler.of("tracked", t);
        NDArray kept = DataMem.callWith(h, () -> NDArray.zeros(DType.FLOAT64, 128));
        NDArray closed = DataMem.callWith(h, () -> NDArray.zeros(DType.FLOAT64, 16));
        closed.close();
        List<LiveBlock> live = t.liveAllocations();
        assertEquals(1, live.size());
        LiveBlock a = live.getFirst();
        assertEquals(kept.address(), a.address());
        assertEquals(1024, a.byteSize());
        assertEquals(Thread.currentThread().getName(), a.thread());
        assertEquals(Thread.currentThread().threadId(), a.threadId());
        assertFalse(a.stack().isEmpty());
        assertTrue(a.stack().getFirst().startsWith("io.datamem.array."),
                "the trace starts at the caller of the adaptor stack: " + a.stack().getFirst());
        String report = t.leakReport();
        assertTrue(report.startsWith("LEAK: 1 allocation(s) still live, 1024 bytes in all"), report);
        assertTrue(report.contains("0x" + Long.toHexString(kept.address()) + " (1024 bytes)"), report);
        assertTrue(report.contains("theLeakReportSaysWhatIsLiveAndWhereItWasAllocated"), report);
        assertEquals(1, t.liveAllocations().size());
        assertEquals(1024, t.liveAllocations().stream().mapToLong(LiveBlock::byteSize).sum());
        kept.close();
        assertEquals("no leaks\n", t.leakReport());
        assertTrue(t.isClean());
    }

    @Test
    void stackTraceLevels() {
        TrackingAdaptorImpl off = tracking(TrackingAdaptorImpl.StackTraces.OFF);
        MemorySegment p = off.malloc(10);
        assertTrue(off.liveAllocations().getFirst().stack().isEmpty());
        assertTrue(off.leakReport().contains("no stack trace recorded: stack traces are off"), off.leakReport());
        off.free(p, 10);
        TrackingAdaptorImpl every = TrackingAdaptorImpl.builder(upstream).stackTraces(TrackingAdaptorImpl.StackTraces.SAMPLED)
                .sampleInterval(1).build();
        MemorySegment q = every.malloc(10);
        assertFalse(every.liveAllocations().getFirst().stack().isEmpty(), "an interval of 1 samples all");
        every.free(q, 10);
        assertEquals(TrackingAdaptorImpl.StackTraces.FULL, TrackingAdaptorImpl.StackTraces.parse(" Full "));
        assertThrows(IllegalArgumentException.class, () -> TrackingAdaptorImpl.StackTraces.parse("most"));
        assertThrows(IllegalArgumentException.class, () -> TrackingAdaptorImpl.builder(upstream).sampleInterval(0));
    }

    @Test
    void theDefaultLevelComesFromTheSystemProperty() {
        String before = System.getProperty(TrackingAdaptorImpl.STACK_TRACES_PROPERTY);
        try {
            System.clearProperty(TrackingAdaptorImpl.STACK_TRACES_PROPERTY);
            assertEquals(TrackingAdaptorImpl.StackTraces.SAMPLED, TrackingAdaptorImpl.of(upstream).stackTraces());
            System.setProperty(TrackingAdaptorImpl.STACK_TRACES_PROPERTY, "off");
            assertEquals(TrackingAdaptorImpl.StackTraces.OFF, TrackingAdaptorImpl.of(upstream).stackTraces());
            System.setProperty(TrackingAdaptorImpl.STACK_TRACES_PROPERTY, "lots");
            assertThrows(IllegalArgumentException.class, () -> TrackingAdaptorImpl.of(upstream));
        } finally {
            if (before == null) {
                System.clearProperty(TrackingAdaptorImpl.STACK_TRACES_PROPERTY);
            } else {
                System.setProperty(TrackingAdaptorImpl.STACK_TRACES_PROPERTY, before);
            }
        }
    }

    @Test
    void aWrongSizeIsRefusedBeforeReachingTheUpstream() {
        TrackingAdaptorImpl t = tracking(TrackingAdaptorImpl.StackTraces.OFF);
        MemorySegment p = t.malloc(64);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> t.free(p, 32));
        String hex = "0x" + Long.toHexString(p.address());
        assertTrue(e.getMessage().startsWith("WRONG_SIZE at " + hex + ": free(" + hex + ", 32): the block was"
                + " allocated with 64 bytes"), e.getMessage());
        assertEquals(0, upstream.frees(), "nothing forwarded");
        assertEquals(1, t.liveAllocations().size(), "the block stays live and listed");
        assertThrows(IllegalArgumentException.class, () -> t.realloc(p, 65, 10));
        MemorySegment q = t.realloc(p, 64, 128);
        t.free(q, 128);
        IllegalArgumentException twice = assertThrows(IllegalArgumentException.class, () -> t.free(q, 128));
        assertTrue(twice.getMessage().contains("NOT_LIVE"), twice.getMessage());
        assertEquals(List.of(Misuse.Kind.WRONG_SIZE, Misuse.Kind.WRONG_SIZE,
                Misuse.Kind.NOT_LIVE), t.problems().stream().map(Misuse::kind).toList());
        Misuse wrong = t.problems().getFirst();
        assertEquals("free", wrong.operation());
        assertEquals(32, wrong.byteSize());
        assertEquals(64, wrong.allocatedByteSize());
        assertEquals(p.address(), wrong.allocation().address(), "a wrong size names the live block");
        assertEquals(64, wrong.allocation().byteSize());
        assertNull(t.problems().getLast().allocation(), "a pointer not live has no block");
        assertEquals(-1, t.problems().getLast().allocatedByteSize());
        assertTrue(t.leakReport().contains("3 refused operation(s)"), t.leakReport());
        assertFalse(t.isClean());
        assertEquals(0, upstream.currentBytes());
    }

    @Test
    void aFailedReallocKeepsTheOldBlockLive() {
        TrackingAdaptorImpl t = tracking(TrackingAdaptorImpl.StackTraces.OFF);
        MemorySegment p = t.malloc(64);
        assertEquals(0, t.realloc(p, 64, 1L << 50).address());
        assertEquals(64, t.liveAllocations().getFirst().byteSize());
        t.free(p, 64);
        assertTrue(t.isClean());
    }
}
