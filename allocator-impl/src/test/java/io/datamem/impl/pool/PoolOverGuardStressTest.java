package io.datamem.impl.pool;

import io.datamem.impl.snapshot.LayerSnapshot;
import io.datamem.impl.internal.adaptor.GuardAdaptorImpl;
import io.datamem.impl.internal.adaptor.StatisticsAdaptorImpl;
import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.impl.AllocatorStack;
import io.datamem.impl.adaptor.GuardAdaptor;
import io.datamem.impl.adaptor.StatisticsAdaptor;
import io.datamem.impl.internal.cpu.AlignedAllocator;
import io.datamem.impl.internal.pool.PoolOptions;
import io.datamem.impl.internal.pool.PoolingAllocatorImpl;
import io.datamem.testing.CountingAllocator;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The pool under stress with the guard <em>underneath</em> it ({@code pool(aligned64+guard)}): every
 * slab and every request too large to pool is a guarded block, so a slab freed with the wrong size,
 * twice or never, a block handed out beyond its slab, or a write past a slab or a large block is
 * caught. Many threads (platform and virtual) allocate random sizes, reallocate, write every block
 * and free blocks that other threads allocated. The guard must report nothing, and the accounting
 * must be exact at every level: at a quiescent point with blocks still live, and after everything is
 * freed and trimmed.
 */
class PoolOverGuardStressTest {

    private static final int PLATFORM_THREADS = 6;
    private static final int VIRTUAL_THREADS = 2;
    private static final int OPERATIONS = 15_000;
    private static final long MAX_POOLED = 256 << 10;

    /** A live block: where, its size, and the stamp written at both ends. */
    private record Block(long address, long size, long stamp) {
    }

    private final CountingAllocator leaf = new CountingAllocator(AlignedAllocator.of(64));
    private final GuardAdaptor guard = GuardAdaptorImpl.of(leaf);
    private final StatisticsAdaptor slabs = StatisticsAdaptorImpl.of(guard);   // what the pool asks of the guard
    // Small slabs and a small retention cap: slabs come and go all the time.
    private final PoolingAllocator pool = PoolingAllocatorImpl.of(slabs,
            new PoolOptions(MAX_POOLED, 32 << 10, 2 << 20));

    private final Map<Long, Block> live = new ConcurrentHashMap<>();
    private final AtomicLong handedOut = new AtomicLong();        // pooled blocks handed out (malloc, calloc, moves)
    private final AtomicLong passedThrough = new AtomicLong();    // requests above MAX_POOLED

