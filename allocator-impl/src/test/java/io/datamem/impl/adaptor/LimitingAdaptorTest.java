package io.datamem.impl.adaptor;

import io.datamem.impl.internal.adaptor.FailureInjectingAdaptorImpl;
import io.datamem.impl.internal.adaptor.LimitingAdaptorImpl;
import io.datamem.impl.internal.adaptor.StatisticsAdaptorImpl;
import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.LimitExceededException;
import io.datamem.OutOfNativeMemoryException;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.impl.AllocatorStack;
import io.datamem.impl.internal.cpu.AlignedAllocator;
import io.datamem.junit.CheckedMemory;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The byte cap, its rollback, and how a refusal surfaces at the array level. */
@CheckedMemory("aligned64+stats")
class LimitingAdaptorTest {

    private final StatisticsAdaptorImpl leaf = StatisticsAdaptorImpl.of(AlignedAllocator.of(64));
    private final LimitingAdaptorImpl limit = LimitingAdaptorImpl.of(leaf, 65536);
    private final DataMemHandler capped = DataMemHandler.of("aligned64+limit=64k", limit);

    @Test
    void aRefusedArrayNamesTheCapTheUseAndTheRequestAndChangesNothing() {
        NDArray a = DataMem.callWith(capped, () -> NDArray.zeros(DType.FLOAT64, 4096)); // 32 KiB
        LimitExceededException e = assertThrows(LimitExceededException.class,
                () -> DataMem.callWith(capped, () -> NDArray.empty(DType.FLOAT64, 5000)));
        assertEquals("aligned64+limit=64k", e.handlerName());
        assertEquals(65536, e.limitBytes());
        assertEquals(32768, e.inUseBytes());
        assertEquals(40000, e.byteSize());
        assertEquals(64, e.byteAlignment());
        assertEquals("handler 'aligned64+limit=64k' refused 40000 bytes: limit 65536 bytes, 32768 in use, 32768 left",
                e.getMessage().lines().findFirst().orElseThrow());
        assertTrue(e.getMessage().contains("\n  limit: 32768 of 65536 bytes in use, 1 request(s) refused"),
                "the summary of the handler's memory follows: " + e.getMessage());
        assertEquals(32768, limit.snapshot().inUseBytes(), "the refusal changed no accounting");
        assertEquals(1, leaf.allocations(), "the refused request never reached the upstream");
        assertEquals(1, limit.snapshot().refusals());
        a.close();
        assertEquals(0, limit.snapshot().inUseBytes());
    }

    @Test
    void aRefusedResizeKeepsTheArray() {
        NDArray a = DataMem.callWith(capped, () -> NDArray.zeros(DType.INT32, 1000));
        a.setLong(7, 999);
        LimitExceededException e = assertThrows(LimitExceededException.class, () -> a.resize(20000));
        assertEquals(80000, e.byteSize(), "the new size");
        assertEquals(0, e.inUseBytes(), "the bytes in use besides the block being resized");
        assertArrayEquals(new long[] {1000}, a.shape());
        assertEquals(7, a.getLong(999));
        a.resize(16000);
        assertEquals(64000, limit.snapshot().inUseBytes());
        a.close();
        assertEquals(0, limit.snapshot().inUseBytes());
    }

    @Test
    void arenasSurfaceTheLimitToo() {
        try (Arena arena = capped.openArena()) {
            arena.allocate(60000);
            // An arena fails as the JDK's do, with an OutOfMemoryError; its cause says a limit refused.
            OutOfMemoryError oom = assertThrows(OutOfMemoryError.class, () -> arena.allocate(8000));
            assertTrue(oom.getMessage().contains(capped.name()) && oom.getMessage().contains("8000 bytes"),
                    oom.getMessage());
            LimitExceededException e = assertInstanceOf(LimitExceededException.class, oom.getCause());
            assertEquals(65536, e.limitBytes());
            assertEquals(60000, e.inUseBytes());
            // The handler as a SegmentAllocator reports the limit the same way.
            OutOfMemoryError direct = assertThrows(OutOfMemoryError.class, () -> capped.allocate(8000));
            assertInstanceOf(LimitExceededException.class, direct.getCause());
        }
        assertEquals(0, limit.snapshot().inUseBytes());
    }

    @Test
    void aStaleRefusalNeverMislabelsALaterExhaustion() {
        assertEquals(0, limit.malloc(1 << 20).address(), "refused, and nobody turned it into an exception");
        DataMemHandler unlimited = DataMemHandler.of("aligned64", AlignedAllocator.of(64));
        assertThrows(OutOfNativeMemoryException.class,
                () -> DataMem.callWith(unlimited, () -> NDArray.empty(DType.INT8, 1L << 50)));
    }

