package io.datamem.array;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.testing.CountingAllocator;
import io.datamem.testing.Nep49SampleAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.LongStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Element access on the creating thread goes through its local segment (no arena: nothing to make
 * or close); other threads and raw segments use a shared one. A block is never freed while the
 * creating thread may be inside an access through its local segment: closed (or leaked) elsewhere,
 * it waits for that thread to free it outside any access (or for its end).
 */
class LocalSegmentTest {

    private final Nep49SampleAllocator sample = new Nep49SampleAllocator();
    private final CountingAllocator counting = new CountingAllocator(sample);
    private final DataMemHandler h = DataMemHandler.of("local-test", counting);

    @AfterEach
    void nothingLeaked() {
        NDArray.reclaim();
        assertEquals(List.of(), sample.violations());
        assertEquals(0, counting.liveBlocks());
    }

    private NDArray zeros(long... shape) {
        return DataMem.callWith(h, () -> NDArray.zeros(DType.FLOAT64, shape));
    }

    private static <T> T on(Thread thread, AtomicReference<T> result) throws InterruptedException {
        thread.start();
        thread.join();
        return result.get();
    }

    @Test
    void closedOnTheCreatingThreadItIsFreedAtOnce() {
        NDArray a = zeros(8);
        a.setDouble(2, 3);
        assertEquals(2, a.getDouble(3));
        a.close();
        assertEquals(0, counting.liveBlocks(), "no wait, no shared arena");
        assertThrows(IllegalStateException.class, () -> a.getDouble(3));
    }

