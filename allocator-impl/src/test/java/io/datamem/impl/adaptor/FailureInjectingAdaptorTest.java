package io.datamem.impl.adaptor;

import io.datamem.impl.internal.adaptor.FailureInjectingAdaptorImpl;
import io.datamem.impl.internal.adaptor.StatisticsAdaptorImpl;
import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.OutOfNativeMemoryException;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.impl.AllocatorStack;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Injected failures: which calls fail, determinism, and an error path they exercise. */
class FailureInjectingAdaptorTest {

    private final StatisticsAdaptorImpl leaf = StatisticsAdaptorImpl.of(DataMem.builtinDefault().allocator());

    private static List<Boolean> pattern(FailureInjectingAdaptorImpl f, int calls) {
        List<Boolean> failed = new ArrayList<>();
        for (int i = 0; i < calls; i++) {
            MemorySegment p = i % 3 == 0 ? f.malloc(8) : i % 3 == 1 ? f.calloc(2, 4) : f.realloc(MemorySegment.NULL, 0, 8);
            failed.add(p.address() == 0);
            if (p.address() != 0) {
                f.free(p, 8);
            }
        }
        return failed;
    }

    @Test
    void nthFailsOnlyThatCall() {
        FailureInjectingAdaptorImpl f = FailureInjectingAdaptorImpl.nth(leaf, 3);
        assertEquals(List.of(false, false, true, false, false, false), pattern(f, 6));
        assertEquals(6, f.attempts());
        assertEquals(1, f.injectedFailures());
        assertEquals(0, leaf.currentBytes());
        assertEquals(0, leaf.failures(), "the upstream never saw the failed call");
    }

    @Test
    void everyNthFailsPeriodically() {
        FailureInjectingAdaptorImpl f = FailureInjectingAdaptorImpl.every(leaf, 2);
        assertEquals(List.of(false, true, false, true, false, true), pattern(f, 6));
    }

    @Test
    void randomFailuresAreSeededAndNearTheirRate() {
        List<Boolean> a = pattern(FailureInjectingAdaptorImpl.random(leaf, 0.25, 42), 4000);
        List<Boolean> b = pattern(FailureInjectingAdaptorImpl.random(leaf, 0.25, 42), 4000);
        List<Boolean> c = pattern(FailureInjectingAdaptorImpl.random(leaf, 0.25, 43), 4000);
        assertEquals(a, b, "same seed, same failures");
        assertTrue(!a.equals(c), "another seed, other failures");
        long failed = a.stream().filter(x -> x).count();
        assertTrue(failed > 800 && failed < 1200, "about a quarter failed: " + failed);
        assertEquals(List.of(false, false, false), pattern(FailureInjectingAdaptorImpl.random(leaf, 0, 1), 3));
        assertEquals(List.of(true, true, true), pattern(FailureInjectingAdaptorImpl.random(leaf, 1, 1), 3));
    }

    @Test
    void specsAndTheirMistakes() {
        assertTrue(FailureInjectingAdaptorImpl.of(leaf, "nth:5").toString().contains("nth:5"));
        assertTrue(FailureInjectingAdaptorImpl.of(leaf, "every:2").toString().contains("every:2"));
        assertTrue(FailureInjectingAdaptorImpl.of(leaf, "random:0.5").toString().contains("random:0.5:0"));
        assertTrue(FailureInjectingAdaptorImpl.of(leaf, "random:0.5:9").toString().contains("random:0.5:9"));
        for (String bad : List.of("", "nth", "nth:0", "every:x", "random:2", "random:0.1:2:3", "sometimes:3")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> FailureInjectingAdaptorImpl.of(leaf, bad), bad);
            assertTrue(e.getMessage().contains("expected: nth:N, every:N, random:P or random:P:SEED"), e.getMessage());
        }
    }

    @Test
    void aFailedResizeLeavesTheArrayAsItWas() {
        DataMemHandler h = DataMem.createHandler("default_allocator+stats+faults=nth:2");
        FailureInjectingAdaptorImpl f = AllocatorStack.find(h, FailureInjectingAdaptorImpl.class).orElseThrow();
        StatisticsAdaptorImpl s = AllocatorStack.find(h, StatisticsAdaptorImpl.class).orElseThrow();
        NDArray a = DataMem.callWith(h, () -> NDArray.zeros(DType.INT16, 10));
        a.setLong(5, 9);
        OutOfNativeMemoryException e = assertThrows(OutOfNativeMemoryException.class, () -> a.resize(20));
        assertTrue(e.getMessage().contains("realloc returned NULL"), e.getMessage());
        assertEquals(5, a.getLong(9));
        a.resize(20);
        a.close();
        assertEquals(1, f.injectedFailures());
        assertEquals(DataMem.builtinDefault().allocator(), s.upstream(), "stats sits on the leaf");
        assertEquals(0, s.currentBytes());
    }
}
