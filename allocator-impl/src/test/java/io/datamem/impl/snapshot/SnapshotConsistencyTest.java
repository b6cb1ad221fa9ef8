package io.datamem.impl.snapshot;

import io.datamem.impl.internal.adaptor.LimitingAdaptorImpl;
import io.datamem.impl.internal.adaptor.TrackingAdaptorImpl;
import io.datamem.impl.internal.adaptor.StatisticsAdaptorImpl;
import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.impl.AllocatorStack;
import io.datamem.impl.adaptor.LimitingAdaptor;
import io.datamem.impl.adaptor.StatisticsAdaptor;
import io.datamem.impl.adaptor.TrackingAdaptor;
import io.datamem.impl.internal.cpu.AlignedAllocator;
import io.datamem.impl.internal.pool.PoolOptions;
import io.datamem.impl.internal.pool.PoolingAllocatorImpl;
import io.datamem.impl.pool.PoolingAllocator;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Snapshots taken while threads allocate, resize and free (many blocks freed by other threads than
 * their allocators, slabs carved, released and their memory reused, the pool trimmed now and then)
 * are each consistent as {@link MemorySnapshot} defines it: no negative figure, a pool class's
 * blocks fill its slabs and its slabs and uncarved slots fill its runs, and no block, run or slab is
 * listed twice or overlaps another.
 */
class SnapshotConsistencyTest {

    private static final int THREADS = 3;
    private static final int ROUNDS = 2000;
    private static final int MOST_BLOCKS_PER_THREAD = 150;

    private record Block(long address, long byteSize) {
    }

    @Test
    void snapshotsTakenWhileThreadsAllocateAreConsistent() throws Exception {
        PoolingAllocator pool = PoolingAllocatorImpl.of(AlignedAllocator.of(64), PoolOptions.DEFAULTS
                .withSlabByteSize(4096).withMaxPooledByteSize(8192).withMaxRetainedByteSize(64 << 10));
        DataMemHandler h = AllocatorStack.on(pool)
                .with(StatisticsAdaptorImpl::of)
                .with(up -> TrackingAdaptorImpl.builder(up).stackTraces(TrackingAdaptorImpl.StackTraces.SAMPLED)
                        .sampleInterval(16).build())
                .with(up -> LimitingAdaptorImpl.of(up, 1L << 40))
                .handler("pool(aligned64):max=8k,slab=4k,retain=64k+stats+tracking+limit=1t");
        DataMemAllocator a = h.allocator();
        ArrayBlockingQueue<Block> handedOver = new ArrayBlockingQueue<>(2 * MOST_BLOCKS_PER_THREAD);
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch started = new CountDownLatch(THREADS);
        long[] operations = new long[THREADS];
        Throwable[] failures = new Throwable[THREADS];
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int i = t;
            workers.add(Thread.ofPlatform().name("snapshot-worker-" + t).start(() -> {
                try {
                    operations[i] = work(a, pool, handedOver, stop, started, 17 + i);
                } catch (Throwable e) {
                    failures[i] = e;
                    started.countDown();
                }
            }));
        }
        started.await();
        long blocksSeen = 0;
        long slabsSeen = 0;
        try {
            for (int round = 0; round < ROUNDS; round++) {
                MemorySnapshot s = MemorySnapshot.take(h);
                check(s);
                MemorySnapshot.Handler hs = s.handlers().getFirst();
                blocksSeen += hs.blocks().size();
                slabsSeen += hs.layers(LayerSnapshot.Pool.class).getFirst().slabs().size();
                if (round % 250 == 0) {
                    assertEquals(s, MemorySnapshot.parse(s.toJson()), "round " + round);
                }
            }
        } finally {
            stop.set(true);
            for (Thread w : workers) {
                w.join(TimeUnit.SECONDS.toMillis(60));
            }
        }
        for (Throwable f : failures) {
            if (f != null) {
                throw new AssertionError("a worker failed", f);
            }
        }
        for (Block b; (b = handedOver.poll()) != null; ) {
            a.free(MemorySegment.ofAddress(b.address()), b.byteSize());
        }
        long allOperations = java.util.Arrays.stream(operations).sum();
        assertTrue(allOperations > ROUNDS, "the threads allocated while the snapshots were taken: " + allOperations);
        assertTrue(blocksSeen > ROUNDS && slabsSeen > ROUNDS, blocksSeen + " blocks, " + slabsSeen + " slabs seen");

