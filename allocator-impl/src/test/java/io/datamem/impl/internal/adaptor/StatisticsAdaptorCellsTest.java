package io.datamem.impl.internal.adaptor;

import io.datamem.impl.internal.adaptor.StatisticsAdaptorImpl;
import io.datamem.impl.snapshot.LayerSnapshot;
import io.datamem.DataMem;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLongArray;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The per-thread cells of {@link StatisticsAdaptorImpl}: figures exact across platform and virtual
 * threads (cross-thread frees included), the exact peak of one thread, cells of ended threads
 * folded in, and no cell per virtual thread.
 */
class StatisticsAdaptorCellsTest {

    private final StatisticsAdaptorImpl stats = StatisticsAdaptorImpl.of(DataMem.builtinDefault().allocator());

    /** What the test itself counted, added up from every thread. */
    private static final class Expected {
        final AtomicLongArray v = new AtomicLongArray(6 + StatisticsAdaptorImpl.HISTOGRAM_BUCKETS);
        static final int ALLOCATED = 0, FREED = 1, FREES = 2, REALLOCS = 3, TOTAL = 4, MAX = 5, H = 6;

        void allocation(long size) {
            v.addAndGet(ALLOCATED, size);
            v.addAndGet(TOTAL, size);
            v.accumulateAndGet(MAX, size, Math::max);
            v.incrementAndGet(H + StatisticsAdaptorImpl.bucketOf(size));
        }
    }

    private record Block(MemorySegment p, long size) {
    }

    private void work(long seed, int steps, Expected e, ConcurrentLinkedQueue<Block> shared) {
        SplittableRandom random = new SplittableRandom(seed);
        List<Block> mine = new ArrayList<>();
        for (int i = 0; i < steps; i++) {
            int what = random.nextInt(10);
            if (what < 4 || mine.isEmpty()) {
                long size = random.nextLong(3000);
                MemorySegment p = random.nextBoolean() ? stats.malloc(size) : stats.calloc(size, 1);
                e.allocation(size);
                mine.add(new Block(p, size));
            } else if (what < 6) {
                Block b = mine.remove(random.nextInt(mine.size()));
                long size = random.nextLong(3000);
                MemorySegment q = stats.realloc(b.p(), b.size(), size);
                e.v.incrementAndGet(Expected.REALLOCS);
                if (size > b.size()) {
                    e.v.addAndGet(Expected.ALLOCATED, size - b.size());
                } else {
                    e.v.addAndGet(Expected.FREED, b.size() - size);
                }
                mine.add(new Block(q, size));
            } else if (what < 7) {
                shared.add(mine.remove(random.nextInt(mine.size())));   // freed by some other thread
            } else {
                Block b = what < 8 && shared.peek() != null ? shared.poll() : null;
                if (b == null) {
                    b = mine.remove(random.nextInt(mine.size()));
                }
                stats.free(b.p(), b.size());
                e.v.incrementAndGet(Expected.FREES);
                e.v.addAndGet(Expected.FREED, b.size());
            }
        }
        shared.addAll(mine);
    }

    private void assertFigures(Expected e, long liveBytes, String when) {
        long allocations = 0;
        for (int i = 0; i < StatisticsAdaptorImpl.HISTOGRAM_BUCKETS; i++) {
            assertEquals(e.v.get(Expected.H + i), stats.histogram().count(i), when + ": bucket " + i);
            allocations += e.v.get(Expected.H + i);
        }
        LayerSnapshot.Statistics f = stats.figures();
        assertEquals(liveBytes, f.currentBytes(), when);
        assertEquals(e.v.get(Expected.ALLOCATED), f.allocatedBytes(), when);
        assertEquals(e.v.get(Expected.FREED), f.freedBytes(), when);
        assertEquals(allocations, f.allocations(), when);
        assertEquals(e.v.get(Expected.FREES), f.frees(), when);
        assertEquals(e.v.get(Expected.REALLOCS), f.reallocations(), when);
        assertEquals(0, f.failures(), when);
        assertEquals(e.v.get(Expected.TOTAL), stats.totalAllocationBytes(), when);
        assertEquals(e.v.get(Expected.MAX), stats.largestAllocationBytes(), when);
        assertTrue(f.peakBytes() >= f.currentBytes(), when);
    }

