package io.datamem.impl.internal.pool;

import io.datamem.impl.snapshot.LayerSnapshot;
import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.impl.adaptor.StatisticsAdaptor;
import io.datamem.impl.internal.cpu.AlignedAllocator;
import io.datamem.internal.Libc;
import io.datamem.testing.CountingAllocator;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The pool's own behaviour: classes, reuse, misuse detection, trimming, threads. */
class PoolingAllocatorTest {

    private final CountingAllocator counting = new CountingAllocator(AlignedAllocator.of(64));

    @Test
    void sizeClassesKeepTheAlignmentAndWasteAtMostAQuarter() {
        long[] c = SizeClasses.classSizes(16, 16L << 20);
        assertEquals(List.of(16L, 32L, 48L, 64L, 80L, 96L, 112L, 128L, 160L), java.util.Arrays.stream(c).limit(9)
                .boxed().toList());
        for (int i = 1; i < c.length; i++) {
            assertEquals(0, c[i] % 16);
            assertTrue(c[i] > c[i - 1]);
            if (c[i - 1] >= 64) {
                assertTrue(c[i] <= c[i - 1] * 1.25 + 16, "step " + c[i - 1] + " -> " + c[i]);
            }
        }
        assertTrue(c[c.length - 1] >= 16L << 20);
        long[] a = SizeClasses.classSizes(4096, 1 << 20);
        assertEquals(List.of(16L, 32L, 64L, 128L, 256L, 512L, 1024L, 2048L, 4096L, 8192L),
                java.util.Arrays.stream(a).limit(10).boxed().toList(), "powers of two below the alignment");
        for (long size : a) {
            assertEquals(0, size % Math.min(size, 4096));
        }
        PoolingAllocatorImpl pool = PoolingAllocatorImpl.of(AlignedAllocator.of(4096));
        for (int i = 0; i < 50; i++) {
            MemorySegment p = pool.malloc(100 + i * 1000);
            assertEquals(0, p.address() % Math.min(4096, Long.highestOneBit((100 + i * 1000) * 2 - 1)),
                    "blocks of the upstream's alignment or more keep it, smaller ones are aligned to their size");
            pool.free(p, 100 + i * 1000);
        }
        assertEquals(16, pool.traits().byteAlignment(), "what every block gets");
        assertEquals(4096, pool.byteAlignmentOf(4096));
        pool.close();
    }

    @Test
    void freedBlocksAreReusedWithoutCallingTheUpstream() {
        PoolingAllocatorImpl pool = PoolingAllocatorImpl.of(counting);
        MemorySegment p = pool.malloc(1000);
        long upstreamCalls = counting.allocations();
        pool.free(p, 1000);
        MemorySegment q = pool.malloc(1000);
        assertEquals(p.address(), q.address(), "the thread cache hands the block back (LIFO)");
        MemorySegment r = pool.malloc(990);   // same class
        assertNotEquals(q.address(), r.address());
        assertEquals(upstreamCalls, counting.allocations(), "no new upstream call");
        pool.free(q, 1000);
        pool.free(r, 990);
        pool.trim();
        assertEquals(0, counting.liveBlocks(), "trim returned every free slab");
        assertEquals(1, pool.statistics().slabReleases());
    }

    @Test
    void misuseIsDetectedAndLeavesThePoolUnchanged() {
        PoolingAllocatorImpl pool = PoolingAllocatorImpl.of(counting);
        MemorySegment p = pool.malloc(1000);
        String wrong = assertThrows(IllegalArgumentException.class, () -> pool.free(p, 64)).getMessage();
        assertTrue(wrong.contains("0x" + Long.toHexString(p.address())) && wrong.contains("1024-byte class")
                && wrong.contains("expected: the size it was allocated with"), wrong);
        assertThrows(IllegalArgumentException.class, () -> pool.free(p, 1L << 30), "a large size for a pooled block");
        String interior = assertThrows(IllegalArgumentException.class,
                () -> pool.free(MemorySegment.ofAddress(p.address() + 64), 1000)).getMessage();
        assertTrue(interior.contains("interior pointer"), interior);
        MemorySegment foreign = Libc.malloc(1000);
        String notOurs = assertThrows(IllegalArgumentException.class, () -> pool.free(foreign, 1000)).getMessage();
        assertTrue(notOurs.contains("not a block of this pool"), notOurs);
        Libc.free(foreign);
        assertThrows(IllegalArgumentException.class, () -> pool.realloc(p, 64, 2000));
        pool.free(p, 1000);                      // the right size still works: nothing changed
        String twice = assertThrows(IllegalArgumentException.class, () -> pool.free(p, 1000)).getMessage();
        assertTrue(twice.contains("double free"), twice);
        assertThrows(IllegalArgumentException.class, () -> pool.realloc(p, 1000, 2000), "realloc of a free block");
        assertEquals(0, pool.statistics().usedByteSize());
        MemorySegment a = pool.malloc(1000);
        MemorySegment b = pool.malloc(1000);
        assertNotEquals(a.address(), b.address(), "the block was not put back twice");
        pool.free(a, 1000);
        pool.free(b, 1000);
        pool.close();
        assertEquals(0, counting.liveBlocks());
    }

