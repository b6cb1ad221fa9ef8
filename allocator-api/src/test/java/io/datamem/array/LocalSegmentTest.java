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
 * Element access on the creating thread goes through a segment confined to it (cheap to close);
 * other threads and raw segments use a shared one. A block is never freed while the creating
 * thread's local segment can reach it: closed elsewhere, it waits for that thread (or its end).
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
    void aLeakedLocallyUsedArrayIsFreedOnceItsSegmentIsUnreachable() throws Exception {
        long leaks = NDArray.leakCount();
        for (int i = 0; i < 3; i++) {
            NDArray a = zeros(32);
            a.setDouble(1, 31);
        }
        for (int i = 0; i < 200 && counting.liveBlocks() > 0; i++) {
            System.gc();
            Thread.sleep(20);
        }
        assertEquals(0, counting.liveBlocks());
        assertTrue(NDArray.leakCount() >= leaks + 3);
        assertFalse(ArrayMemory.retiredCount() > 0);
    }

    private static void assertArrayEquals(double[] expected, double[] actual) {
        org.junit.jupiter.api.Assertions.assertArrayEquals(expected, actual);
    }
}
