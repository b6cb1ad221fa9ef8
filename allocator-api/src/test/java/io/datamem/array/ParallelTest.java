package io.datamem.array;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.testing.CountingAllocator;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinWorkerThread;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The parallel part of a compute block keeps the block's handler when it is handed over (a pool of
 * bound workers, {@link Parallel}, bound executors, virtual threads), and the plain common pool is
 * what the documentation says: its workers see the process default.
 */
class ParallelTest {

    private final CountingAllocator counting = new CountingAllocator(DataMem.builtinDefault().allocator());
    private final DataMemHandler h = DataMemHandler.of("parallel-block", counting);

    /** One array made in the parallel part: its handler and the thread that made it. */
    private record Made(String handler, Thread thread) {
        static Made of(DType dtype) {
            try (NDArray a = NDArray.zeros(dtype, 16)) {
                return new Made(a.handler().name(), Thread.currentThread());
            }
        }
    }

    @Test
    void aParallelStreamInABoundPoolCreatesEveryArrayThroughTheBlocksHandler() {
        List<Made> made = DataMem.callWith(h, () -> {
            try (ForkJoinPool pool = DataMem.newForkJoinPool(DataMem.current(), 4)) {
                List<Made> out = pool.submit(() -> IntStream.range(0, 400).parallel()
                        .mapToObj(i -> Made.of(DType.FLOAT64)).toList()).join();
                for (Made m : out) {
                    ForkJoinWorkerThread w = assertInstanceOf(ForkJoinWorkerThread.class, m.thread());
                    assertSame(pool, w.getPool(), "the stream ran in the bound pool");
                }
                return out;
            }
        });
        assertEquals(400, made.size());
        made.forEach(m -> assertEquals("parallel-block", m.handler(), "made on " + m.thread().getName()));
        assertEquals(0, counting.liveBlocks());
    }

    @Test
    void theBoundPoolsHandlerIsItsOwnWhateverTheSubmitterHasBound() throws Exception {
        try (ForkJoinPool pool = DataMem.newForkJoinPool(h, 2)) {
            assertEquals("parallel-block", pool.submit(() -> DataMem.current().name()).get());
            DataMemHandler other = DataMemHandler.of("other", DataMem.builtinDefault().allocator());
            assertEquals("parallel-block", DataMem.callWith(other, () -> pool.submit(() -> Made.of(DType.INT8)).get())
                    .handler());
            assertEquals("other", pool.submit(() -> DataMem.callWith(other, () -> Made.of(DType.INT8))).get().handler(),
                    "an inner binding on a worker still wins");
        }
        assertThrows(IllegalArgumentException.class, () -> DataMem.newForkJoinPool(h, 0));
        assertThrows(NullPointerException.class, () -> DataMem.newForkJoinPool(null, 1));
    }

    @Test
    void aPlainParallelStreamGivesTheBlocksHandlerOnlyToTheCallingThread() throws Exception {
        Assumptions.assumeTrue(ForkJoinPool.getCommonPoolParallelism() > 0, "skipped: the common pool has no workers");
        Thread caller = Thread.currentThread();
        List<Made> made = DataMem.callWith(h, () -> IntStream.range(0, 2000).parallel()
                .mapToObj(i -> Made.of(DType.INT32)).toList());
        for (Made m : made) {
            if (m.thread() == caller) {
                assertEquals("parallel-block", m.handler(), "the binding thread sees its binding");
            } else {
                ForkJoinWorkerThread w = assertInstanceOf(ForkJoinWorkerThread.class, m.thread());
                assertSame(ForkJoinPool.commonPool(), w.getPool());
                assertEquals("default_allocator", m.handler(), "a common-pool worker sees the process default");
            }
        }
        // Deterministically on a worker: a task handed to the common pool while the caller waits.
        AtomicReference<Made> onWorker = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(1);
        DataMem.runWith(h, () -> ForkJoinPool.commonPool().execute(() -> {
            onWorker.set(Made.of(DType.INT8));
            done.countDown();
        }));
        assertTrue(done.await(60, TimeUnit.SECONDS));
        assertInstanceOf(ForkJoinWorkerThread.class, onWorker.get().thread());
        assertEquals("default_allocator", onWorker.get().handler());
    }