        MemorySnapshot end = MemorySnapshot.take(h);
        check(end);
        MemorySnapshot.Handler hs = end.handlers().getFirst();
        assertEquals(List.of(), hs.blocks());
        assertEquals(0, hs.layers(LayerSnapshot.Statistics.class).getFirst().currentBytes());
        assertEquals(0, hs.layers(LayerSnapshot.Limit.class).getFirst().inUseBytes());
        LayerSnapshot.Pool p = hs.layers(LayerSnapshot.Pool.class).getFirst();
        assertEquals(0, p.usedByteSize());
        assertEquals(List.of(), p.largeBlocks());
        assertEquals(p.slabCount(), p.whollyFreeSlabs());
        pool.close();
        assertEquals(List.of(), ((LayerSnapshot.Pool) pool.snapshot()).runs());
    }

    /** One worker: allocates, resizes, frees its own blocks and others', trims now and then. */
    private static long work(DataMemAllocator a, PoolingAllocator pool, ArrayBlockingQueue<Block> handedOver,
                             AtomicBoolean stop, CountDownLatch started, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        List<Block> mine = new ArrayList<>();
        long operations = 0;
        started.countDown();
        while (!stop.get()) {
            operations++;
            int op = r.nextInt(100);
            if (op < 45 && mine.size() < MOST_BLOCKS_PER_THREAD) {
                long size = r.nextInt(20) == 0 ? 8193 + r.nextInt(20000) : r.nextInt(2049);
                MemorySegment p = a.malloc(size);
                assertTrue(p.address() != 0);
                mine.add(new Block(p.address(), size));
            } else if (op < 75 && !mine.isEmpty()) {
                Block b = mine.remove(r.nextInt(mine.size()));
                if (r.nextInt(3) != 0 || !handedOver.offer(b)) {   // else freed by whichever thread takes it
                    a.free(MemorySegment.ofAddress(b.address()), b.byteSize());
                }
            } else if (op < 87) {
                Block b = handedOver.poll();
                if (b != null) {
                    a.free(MemorySegment.ofAddress(b.address()), b.byteSize());
                }
            } else if (op < 99 && !mine.isEmpty()) {
                int i = r.nextInt(mine.size());
                Block b = mine.get(i);
                long size = r.nextInt(3000);
                MemorySegment p = a.realloc(MemorySegment.ofAddress(b.address()), b.byteSize(), size);
                assertTrue(p.address() != 0);
                mine.set(i, new Block(p.address(), size));
            } else if (r.nextInt(20) == 0) {
                pool.trim();
            }
        }
        for (Block b : mine) {
            a.free(MemorySegment.ofAddress(b.address()), b.byteSize());
        }
        return operations;
    }

    /** The consistency {@link MemorySnapshot} promises, checked on every layer. */
    static void check(MemorySnapshot s) {
        for (MemorySnapshot.Handler h : s.handlers()) {
            for (LayerSnapshot layer : h.layers()) {
                switch (layer) {
                    case LayerSnapshot.Tracking t -> checkBlocks(t.blocks());
                    case LayerSnapshot.Statistics st -> {
                        assertTrue(st.currentBytes() >= 0 && st.liveAllocations() >= 0, st.toString());
                        assertTrue(st.peakBytes() >= st.currentBytes(), st.toString());
                        assertEquals(st.allocatedBytes() - st.freedBytes(), st.currentBytes(), st.toString());
                    }
                    case LayerSnapshot.Limit l -> assertTrue(l.inUseBytes() <= l.limitBytes(), l.toString());
                    case LayerSnapshot.Pool p -> checkPool(p);
                    default -> {
                    }
                }
            }
        }
    }

    private static void checkBlocks(List<LiveBlock> blocks) {
        List<LiveBlock> byAddress = new ArrayList<>(blocks);
        byAddress.sort(Comparator.comparingLong(LiveBlock::address));
        Set<Long> sequences = new HashSet<>();
        for (int i = 0; i < byAddress.size(); i++) {
            LiveBlock b = byAddress.get(i);
            assertTrue(sequences.add(b.sequence()), "listed twice: " + b);
            if (i > 0) {
                LiveBlock before = byAddress.get(i - 1);
                assertTrue(before.address() != b.address() && before.end() <= b.address(),
                        "blocks that were never live together: " + before + " and " + b);
            }
        }
    }

    private static void checkPool(LayerSnapshot.Pool p) {
        for (LayerSnapshot.SizeClass c : p.classes()) {   // the records checked their own sums
            List<LayerSnapshot.Slab> slabs = p.slabs().stream().filter(s -> s.classByteSize() == c.byteSize()).toList();
            List<LayerSnapshot.Run> runs = p.runs().stream().filter(r -> r.classByteSize() == c.byteSize()).toList();
            assertEquals(c.slabs(), slabs.size(), c.toString());
            assertEquals(c.usedBlocks(), slabs.stream().mapToLong(LayerSnapshot.Slab::usedBlocks).sum(), c.toString());
            assertEquals(c.whollyFreeSlabs(), slabs.stream().filter(s -> s.usedBlocks() == 0).count(), c.toString());
            assertEquals(c.runs(), runs.size(), c.toString());
            assertEquals(c.runByteSize(), runs.stream().mapToLong(LayerSnapshot.Run::byteSize).sum(), c.toString());
            assertEquals(c.slabs(), runs.stream().mapToLong(LayerSnapshot.Run::slabs).sum(), c.toString());
            assertEquals(c.largestFreeRunByteSize(),
                    runs.stream().mapToLong(LayerSnapshot.Run::largestFreeRunByteSize).max().orElse(0), c.toString());
            assertEquals(c.freeByteSize() + c.uncarvedByteSize(),
                    runs.stream().mapToLong(LayerSnapshot.Run::freeByteSize).sum(), c.toString());
        }
        List<LayerSnapshot.Run> runs = p.runs();
        for (int i = 1; i < runs.size(); i++) {
            assertTrue(runs.get(i - 1).end() <= runs.get(i).address(), "overlapping runs " + runs.get(i - 1) + ", "
                    + runs.get(i));
        }
        List<LayerSnapshot.Slab> slabs = p.slabs();
        int run = 0;
        for (int i = 0; i < slabs.size(); i++) {
            LayerSnapshot.Slab s = slabs.get(i);
            if (i > 0) {
                assertTrue(slabs.get(i - 1).end() <= s.address(), "overlapping slabs " + slabs.get(i - 1) + ", " + s);
            }
            while (run < runs.size() && runs.get(run).end() <= s.address()) {
                run++;
            }
            assertTrue(run < runs.size() && runs.get(run).address() <= s.address() && s.end() <= runs.get(run).end()
                    && runs.get(run).classByteSize() == s.classByteSize(), "a slab outside its runs: " + s);
        }
        List<LayerSnapshot.LargeBlock> large = p.largeBlocks();
        for (int i = 1; i < large.size(); i++) {
            assertTrue(large.get(i - 1).address() + large.get(i - 1).byteSize() <= large.get(i).address(),
                    "overlapping large blocks " + large.get(i - 1) + ", " + large.get(i));
        }
    }
}