    @Test
    void closedByAnotherThreadItWaitsForTheCreatorAndIsRefusedMeanwhile() throws Exception {
        NDArray a = zeros(8);
        NDArray view = a.reshape(2, 4);
        a.setDouble(1, 0);                       // this thread's local segment now reaches the block
        view.setDouble(5, 1, 1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread closer = new Thread(() -> {
            try {
                a.close();
            } catch (Throwable t) {
                failure.set(t);
            }
        });
        on(closer, failure);
        assertEquals(null, failure.get());
        assertTrue(a.isClosed() && view.isClosed());
        assertEquals(1, counting.liveBlocks(), "retired to this thread, not freed under its segment");
        assertEquals(1, ArrayMemory.retiredCount());
        assertThrows(IllegalStateException.class, () -> a.getDouble(0));
        assertThrows(IllegalStateException.class, () -> view.setDouble(1, 0, 0));
        assertThrows(IllegalStateException.class, a::segment);
        NDArray next = zeros(4);                 // creating an array frees what waits for this thread
        assertEquals(1, counting.liveBlocks());
        assertEquals(0, ArrayMemory.retiredCount());
        next.close();
    }

    @Test
    void whatWaitsForAnEndedThreadIsFreedByWhoeverComesNext() throws Exception {
        AtomicReference<NDArray> made = new AtomicReference<>();
        Thread creator = new Thread(() -> {
            NDArray a = zeros(16);
            a.setDouble(7, 15);
            made.set(a);
        });
        on(creator, made);
        NDArray a = made.get();
        a.close();                               // the creator has ended: nothing can use its segment
        assertEquals(0, counting.liveBlocks());
        Thread[] holder = new Thread[1];
        AtomicReference<NDArray> alive = new AtomicReference<>();
        Object gate = new Object();
        holder[0] = new Thread(() -> {
            NDArray b = zeros(16);
            b.setDouble(1, 0);
            alive.set(b);
            synchronized (gate) {
                try {
                    gate.wait(10_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        holder[0].start();
        while (alive.get() == null) {
            Thread.onSpinWait();
        }
        alive.get().close();                     // its creator is alive and blocked: the block waits
        assertEquals(1, counting.liveBlocks());
        synchronized (gate) {
            gate.notifyAll();
        }
        holder[0].join();
        assertEquals(0, NDArray.reclaim(), "the creator ended: freed here");
        assertEquals(0, counting.liveBlocks());
    }

    @Test
    void otherThreadsShareTheArrayAndTheCreatorClosesEverything() throws Exception {
        NDArray a = zeros(1000);
        a.setDouble(-1, 0);                      // local on this thread
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            pool.submit(() -> LongStream.range(1, 1000).parallel().forEach(i -> a.setDouble(i, i))).get();
            for (int t = 0; t < 4; t++) {
                pool.submit(() -> assertEquals(999, a.getDouble(999))).get();
            }
        } finally {
            pool.shutdown();
            assertTrue(pool.awaitTermination(1, TimeUnit.MINUTES));
        }
        assertEquals(-1, a.getDouble(0));
        assertEquals(500, a.getDouble(500));
        MemorySegment raw = a.segment();         // the shared segment, usable anywhere
        a.close();
        assertEquals(0, counting.liveBlocks());
        assertThrows(IllegalStateException.class, () -> raw.get(ValueLayout.JAVA_DOUBLE, 0));
    }

    @Test
    void resizedByAnotherThreadTheDataMovesAndTheOldBlockWaits() throws Exception {
        NDArray a = zeros(4);
        NDArray view = a.reshape(2, 2);
        for (int i = 0; i < 4; i++) {
            a.setDouble(i + 1, i);
        }
        AtomicReference<Throwable> failure = new AtomicReference<>();
        on(new Thread(() -> {
            try {
                a.resize(6);
            } catch (Throwable t) {
                failure.set(t);
            }
        }), failure);
        assertEquals(null, failure.get());
        assertEquals(2, counting.liveBlocks(), "the old block waits for this thread's local segment");
        assertArrayEquals(new double[] {1, 2, 3, 4, 0, 0}, a.toDoubleArray());
        assertThrows(IllegalStateException.class, () -> view.getDouble(0, 0));
        assertEquals(0, NDArray.reclaim());
        assertEquals(1, counting.liveBlocks());
        a.close();
    }

    @Test
    void aLeakedLocallyUsedArrayIsFreedByItsThreadOutsideAnyAccess() throws Exception {
        long leaks = NDArray.leakCount();
        for (int i = 0; i < 3; i++) {
            NDArray a = zeros(32);
            a.setDouble(1, 31);
        }
        // The reaper finds the leaks, but this thread may still have been inside an access through their
        // local segments: it hands the blocks to this thread, which frees them outside any access
        for (int i = 0; i < 200 && ArrayMemory.retiredCount() < 3; i++) {
            System.gc();
            Thread.sleep(20);
        }
        assertTrue(NDArray.leakCount() >= leaks + 3);
        assertEquals(3, counting.liveBlocks(), "retired to this thread, not freed by the reaper");
        assertEquals(3, ArrayMemory.retiredCount());
        NDArray.empty(DType.FLOAT64, 1).close();   // creating (or closing) an array frees them
        assertEquals(0, counting.liveBlocks());
        assertEquals(0, ArrayMemory.retiredCount());
    }

    /**
     * The local segment has no arena: the creator's accessors check the generation and then access, two
     * steps another thread's close can fall between. Such a close must not free the block: here the
     * allocator poisons every block it frees (NaN bits) and the creator checks every value it reads back,
     * for thousands of rounds with the close at a different moment each time (a stress: the window is a
     * few instructions wide; the next test holds it open).
     */
    @Test
    void aCloseRacingTheCreatorsAccessesNeverFreesUnderThem() throws Exception {
        DataMemHandler poisoning = poisoning();
        int rounds = 3_000;
        int reads = 0;
        ExecutorService closer = Executors.newSingleThreadExecutor();
        try {
            for (int round = 0; round < rounds; round++) {
                NDArray a = DataMem.callWith(poisoning, () -> NDArray.zeros(DType.FLOAT64, 64));
                NDArray row = a.reshape(8, 8);
                a.setDouble(0, 0);                      // this thread's local segment reaches the block
                int delay = round % 64;
                var closed = closer.submit(() -> {
                    for (int spin = 0; spin < delay * 16; spin++) {
                        Thread.onSpinWait();
                    }
                    a.close();
                });
                try {
                    for (long i = 0; ; i++) {
                        int k = (int) (i & 63);
                        a.setDouble(i, k);
                        double back = row.getDouble(k >> 3, k & 7);
                        assertEquals(i, back, "round " + round + ": read back another value (freed memory?)");
                        reads++;
                    }
                } catch (IllegalStateException expected) {
                    // the close was seen
                }
                closed.get();
                NDArray.reclaim();
            }
        } finally {
            closer.shutdown();
            assertTrue(closer.awaitTermination(10, TimeUnit.SECONDS));
        }
        assertTrue(reads > rounds, "accesses raced the closes: " + reads);
        assertEquals(0, counting.liveBlocks());
    }

    /**
     * The window above made wide: an accessor that passed its checks holds the local segment (what
     * {@code hostData()} returns it) when another thread closes the array. The block must still hold
     * what was written, not the poison of a freed block, until this thread frees it.
     */
    @Test
    void anAccessStalledBetweenItsCheckAndItsReadStillReadsTheBlock() throws Exception {
        DataMemHandler poisoning = poisoning();
        NDArray a = DataMem.callWith(poisoning, () -> NDArray.zeros(DType.FLOAT64, 8));
        a.setDouble(42, 3);
        MemorySegment held = a.hostData();      // checked and about to read
        AtomicReference<Throwable> failure = new AtomicReference<>();
        on(new Thread(() -> {
            try {
                a.close();
            } catch (Throwable t) {
                failure.set(t);
            }
        }), failure);
        assertEquals(null, failure.get());
        assertEquals(42, held.get(ValueLayout.JAVA_DOUBLE, 24), "the block was freed under an access");
        assertThrows(IllegalStateException.class, () -> a.getDouble(3), "the next access sees the close");
        assertEquals(1, counting.liveBlocks());
        assertEquals(0, NDArray.reclaim());
        assertEquals(0, counting.liveBlocks());
    }

    /**
     * Two closes, or a close and a resize, race from two other threads while this one may hold the
     * local segment: one close claims the memory, the block is freed exactly once (the sample
     * allocator reports a double or wrong-size free), and a resize either completes first (the close
     * then frees the new block) or is refused as closed.
     */
    @Test
    void closesAndResizesRacingEachOtherFreeEachBlockOnce() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < 2_000; round++) {
                NDArray a = zeros(8);
                if (round % 2 == 0) {
                    a.setDouble(round, 7);             // this thread's local segment reaches the block
                }
                boolean resize = round % 3 == 0;
                java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(2);
                var first = pool.submit(() -> {
                    start.await();
                    a.close();
                    return null;
                });
                var second = pool.submit(() -> {
                    start.await();
                    try {
                        if (resize) {
                            a.resize(16);
                        } else {
                            a.close();
                        }
                    } catch (IllegalStateException refused) {
                        assertTrue(refused.getMessage().contains("closed"), refused.getMessage());
                    }
                    return null;
                });
                first.get();
                second.get();
                assertTrue(a.isClosed());
                assertThrows(IllegalStateException.class, () -> a.getDouble(7));
                NDArray.reclaim();
                assertEquals(0, counting.liveBlocks(), "round " + round);
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(List.of(), sample.violations());
    }

    @Test
    void aLeakedConfinedArrayOfALiveThreadIsClosedAndFreedByThatThread() throws Exception {
        long leaks = NDArray.leakCount();
        MemorySegment segment = leakConfined();
        for (int i = 0; i < 200 && ArrayMemory.retiredCount() == 0; i++) {
            System.gc();
            Thread.sleep(20);
        }
        assertEquals(leaks + 1, NDArray.leakCount());
        assertEquals(1, counting.liveBlocks(), "retired to this thread, which may be inside an access");
        assertEquals(7, segment.get(ValueLayout.JAVA_DOUBLE, 0), "the confined arena is still open");
        assertEquals(0, NDArray.reclaim());
        assertEquals(0, counting.liveBlocks());
        assertThrows(IllegalStateException.class, () -> segment.get(ValueLayout.JAVA_DOUBLE, 0),
                "this thread closed the arena before freeing the block");
    }

    private MemorySegment leakConfined() {
        NDArray a = zeros(4).confined();
        a.setDouble(7, 0);
        return a.segment();
    }

    /** A handler whose blocks are filled with NaN bits before they go back, so a read of freed memory shows. */
    private DataMemHandler poisoning() {
        return DataMemHandler.of("poisoning", new ArrayLifecycleSafetyTest.Watching(counting,
                (address, byteSize) -> MemorySegment.ofAddress(address).reinterpret(byteSize).fill((byte) 0xFF)));
    }

    private static void assertArrayEquals(double[] expected, double[] actual) {
        org.junit.jupiter.api.Assertions.assertArrayEquals(expected, actual);
    }
}