    @Test
    void reallocStaysInPlaceWithinAClassAndMovesDataAcrossClasses() {
        PoolingAllocatorImpl pool = PoolingAllocatorImpl.of(counting);
        MemorySegment p = pool.malloc(1000);
        p.reinterpret(1000).fill((byte) 7);
        assertEquals(p.address(), pool.realloc(p, 1000, 1024).address(), "same class: in place");
        MemorySegment q = pool.realloc(p, 1024, 100_000);
        assertEquals(7, q.reinterpret(1000).get(ValueLayout.JAVA_BYTE, 999));
        MemorySegment big = pool.realloc(q, 100_000, 64L << 20);   // into pass-through
        assertEquals(7, big.reinterpret(1000).get(ValueLayout.JAVA_BYTE, 0));
        MemorySegment bigger = pool.realloc(big, 64L << 20, 65L << 20); // the upstream resizes it
        MemorySegment back = pool.realloc(bigger, 65L << 20, 10);     // back into the pool
        assertEquals(7, back.reinterpret(10).get(ValueLayout.JAVA_BYTE, 9));
        pool.free(back, 10);
        pool.close();
        assertEquals(0, counting.liveBlocks());
    }

    @Test
    void callocZeroesRecycledBlocks() {
        PoolingAllocatorImpl pool = PoolingAllocatorImpl.of(counting);
        MemorySegment p = pool.malloc(4000);
        p.reinterpret(4000).fill((byte) -1);
        pool.free(p, 4000);
        MemorySegment q = pool.calloc(500, 8);
        assertEquals(p.address(), q.address());
        for (long i = 0; i < 4000; i += 8) {
            assertEquals(0, q.reinterpret(4000).get(ValueLayout.JAVA_LONG, i));
        }
        pool.free(q, 4000);
        pool.close();
    }

    @Test
    void largeRequestsPassThroughWithTheirExactSize() {
        PoolingAllocatorImpl pool = PoolingAllocatorImpl.of(counting, PoolOptions.DEFAULTS
                .withMaxPooledByteSize(1 << 20));
        MemorySegment p = pool.malloc((1 << 20) + 1);
        assertEquals((1 << 20) + 1, counting.liveBytes());
        pool.free(p, (1 << 20) + 1);
        assertEquals(0, counting.liveBytes());
        assertEquals(1, pool.statistics().passThroughAllocations());
        pool.close();
    }

    @Test
    void largeBlocksAreKnownSoForeignDoubleAndWrongSizeFreesNeverReachTheUpstream() {
        PoolingAllocatorImpl pool = PoolingAllocatorImpl.of(counting, PoolOptions.DEFAULTS
                .withMaxPooledByteSize(1 << 20));
        long size = 2L << 20;
        MemorySegment p = pool.malloc(size);
        MemorySegment z = pool.calloc(1, size);
        AlignedAllocator other = AlignedAllocator.of(64);
        MemorySegment foreign = other.malloc(size);
        String hex = "0x" + Long.toHexString(foreign.address());
        String notOurs = assertThrows(IllegalArgumentException.class, () -> pool.free(foreign, size)).getMessage();
        assertTrue(notOurs.contains(pool.toString()) && notOurs.contains(hex) && notOurs.contains(Long.toString(size))
                && notOurs.contains("not a block of this pool"), notOurs);
        other.free(foreign, size);
        String interior = assertThrows(IllegalArgumentException.class,
                () -> pool.free(MemorySegment.ofAddress(p.address() + 4096), size)).getMessage();
        assertTrue(interior.contains("not a block of this pool"), interior);
        String wrong = assertThrows(IllegalArgumentException.class, () -> pool.free(p, size + 1)).getMessage();
        assertTrue(wrong.contains(pool.toString()) && wrong.contains("allocated with " + size)
                && wrong.contains(Long.toString(size + 1)), wrong);
        assertThrows(IllegalArgumentException.class, () -> pool.realloc(p, size + 1, size * 2));
        assertThrows(IllegalArgumentException.class, () -> pool.realloc(foreign, size, size * 2));
        assertEquals(0, counting.frees(), "no misuse reached the upstream");
        pool.free(p, size);
        String twice = assertThrows(IllegalArgumentException.class, () -> pool.free(p, size)).getMessage();
        assertTrue(twice.contains("0x" + Long.toHexString(p.address())), twice);
        MemorySegment q = pool.realloc(z, size, size * 2);
        assertThrows(IllegalArgumentException.class, () -> pool.free(z, size), "the old block is gone");
        pool.free(q, size * 2);
        assertEquals(2, counting.frees(), "each block went upstream once");
        pool.close();
        assertEquals(0, counting.liveBlocks());
    }