    @Test
    void theReservationIsRolledBackWhenTheUpstreamFails() {
        LimitingAdaptorImpl l = LimitingAdaptorImpl.of(FailureInjectingAdaptorImpl.every(leaf, 1), 1 << 20);
        assertEquals(0, l.malloc(100).address());
        assertEquals(0, l.calloc(10, 10).address());
        assertEquals(0, l.realloc(MemorySegment.NULL, 0, 100).address());
        assertEquals(0, l.snapshot().inUseBytes());
        assertEquals(0, l.snapshot().refusals(), "failures of the upstream are not refusals");
        DataMemHandler h = DataMemHandler.of("failing+limit", l);
        assertThrows(OutOfNativeMemoryException.class, () -> DataMem.callWith(h, () -> NDArray.empty(DType.INT8, 10)));
        MemorySegment p = limit.malloc(1000);
        LimitingAdaptorImpl outer = LimitingAdaptorImpl.of(FailureInjectingAdaptorImpl.nth(limit, 1), 1 << 20);
        assertEquals(0, outer.realloc(p, 1000, 5000).address(), "the upstream failed the realloc");
        assertEquals(0, outer.snapshot().inUseBytes(), "its growth was rolled back");
        assertEquals(1000, limit.snapshot().inUseBytes());
        limit.free(p, 1000);
    }

    @Test
    void shrinkingReleasesAndZeroCapRefusesEverythingButZeroBytes() {
        MemorySegment p = limit.malloc(60000);
        MemorySegment q = limit.realloc(p, 60000, 1000);
        assertEquals(1000, limit.snapshot().inUseBytes());
        limit.free(q, 1000);
        LimitingAdaptorImpl none = LimitingAdaptorImpl.of(leaf, 0);
        MemorySegment z = none.malloc(0);
        assertNotEquals(0, z.address());
        assertEquals(0, none.malloc(1).address());
        none.free(z, 0);
    }

    @Test
    void concurrentRequestsNeverOvershootTheCap() throws Exception {
        AtomicLong highest = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            threads.add(Thread.ofPlatform().start(() -> {
                List<MemorySegment> held = new ArrayList<>();
                for (int i = 0; i < 2000; i++) {
                    MemorySegment p = limit.malloc(4096);
                    if (p.address() != 0) {
                        held.add(p);
                        highest.accumulateAndGet(limit.snapshot().inUseBytes(), Math::max);
                    }
                    if (held.size() > 3 || p.address() == 0 && !held.isEmpty()) {
                        limit.free(held.removeFirst(), 4096);
                    }
                }
                held.forEach(p -> limit.free(p, 4096));
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        assertTrue(highest.get() <= 65536, "in use peaked at " + highest.get());
        assertEquals(0, limit.snapshot().inUseBytes());
        assertEquals(0, leaf.currentBytes());
    }

    @Test
    void anOversizedFreeIsRefusedAndTheLargestCapStillWorks() {
        LimitingAdaptorImpl max = LimitingAdaptorImpl.of(leaf, Long.MAX_VALUE);
        MemorySegment p = max.malloc(100);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> max.free(p, 1000));
        assertTrue(e.getMessage().contains(max.toString()) && e.getMessage().contains("1000")
                && e.getMessage().contains("100 bytes in use"), e.getMessage());
        assertEquals(100, max.snapshot().inUseBytes(), "the refused free changed no accounting");
        assertEquals(1, leaf.allocations() - leaf.frees(), "the refused free never reached the upstream");
        MemorySegment q = max.malloc(1L << 20);
        assertNotEquals(0, q.address(), "a later request is still granted");
        max.free(q, 1L << 20);
        max.free(p, 100);
        assertEquals(0, max.snapshot().inUseBytes());
        assertEquals(0, leaf.currentBytes());
    }

    /** The limit a handler name gives its LimitingAdaptorImpl. */
    private static long limitOf(String bytes) {
        DataMemHandler h = DataMem.createHandler("aligned64+limit=" + bytes);
        return AllocatorStack.find(h, LimitingAdaptorImpl.class).orElseThrow().snapshot().limitBytes();
    }

    @Test
    void byteCountsAcceptBinarySuffixes() {
        assertEquals(100, limitOf("100"));
        assertEquals(64L << 10, limitOf("64k"));
        assertEquals(64L << 20, limitOf("64M"));
        assertEquals(1L << 30, limitOf("1g"));
        assertEquals(1L << 30, limitOf("1GiB"));
        assertEquals(2L << 40, limitOf("2t"));
        for (String bad : List.of("k", "12x", "-1", "1.5g", "99999999999t")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> limitOf(bad), bad);
            assertTrue(e.getMessage().contains("limit=" + bad), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> LimitingAdaptorImpl.of(leaf, -1));
    }

    @Test
    void theCheckedHandlerOfThisClassSeesTheArraysOfTheTest(StatisticsAdaptor stats) {
        try (NDArray a = NDArray.zeros(DType.FLOAT32, 10, 10)) {
            assertEquals(400, stats.figures().currentBytes());
            assertEquals("aligned64+guard+stats+tracking", a.handler().name());
        }
    }
}