    @Test
    void noGuardViolationAndExactAccountingWithCrossThreadFrees() throws Exception {
        int threads = PLATFORM_THREADS + VIRTUAL_THREADS;
        List<LinkedBlockingQueue<Block>> inboxes = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            inboxes.add(new LinkedBlockingQueue<>());
        }
        List<Thread> workers = new java.util.concurrent.CopyOnWriteArrayList<>();
        ExecutorService platform = Executors.newFixedThreadPool(PLATFORM_THREADS, recording(workers));
        ThreadFactory virtualFactory = Thread.ofVirtual().name("pool-stress-virtual-", 0).factory();
        ExecutorService virtual = Executors.newThreadPerTaskExecutor(virtualFactory);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<List<Block>>> futures = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int me = t;
            ExecutorService exec = t < PLATFORM_THREADS ? platform : virtual;
            futures.add(exec.submit(() -> {
                start.await();
                return work(me, inboxes);
            }));
        }
        start.countDown();
        List<Block> kept = new ArrayList<>();
        for (Future<List<Block>> f : futures) {
            kept.addAll(f.get(3, TimeUnit.MINUTES));
        }
        platform.shutdown();
        virtual.shutdown();
        assertTrue(platform.awaitTermination(1, TimeUnit.MINUTES));
        assertTrue(virtual.awaitTermination(1, TimeUnit.MINUTES));
        joinAll(workers);   // ended, not just idle: trim flushes the caches of threads that have ended
        for (LinkedBlockingQueue<Block> q : inboxes) {
            q.drainTo(kept);
        }

        // Quiescent, with blocks still live: every figure must agree with what is live.
        assertEquals(kept.size(), live.size());
        long pooledInUse = 0;
        long largeInUse = 0;
        for (Block b : kept) {
            if (b.size() <= MAX_POOLED) {
                pooledInUse += classSize(b.size());
            } else {
                largeInUse += b.size();
            }
        }
        LayerSnapshot.Pool s = pool.statistics();
        assertEquals(pooledInUse, s.usedByteSize(), "bytes of pooled blocks handed out");
        assertEquals(handedOut.get(), s.allocations(), "pooled blocks handed out");
        assertEquals(passedThrough.get(), s.passThroughAllocations(), "requests sent past the pool");
        assertEquals(s.allocations() - frees(s), kept.stream().filter(b -> b.size() <= MAX_POOLED).count());
        assertEquals(s.runByteSize() + largeInUse, slabs.figures().currentBytes(), "slabs and large blocks, as the"
                + " statistics under the pool count them");
        assertEquals(List.of(), guard.check(), guard.report());
        assertEquals(slabs.figures().liveAllocations(), guard.liveCount());

        for (Block b : kept) {
            release(b);
        }
        pool.trim();   // the workers have ended: their caches are flushed, then every whole slab goes back
        pool.close();

        s = pool.statistics();
        assertEquals(s.allocations(), frees(s), "every pooled block came back");
        assertEquals(0, s.usedByteSize());
        assertEquals(0, s.runByteSize(), "every slab went back to the guard");
        assertEquals(0, retainedByteSize(s));
        assertEquals(0, s.failures());
        assertEquals(s.slabAllocations(), s.slabReleases());
        assertEquals(0, slabs.figures().currentBytes());
        assertEquals(slabs.figures().allocations(), slabs.figures().frees());
        assertEquals(0, slabs.figures().failures());
        assertEquals(0, guard.liveCount());
        assertEquals(List.of(), guard.check(), guard.report());
        guard.drainQuarantine();
        assertEquals(List.of(), guard.violations(), guard.report());
        assertEquals(0, leaf.liveBlocks(), "the leaf got every block back");
        assertEquals(0, leaf.liveBytes());
        assertTrue(s.slabAllocations() > 10, "slabs came and went: " + s);
        assertTrue(s.slabReleases() > 0, "the retention cap released slabs during the run or trim did: " + s);
    }

    private List<Block> work(int me, List<LinkedBlockingQueue<Block>> inboxes) {
        SplittableRandom r = new SplittableRandom(me * 7919L + 1);
        List<Block> mine = new ArrayList<>();
        for (int i = 0; i < OPERATIONS; i++) {
            int op = r.nextInt(20);
            long stamp = ((long) me << 40) | i;
            if (op < 8 || mine.isEmpty()) {
                long size = randomSize(r);
                boolean zeroed = op % 3 == 0;
                MemorySegment p = zeroed ? pool.calloc(size, 1) : pool.malloc(size);
                if (zeroed && size > 0 && !isZero(p, size)) {
                    throw new AssertionError("calloc(" + size + ") returned a block that is not zero");
                }
                mine.add(track(p, size, stamp));
            } else if (op < 11) {
                Block b = mine.remove(r.nextInt(mine.size()));
                long size = r.nextBoolean() ? b.size() + r.nextInt(0, 64) : randomSize(r);
                check(b);
                live.remove(b.address());
                MemorySegment q = pool.realloc(MemorySegment.ofAddress(b.address()), b.size(), size);
                if (q.address() == 0) {
                    throw new AssertionError("realloc to " + size + " failed");
                }
                long kept = Math.min(b.size(), size);
                if (kept >= 8 && q.reinterpret(kept).get(ValueLayout.JAVA_LONG_UNALIGNED, 0) != b.stamp()) {
                    throw new AssertionError("realloc lost the data of 0x" + Long.toHexString(b.address()));
                }
                boolean moved = reallocMoves(b.size(), size);
                if (moved && size <= MAX_POOLED) {
                    handedOut.incrementAndGet();
                }
                if (moved && size > MAX_POOLED && b.size() <= MAX_POOLED) {
                    passedThrough.incrementAndGet();
                }
                mine.add(stampAndRegister(q, size, stamp));
            } else if (op < 16) {
                release(mine.remove(r.nextInt(mine.size())));
            } else if (op < 19) {
                inboxes.get(r.nextInt(inboxes.size())).add(mine.remove(r.nextInt(mine.size())));
            }
            Block b;
            while ((b = inboxes.get(me).poll()) != null) {
                release(b);   // most of these were allocated by another thread
            }
        }
        return mine;   // left live on purpose, for the quiescent check
    }

    private static ThreadFactory recording(List<Thread> threads) {
        return task -> {
            Thread t = new Thread(task);
            threads.add(t);
            return t;
        };
    }

    private static void joinAll(List<Thread> threads) throws InterruptedException {
        for (Thread t : threads) {
            t.join(TimeUnit.MINUTES.toMillis(1));
            assertFalse(t.isAlive(), t + " did not end");
        }
    }

    private static long randomSize(SplittableRandom r) {
        int kind = r.nextInt(100);
        if (kind < 70) {
            return r.nextInt(0, 4097);
        }
        if (kind < 95) {
            return r.nextInt(4097, (int) MAX_POOLED + 1);
        }
        return r.nextLong(MAX_POOLED + 1, 2L << 20);   // past the pool: a guarded block of its own
    }

    /** Whether a realloc from one size to another leaves the block where it was. */
    private boolean reallocMoves(long oldSize, long newSize) {
        if (oldSize <= MAX_POOLED) {
            return newSize > MAX_POOLED || classSize(newSize) != classSize(oldSize);
        }
        return newSize <= MAX_POOLED;   // large to large is the guard's realloc, counted by neither
    }

    private long classSize(long size) {
        for (long c : pool.classByteSizes()) {
            if (c >= size) {
                return c;
            }
        }
        throw new AssertionError("no class for " + size);
    }

    private Block track(MemorySegment p, long size, long stamp) {
        if (p.address() == 0) {
            throw new AssertionError("NULL for " + size);
        }
        if (size <= MAX_POOLED) {
            handedOut.incrementAndGet();
        } else {
            passedThrough.incrementAndGet();
        }
        return stampAndRegister(p, size, stamp);
    }

    private Block stampAndRegister(MemorySegment p, long size, long stamp) {
        Block b = new Block(p.address(), size, stamp);
        if (live.putIfAbsent(b.address(), b) != null) {
            throw new AssertionError("block 0x" + Long.toHexString(b.address()) + " handed out twice");
        }
        if (size > 0) {
            MemorySegment s = p.reinterpret(size);
            s.fill((byte) stamp);   // every byte: a block overlapping another or a red zone shows
            if (size >= 8) {
                s.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, stamp);
            }
            if (size >= 16) {   // and one at the end that does not overlap the first
                s.set(ValueLayout.JAVA_LONG_UNALIGNED, size - 8, stamp);
            }
        }
        return b;
    }

    private static void check(Block b) {
        if (b.size() >= 8) {
            MemorySegment s = MemorySegment.ofAddress(b.address()).reinterpret(b.size());
            if (s.get(ValueLayout.JAVA_LONG_UNALIGNED, 0) != b.stamp()
                    || (b.size() >= 16 && s.get(ValueLayout.JAVA_LONG_UNALIGNED, b.size() - 8) != b.stamp())) {
                throw new AssertionError("block 0x" + Long.toHexString(b.address()) + " of " + b.size()
                        + " bytes was overwritten while live");
            }
        }
    }

    private void release(Block b) {
        check(b);
        if (live.remove(b.address()) != b) {
            throw new AssertionError("freed a block that was not live: 0x" + Long.toHexString(b.address()));
        }
        pool.free(MemorySegment.ofAddress(b.address()), b.size());
    }

    private static boolean isZero(MemorySegment p, long size) {
        MemorySegment s = p.reinterpret(size);
        for (long i = 0; i < size; i++) {
            if (s.get(ValueLayout.JAVA_BYTE, i) != 0) {
                return false;
            }
        }
        return true;
    }

    @Test
    void theHandlerNameComposesTheSameStack() throws Exception {
        DataMemHandler h = DataMem.createHandler("pool(aligned64+guard)");
        PoolingAllocator p = (PoolingAllocator) h.allocator();
        DataMemAllocator up = p.upstream();
        GuardAdaptor g = AllocatorStack.find(up, GuardAdaptor.class).orElseThrow();
        List<Thread> workers = new java.util.concurrent.CopyOnWriteArrayList<>();
        ExecutorService exec = Executors.newFixedThreadPool(4, recording(workers));
        List<LinkedBlockingQueue<long[]>> inboxes = List.of(new LinkedBlockingQueue<>(), new LinkedBlockingQueue<>(),
                new LinkedBlockingQueue<>(), new LinkedBlockingQueue<>());
        List<Future<?>> fs = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            int me = t;
            fs.add(exec.submit(() -> {
                SplittableRandom r = new SplittableRandom(me);
                for (int i = 0; i < 5000; i++) {
                    long size = r.nextInt(1, 70_000);
                    MemorySegment m = p.malloc(size);
                    m.reinterpret(size).fill((byte) me);
                    inboxes.get(r.nextInt(4)).add(new long[] {m.address(), size});
                    long[] b;
                    while ((b = inboxes.get(me).poll()) != null) {
                        p.free(MemorySegment.ofAddress(b[0]), b[1]);
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : fs) {
            f.get(2, TimeUnit.MINUTES);
        }
        exec.shutdown();
        assertTrue(exec.awaitTermination(1, TimeUnit.MINUTES));
        joinAll(workers);
        for (LinkedBlockingQueue<long[]> q : inboxes) {
            long[] b;
            while ((b = q.poll()) != null) {
                p.free(MemorySegment.ofAddress(b[0]), b[1]);
            }
        }
        p.trim();
        assertEquals(0, p.statistics().runByteSize());
        assertEquals(0, g.liveCount());
        assertEquals(List.of(), g.check());
        g.drainQuarantine();
        assertEquals(List.of(), g.violations(), g.report());
    }

    /** The blocks given back to the pool: its allocations less the blocks its classes have handed out. */
    private static long frees(LayerSnapshot.Pool s) {
        return s.allocations() - s.classes().stream().mapToLong(LayerSnapshot.SizeClass::usedBlocks).sum();
    }

    /** The bytes of free blocks in the pool's slabs (uncarved slots left out). */
    private static long retainedByteSize(LayerSnapshot.Pool s) {
        return s.classes().stream().mapToLong(LayerSnapshot.SizeClass::freeByteSize).sum();
    }
}