    @Test
    void aBlockIsNeverHandedOutTwiceUnderConcurrencyWithCrossThreadFrees() throws Exception {
        PoolingAllocatorImpl pool = PoolingAllocatorImpl.of(counting, new PoolOptions(1 << 20, 16 << 10, 4 << 20));
        int threads = 6;
        int rounds = 20_000;
        Set<Long> live = ConcurrentHashMap.newKeySet();
        List<LinkedBlockingQueue<long[]>> inboxes = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            inboxes.add(new LinkedBlockingQueue<>());
        }
        AtomicLong handedOut = new AtomicLong();
        ExecutorService exec = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int me = t;
            futures.add(exec.submit(() -> {
                start.await();
                SplittableRandom r = new SplittableRandom(me);
                for (int i = 0; i < rounds; i++) {
                    long size = r.nextInt(4) == 0 ? r.nextInt(1 << 21) : r.nextInt(1, 2048);
                    MemorySegment p = pool.malloc(size);
                    if (p.address() == 0) {
                        throw new AssertionError("NULL for " + size);
                    }
                    if (!live.add(p.address())) {
                        throw new AssertionError("block 0x" + Long.toHexString(p.address()) + " handed out twice");
                    }
                    handedOut.incrementAndGet();
                    long stamp = ((long) me << 32) | i;
                    if (size >= 16) {   // two stamps that do not overlap
                        p.reinterpret(size).set(ValueLayout.JAVA_LONG_UNALIGNED, 0, stamp);
                        p.reinterpret(size).set(ValueLayout.JAVA_LONG_UNALIGNED, size - 8, stamp);
                    }
                    // Free it here, or hand it to another thread to free.
                    int target = r.nextInt(threads);
                    inboxes.get(target).add(new long[] {p.address(), size, stamp});
                    long[] b;
                    while ((b = inboxes.get(me).poll()) != null) {
                        release(pool, live, b);
                    }
                }
                return null;
            }));
        }
        start.countDown();
        for (Future<?> f : futures) {
            f.get(3, TimeUnit.MINUTES);
        }
        exec.shutdown();
        assertTrue(exec.awaitTermination(1, TimeUnit.MINUTES));
        for (LinkedBlockingQueue<long[]> q : inboxes) {
            long[] b;
            while ((b = q.poll()) != null) {
                release(pool, live, b);
            }
        }
        assertTrue(live.isEmpty());
        LayerSnapshot.Pool s = pool.statistics();
        assertEquals(0, s.usedByteSize());
        assertEquals(handedOut.get(), s.allocations() + s.passThroughAllocations());
        assertEquals(s.allocations(), frees(s), "every pooled block came back");
        pool.trim();                          // the workers have ended: their caches are flushed too
        assertEquals(0, counting.liveBlocks(), "every slab went back to the upstream");
        assertEquals(0, counting.liveBytes());
    }

    private static void release(PoolingAllocatorImpl pool, Set<Long> live, long[] b) {
        MemorySegment p = MemorySegment.ofAddress(b[0]);
        long size = b[1];
        if (size >= 16 && (p.reinterpret(size).get(ValueLayout.JAVA_LONG_UNALIGNED, 0) != b[2]
                || p.reinterpret(size).get(ValueLayout.JAVA_LONG_UNALIGNED, size - 8) != b[2])) {
            throw new AssertionError("block 0x" + Long.toHexString(b[0]) + " was overwritten while live");
        }
        if (!live.remove(b[0])) {
            throw new AssertionError("freed a block that was not live");
        }
        pool.free(p, size);
    }

    @Test
    void virtualThreadsUseTheDepotDirectly() throws Exception {
        PoolingAllocatorImpl pool = PoolingAllocatorImpl.of(counting);
        try (ExecutorService exec = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < 50; t++) {
                fs.add(exec.submit(() -> {
                    for (int i = 0; i < 200; i++) {
                        MemorySegment p = pool.malloc(100 + i);
                        p.reinterpret(100).fill((byte) i);
                        pool.free(p, 100 + i);
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get();
            }
        }
        assertEquals(10_000, pool.statistics().allocations());
        assertEquals(10_000, frees(pool.statistics()));
        pool.trim();
        assertEquals(0, counting.liveBlocks());
    }

    @Test
    void theRetentionCapReturnsWholeFreeSlabs() {
        PoolingAllocatorImpl pool = PoolingAllocatorImpl.of(counting, PoolOptions.DEFAULTS
                .withMaxRetainedByteSize(0));
        List<MemorySegment> blocks = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            blocks.add(pool.malloc(4 << 20));   // one block per slab, one cached per thread
        }
        blocks.forEach(p -> pool.free(p, 4 << 20));
        assertTrue(counting.liveBlocks() <= 1, "at most the thread's cached block is kept, got "
                + counting.liveBlocks());
        pool.close();
        assertEquals(0, counting.liveBlocks());
    }

    @Test
    void aClosedPoolRefusesAllocationsButTakesBlocksBack() {
        PoolingAllocatorImpl pool = PoolingAllocatorImpl.of(counting);
        MemorySegment p = pool.malloc(100);
        pool.close();
        assertThrows(IllegalStateException.class, () -> pool.malloc(100));
        pool.free(p, 100);
        pool.trim();
        assertEquals(0, counting.liveBlocks());
    }

    @Test
    void providerNamesBuildPools() {
        DataMemHandler h = DataMem.createHandler("pool(aligned:4096):max=1m,slab=256k,retain=0");
        PoolingAllocatorImpl pool = assertInstanceOf(PoolingAllocatorImpl.class, h.allocator());
        assertEquals(new PoolOptions(1 << 20, 256 << 10, 0), pool.options());
        assertInstanceOf(AlignedAllocator.class, pool.upstream());
        assertEquals(16, h.traits().byteAlignment());
        assertEquals(4096, pool.byteAlignmentOf(5000));
        assertInstanceOf(StatisticsAdaptor.class, DataMem.createHandler("pool(aligned64)+stats").allocator());
        assertInstanceOf(StatisticsAdaptor.class,
                ((PoolingAllocatorImpl) DataMem.createHandler("pool(aligned64+stats)").allocator()).upstream());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> DataMem.handler("pool()")).getMessage()
                .contains("expected: pool(UPSTREAM)"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> DataMem.handler("pool(aligned64):foo=1"))
                .getMessage().contains("expected: max=SIZE, slab=SIZE or retain=SIZE"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> DataMem.handler("pool(aligned64):max=x"))
                .getMessage().contains("max: 'x'"));
        assertThrows(IllegalArgumentException.class, () -> DataMem.handler("pool(nothing)"));
    }

    @Test
    void arraysResizeAcrossClassesThroughThePool() {
        PoolingAllocatorImpl pool = PoolingAllocatorImpl.of(counting);
        DataMemHandler h = DataMemHandler.of("pool-arrays", pool);
        for (int round = 0; round < 3; round++) {
            NDArray a = DataMem.callWith(h, () -> NDArray.zeros(DType.FLOAT64, 10));
            a.fill(2.0);
            a.resize(100_000);
            assertEquals(2.0, a.getDouble(9));
            assertEquals(0.0, a.getDouble(99_999));
            a.close();
        }
        assertEquals(0, pool.statistics().usedByteSize());
        pool.close();
        assertEquals(0, counting.liveBlocks());
    }

    /** The blocks given back to the pool: its allocations less the blocks its classes have handed out. */
    private static long frees(LayerSnapshot.Pool s) {
        return s.allocations() - s.classes().stream().mapToLong(LayerSnapshot.SizeClass::usedBlocks).sum();
    }
}
