package io.datamem.impl.adaptor;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.impl.snapshot.LayerSnapshot;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The whole-life figures read while threads churn are those of one instant: the bytes and blocks in
 * use never negative, never above what the threads can hold at once, and the peak never above that.
 */
class StatisticsReadOutTest {

    private static final long BLOCK = 64 << 10;
    private static final int READS = 5_000;

    private static void check(LayerSnapshot.Statistics f, long maxBytes, long maxBlocks, int read) {
        if (f.currentBytes() < 0 || f.currentBytes() > maxBytes || f.peakBytes() > maxBytes
                || f.liveAllocations() < 0 || f.liveAllocations() > maxBlocks
                || f.currentBytes() != f.liveAllocations() * BLOCK) {
            fail("read " + read + ": " + f + " (expected: 0 to " + maxBytes + " bytes in use and at peak, 0 to "
                    + maxBlocks + " blocks of " + BLOCK + " bytes)");
        }
    }

    @Test
    void sixThreadsChurningTheirOwnBlocks() throws InterruptedException {
        int threads = 6;
        StatisticsAdaptor stats = (StatisticsAdaptor) DataMem.createHandler("default_allocator+stats").allocator();
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            workers.add(Thread.ofPlatform().start(() -> {
                while (!stop.get()) {
                    MemorySegment p = stats.malloc(BLOCK);
                    stats.free(p, BLOCK);
                }
            }));
        }
        try {
            for (int i = 0; i < READS; i++) {
                check(stats.figures(), threads * BLOCK, threads, i);
                long current = ((io.datamem.impl.internal.adaptor.StatisticsAdaptorImpl) stats).currentBytes();
                assertTrue(current >= 0 && current <= threads * BLOCK, "currentBytes " + current);
            }
        } finally {
            stop.set(true);
            for (Thread w : workers) {
                w.join();
            }
        }
        LayerSnapshot.Statistics end = stats.figures();
        assertEquals(0, end.currentBytes());
        assertEquals(end.allocations(), end.frees());
        assertTrue(end.peakBytes() <= threads * BLOCK, end.toString());
    }

    @Test
    void blocksFreedByAnotherThreadThanTheirs() throws InterruptedException {
        // Producers allocate, consumers free what they take from a queue of 4: at most
        // producers + 4 + consumers blocks exist at once.
        int producers = 3;
        int consumers = 3;
        int capacity = 4;
        long maxBlocks = producers + capacity + consumers;
        StatisticsAdaptor stats = (StatisticsAdaptor) DataMem.createHandler("default_allocator+stats").allocator();
        BlockingQueue<MemorySegment> queue = new ArrayBlockingQueue<>(capacity);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> error = new AtomicReference<>();
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < producers; t++) {
            workers.add(Thread.ofPlatform().start(() -> {
                try {
                    while (!stop.get()) {
                        MemorySegment p = stats.malloc(BLOCK);
                        if (!queue.offer(p, 1, TimeUnit.SECONDS)) {
                            stats.free(p, BLOCK);
                        }
                    }
                } catch (Throwable e) {
                    error.set(e);
                }
            }));
        }
        for (int t = 0; t < consumers; t++) {
            workers.add(Thread.ofPlatform().start(() -> {
                try {
                    while (!stop.get() || !queue.isEmpty()) {
                        MemorySegment p = queue.poll(10, TimeUnit.MILLISECONDS);
                        if (p != null) {
                            stats.free(p, BLOCK);
                        }
                    }
                } catch (Throwable e) {
                    error.set(e);
                }
            }));
        }
        try {
            for (int i = 0; i < READS; i++) {
                check(stats.figures(), maxBlocks * BLOCK, maxBlocks, i);
            }
        } finally {
            stop.set(true);
            for (Thread w : workers) {
                w.join();
            }
        }
        MemorySegment p;
        while ((p = queue.poll()) != null) {
            stats.free(p, BLOCK);
        }
        assertEquals(null, error.get());
        LayerSnapshot.Statistics end = stats.figures();
        assertEquals(0, end.currentBytes(), end.toString());
        assertTrue(end.peakBytes() <= maxBlocks * BLOCK, end.toString());
    }
}