    @Test
    void parallelLoopsOverRangesCarryTheCallersHandler() {
        Map<Long, String> seen = new ConcurrentHashMap<>();
        DataMem.runWith(h, () -> Parallel.forRange(-500, 1500, i -> seen.put(i, Made.of(DType.INT16).handler())));
        assertEquals(2000, seen.size());
        assertTrue(seen.values().stream().allMatch("parallel-block"::equals), seen.values().toString());
        seen.clear();
        Parallel.forRange(0, 300, i -> seen.put(i, Made.of(DType.INT16).handler()));
        assertTrue(seen.values().stream().allMatch("default_allocator"::equals), "nothing bound, nothing carried");
        Parallel.forRange(5, 5, i -> {
            throw new AssertionError("an empty range runs nothing");
        });
        assertThrows(IllegalArgumentException.class, () -> Parallel.forRange(5, 4, i -> { }));
        assertThrows(IllegalArgumentException.class, () -> Parallel.forRange(Long.MIN_VALUE, Long.MAX_VALUE, i -> { }));
        assertThrows(NullPointerException.class, () -> Parallel.forRange(0, 1, null));
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> Parallel.forRange(0, 1000, i -> {
            if (i == 777) {
                throw new IllegalStateException("boom at " + i);
            }
        }));
        assertTrue(e.getMessage().contains("boom at 777")
                || (e.getCause() != null && e.getCause().getMessage().contains("boom at 777")), e.toString());
        assertEquals(0, counting.liveBlocks());
    }

    @Test
    void parallelLoopsInABoundPoolRunThere() {
        try (ForkJoinPool pool = DataMem.newForkJoinPool(h, 3)) {
            List<Made> made = new ArrayList<>(pool.submit(() -> {
                List<Made> out = java.util.Collections.synchronizedList(new ArrayList<>());
                Parallel.forRange(0, 200, i -> out.add(Made.of(DType.INT8)));
                return out;
            }).join());
            assertEquals(200, made.size());
            made.forEach(m -> assertSame(pool, ((ForkJoinWorkerThread) m.thread()).getPool()));
            made.forEach(m -> assertEquals("parallel-block", m.handler()));
        }
    }

    @Test
    void parallelLoopsOverRowsSeeEveryRowAndCarryTheHandler() {
        Map<Long, String> scratch = new ConcurrentHashMap<>();
        try (NDArray m = DataMem.callWith(h, () -> NDArray.zeros(DType.FLOAT64, 64, 8))) {
            DataMem.runWith(h, () -> Parallel.forEachRow(m, (row, i) -> {
                assertEquals(1, row.ndim());
                row.fill((double) i);
                scratch.put(i, Made.of(DType.FLOAT64).handler());
            }));
            for (int i = 0; i < 64; i++) {
                assertEquals(i, m.getDouble(i, 7));
            }
            assertEquals(64, scratch.size());
            assertTrue(scratch.values().stream().allMatch("parallel-block"::equals));
            try (NDArray scalar = NDArray.zeros(DType.FLOAT64)) {
                assertThrows(IllegalArgumentException.class, () -> Parallel.forEachRow(scalar, (r, i) -> { }));
            }
            try (NDArray empty = NDArray.zeros(DType.FLOAT64, 0, 3)) {
                Parallel.forEachRow(empty, (r, i) -> {
                    throw new AssertionError("no rows");
                });
            }
        }
        NDArray closed = NDArray.zeros(DType.FLOAT64, 4);
        closed.close();
        assertThrows(IllegalStateException.class, () -> Parallel.forEachRow(closed, (r, i) -> { }));
        assertEquals(0, counting.liveBlocks());
    }

    @Test
    void executorsAndVirtualThreadsGetTheHandlerWhenHandedIt() throws Exception {
        ExecutorService fixed = Executors.newFixedThreadPool(3, DataMem.threadFactory(h, Executors.defaultThreadFactory()));
        try {
            List<Future<Made>> fs = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                fs.add(fixed.submit(() -> Made.of(DType.INT64)));
            }
            for (Future<Made> f : fs) {
                assertEquals("parallel-block", f.get().handler());
            }
        } finally {
            fixed.shutdownNow();
        }
        try (ExecutorService virtual = DataMem.newVirtualThreadPerTaskExecutor(h)) {
            Made m = virtual.submit(() -> Made.of(DType.INT64)).get();
            assertTrue(m.thread().isVirtual());
            assertEquals("parallel-block", m.handler());
        }
        // Inside a block: a propagating executor and a propagated virtual thread carry it; a plain one does not.
        ExecutorService plain = Executors.newFixedThreadPool(2);
        try {
            DataMem.runWith(h, () -> {
                try {
                    CountDownLatch latch = new CountDownLatch(20);
                    Map<Integer, String> byTask = new ConcurrentHashMap<>();
                    for (int i = 0; i < 20; i++) {
                        int k = i;
                        DataMem.propagating(plain).execute(() -> {
                            byTask.put(k, Made.of(DType.INT8).handler());
                            latch.countDown();
                        });
                    }
                    assertTrue(latch.await(60, TimeUnit.SECONDS));
                    assertTrue(byTask.values().stream().allMatch("parallel-block"::equals));
                    assertEquals("default_allocator", plain.submit(() -> Made.of(DType.INT8)).get().handler());
                    AtomicReference<Made> v = new AtomicReference<>();
                    Thread.ofVirtual().start(DataMem.propagate(() -> v.set(Made.of(DType.INT8)))).join();
                    assertEquals("parallel-block", v.get().handler());
                    Thread.ofVirtual().start(() -> v.set(Made.of(DType.INT8))).join();
                    assertEquals("default_allocator", v.get().handler(), "a plain virtual thread sees the default");
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });
        } finally {
            plain.shutdownNow();
        }
        assertThrows(NullPointerException.class, () -> DataMem.threadFactory(null, Thread.ofVirtual().factory()));
        assertThrows(NullPointerException.class, () -> DataMem.threadFactory(h, null));
        assertThrows(NullPointerException.class, () -> DataMem.newVirtualThreadPerTaskExecutor(null));
        assertThrows(NullPointerException.class, () -> DataMem.forkJoinWorkerThreadFactory(null));
        assertFalse(DataMem.isScoped());
        assertEquals(0, counting.liveBlocks());
    }
}