    @Test
    void figuresAreExactAcrossPlatformAndVirtualThreadsFreeingEachOthersBlocks() throws Exception {
        Expected e = new Expected();
        ConcurrentLinkedQueue<Block> shared = new ConcurrentLinkedQueue<>();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 8 + 64; t++) {
            long seed = t;
            Runnable r = () -> {
                try {
                    start.await();
                } catch (InterruptedException x) {
                    throw new AssertionError(x);
                }
                work(seed, 2000, e, shared);
            };
            threads.add(t < 8 ? Thread.ofPlatform().start(r) : Thread.ofVirtual().start(r));
        }
        start.countDown();
        for (Thread t : threads) {
            t.join();
        }
        long live = shared.stream().mapToLong(Block::size).sum();
        assertFigures(e, live, "after the threads");
        assertTrue(stats.peakBytes() >= live);
        for (Block b : shared) {
            stats.free(b.p(), b.size());
            e.v.incrementAndGet(Expected.FREES);
            e.v.addAndGet(Expected.FREED, b.size());
        }
        assertFigures(e, 0, "after freeing the rest on this thread");
    }

    @Test
    void onOneThreadThePeakIsExact() {
        SplittableRandom random = new SplittableRandom(42);
        List<Block> live = new ArrayList<>();
        long current = 0;
        long peak = 0;
        for (int i = 0; i < 20_000; i++) {
            int what = random.nextInt(3);
            if (what == 0 || live.isEmpty()) {
                long size = random.nextLong(5000);
                live.add(new Block(stats.malloc(size), size));
                current += size;
            } else if (what == 1) {
                Block b = live.remove(random.nextInt(live.size()));
                long size = random.nextLong(5000);
                live.add(new Block(stats.realloc(b.p(), b.size(), size), size));
                current += size - b.size();
            } else {
                Block b = live.remove(random.nextInt(live.size()));
                stats.free(b.p(), b.size());
                current -= b.size();
            }
            peak = Math.max(peak, current);
            if (i % 1000 == 0) {
                assertEquals(peak, stats.peakBytes(), "step " + i);
                assertEquals(current, stats.currentBytes(), "step " + i);
            }
        }
        assertEquals(peak, stats.figures().peakBytes());
        for (Block b : live) {
            stats.free(b.p(), b.size());
        }
        assertEquals(peak, stats.peakBytes(), "the peak stays");
        assertEquals(0, stats.currentBytes());
    }

    @Test
    void cellsOfEndedThreadsAreFoldedInAndVirtualThreadsShareStripes() throws Exception {
        int baseline = stats.cellCount();
        ConcurrentLinkedQueue<MemorySegment> keep = new ConcurrentLinkedQueue<>();
        for (int t = 0; t < 100; t++) {
            Thread thread = Thread.ofPlatform().start(() -> {
                keep.add(stats.malloc(100));
                stats.free(stats.malloc(50), 50);
            });
            thread.join();
        }
        assertEquals(baseline, stats.cellCount(), "every ended thread's cell folded in");
        assertEquals(100 * 100, stats.currentBytes(), "with its figures");
        assertEquals(200, stats.allocations());
        assertEquals(100, stats.frees());
        assertEquals(100 * 100 + 50, stats.peakBytes(), "threads took turns: each sync saw the others' kept blocks");
        List<Thread> virtual = new ArrayList<>();
        for (int t = 0; t < 10_000; t++) {
            virtual.add(Thread.ofVirtual().start(() -> stats.free(stats.malloc(8), 8)));
        }
        for (Thread t : virtual) {
            t.join();
        }
        assertTrue(stats.cellCount() <= baseline + 64,
                "10000 virtual threads, " + stats.cellCount() + " cells: stripes, not one each");
        assertEquals(10_200, stats.allocations());
        assertEquals(10_100, stats.frees());
        for (MemorySegment p : keep) {
            stats.free(p, 100);
        }
        assertEquals(0, stats.currentBytes());
    }
}
