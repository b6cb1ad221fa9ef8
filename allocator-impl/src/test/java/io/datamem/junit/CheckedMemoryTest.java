package io.datamem.junit;

import io.datamem.impl.internal.adaptor.TrackingAdaptorImpl;
import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.impl.adaptor.GuardAdaptor;
import io.datamem.impl.adaptor.StatisticsAdaptor;
import io.datamem.impl.adaptor.TrackingAdaptor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Event;
import org.junit.platform.testkit.engine.Events;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

/**
 * The extension itself: it binds a checked handler around each test, resolves its parts as
 * parameters, and fails tests that leak or misuse memory with the report in the message (checked by
 * running sample test classes through the JUnit engine).
 */
@CheckedMemory("aligned64+stats")
class CheckedMemoryTest {

    private static final String SAMPLES = "datamem.junit.samples";

    private NDArray fromBeforeEach;

    @BeforeEach
    void allocateBeforeTheTest() {
        fromBeforeEach = NDArray.zeros(DType.INT8, 10); // under the checked handler too
    }

    @AfterEach
    void freeAfterTheTest() {
        fromBeforeEach.close(); // runs before the leak check
    }

    @Test
    void theTestRunsUnderTheNamedHandlerWithAGuardAndATracker(DataMemHandler h, TrackingAdaptor tracking,
                                                              GuardAdaptor guard, StatisticsAdaptor stats) {
        assertSame(h, DataMem.current());
        assertEquals("aligned64+guard+stats+tracking", h.name());
        assertSame(h, fromBeforeEach.handler());
        assertEquals(64, h.traits().byteAlignment());
        try (NDArray a = NDArray.empty(DType.FLOAT64, 100)) {
            assertEquals(2, tracking.liveAllocations().size());
            assertEquals(2, guard.liveCount());
            assertEquals(810, stats.figures().currentBytes());
        }
    }

    @Test
    @CheckedMemory(value = "default_allocator", stackTraces = TrackingAdaptorImpl.StackTraces.OFF)
    void aMethodAnnotationWinsOverTheClassOne(DataMemHandler h, TrackingAdaptor tracking) {
        assertEquals("default_allocator+guard+tracking", h.name());
        assertEquals(TrackingAdaptorImpl.StackTraces.OFF,
                assertInstanceOf(TrackingAdaptorImpl.class, tracking).stackTraces());
    }

    // ---------------------------------------------------------------------------------------------
    // Samples: run only through the engine below.

    @CheckedMemory
    @EnabledIfSystemProperty(named = SAMPLES, matches = "true")
    static class Samples {

        @Test
        void leaks() {
            NDArray.zeros(DType.FLOAT32, 256); // never closed
        }

        @Test
        void overruns() {
            MemorySegment p = DataMem.current().allocator().malloc(24);
            p.reinterpret(25).set(ValueLayout.JAVA_BYTE, 24, (byte) 1);
            DataMem.current().allocator().free(p, 24); // the guard throws here; the report adds it
        }

        @Test
        void corruptsALiveBlockAndLeaksIt() {
            MemorySegment p = DataMem.current().allocator().malloc(8);
            p.reinterpret(9).set(ValueLayout.JAVA_BYTE, 8, (byte) 1);
        }

        @Test
        void freesTwiceAndSwallowsTheException() {
            MemorySegment p = DataMem.current().allocator().malloc(16);
            DataMem.current().allocator().free(p, 16);
            try {
                DataMem.current().allocator().free(p, 16);
            } catch (IllegalArgumentException ignored) {
                // the test hides it; the extension still reports it
            }
        }

        @Test
        void isClean() {
            NDArray.zeros(DType.FLOAT32, 256).close();
        }
    }

    private static Events runSamples() {
        System.setProperty(SAMPLES, "true");
        try {
            return EngineTestKit.engine("junit-jupiter").selectors(selectClass(Samples.class)).execute()
                    .testEvents();
        } finally {
            System.clearProperty(SAMPLES);
        }
    }

    private static String failureOf(Events events, String method) {
        List<Event> failed = events.failed().stream()
                .filter(e -> e.getTestDescriptor().getDisplayName().startsWith(method + "("))
                .toList();
        assertEquals(1, failed.size(), method + " failed once");
        Throwable t = failed.getFirst().getPayload(org.junit.platform.engine.TestExecutionResult.class)
                .orElseThrow().getThrowable().orElseThrow();
        StringBuilder all = new StringBuilder(String.valueOf(t.getMessage()));
        for (Throwable s : t.getSuppressed()) {
            all.append('\n').append(s.getMessage());
        }
        return all.toString();
    }

    @Test
    void leaksAndViolationsFailTheTestWithTheReport() {
        Events events = runSamples();
        assertEquals(5, events.started().count());
        assertEquals(1, events.succeeded().count(), "only the clean sample passes");
        String leak = failureOf(events, "leaks");
        assertTrue(leak.startsWith("datamem: leaks() left memory problems in handler"
                + " 'default_allocator+guard+tracking':"), leak);
        assertTrue(leak.contains("LEAK: 1 allocation(s) still live, 1024 bytes in all"), leak);
        assertTrue(leak.contains("at io.datamem.junit.CheckedMemoryTest$Samples.leaks("), "allocation site: " + leak);
        String overrun = failureOf(events, "overruns");
        assertTrue(overrun.contains("OVERRUN at 0x") && overrun.contains("block of 24 bytes")
                && overrun.contains("is 0x01, expected 0xfd"), overrun);
        String corrupt = failureOf(events, "corruptsALiveBlockAndLeaksIt");
        assertTrue(corrupt.contains("LEAK: 1 allocation(s)") && corrupt.contains("OVERRUN")
                && corrupt.contains("[detected by check"), corrupt);
        String twice = failureOf(events, "freesTwiceAndSwallowsTheException");
        assertTrue(twice.contains("NOT_LIVE"), "the tracker, on top, refused the second free: " + twice);
    }
}
