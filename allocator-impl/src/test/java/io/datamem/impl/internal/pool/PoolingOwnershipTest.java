package io.datamem.impl.internal.pool;

import io.datamem.impl.snapshot.LayerSnapshot;
import io.datamem.impl.internal.cpu.AlignedAllocator;
import io.datamem.testing.CountingAllocator;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The pool's heaps: a thread's own malloc and free touch only its slab's free bitmap; frees from
 * other threads go through the slab's remote bitmap and its owner's remote stack, and every kind of
 * double free across threads is caught, at once or when the owner collects.
 */
class PoolingOwnershipTest {

    private final CountingAllocator counting = new CountingAllocator(AlignedAllocator.of(64));

    @Test
    void theOwnersMallocAndFreeLeaveTheRemoteBitmapAlone() {
        PoolingAllocatorImpl pool = PoolingAllocatorImpl.of(counting);
        MemorySegment p = pool.malloc(64);
        Slab s = pool.slabOf(p.address());
        assertSame(Thread.currentThread(), s.owner.thread, "the allocating thread's heap owns the slab");
        for (int i = 0; i < 1000; i++) {
            pool.free(p, 64);
            p = pool.malloc(64);
        }
        assertEquals(0, s.remote, "no remote free recorded");
        assertNull(s.owner.remoteHead, "nothing pushed on the owner's remote stack");
        pool.free(p, 64);
        assertEquals(s.mask, s.free);
        pool.close();
        assertEquals(0, counting.liveBlocks());
    }

    @Test
    void aFreeFromAnotherThreadIsRemoteUntilTheOwnerCollectsIt() throws Exception {
        PoolingAllocatorImpl pool = PoolingAllocatorImpl.of(counting);
        MemorySegment p = pool.malloc(64);
        Slab s = pool.slabOf(p.address());
        int block = s.index(p.address());
        runOnAnotherThread(() -> pool.free(p, 64));
        assertEquals(1L << block, s.remote, "set in the remote bitmap");
        assertSame(s, s.owner.remoteHead, "the slab is on its owner's remote stack");
        assertEquals(0, pool.statistics().usedByteSize(), "already counted as free");
        String twice = assertThrows(IllegalArgumentException.class, () -> pool.free(p, 64),
                "the owner frees what another thread freed").getMessage();
        assertTrue(twice.contains("double free") && twice.contains(Long.toHexString(p.address())), twice);
        String again = assertThrows(IllegalArgumentException.class,
                () -> runOnAnotherThread(() -> pool.free(p, 64))).getMessage();
        assertTrue(again.contains("double free"), again);
        // Use up the current slab: the owner then collects the remote free and hands the block out again.
        Set<Long> seen = new HashSet<>();
        List<MemorySegment> live = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            MemorySegment q = pool.malloc(64);
            assertTrue(seen.add(q.address()), "handed out twice");
            live.add(q);
        }
        assertTrue(seen.contains(p.address()), "the block freed remotely was collected and reused");
        assertEquals(0, s.remote);
        live.forEach(q -> pool.free(q, 64));
        LayerSnapshot.Pool st = pool.statistics();
        assertEquals(st.allocations(), frees(st));
        assertEquals(0, st.racingDoubleFrees());
        pool.close();
        assertEquals(0, counting.liveBlocks());
    }

    @Test
    void theOwnerFreeingFirstMakesAnotherThreadsFreeADoubleFree() throws Exception {
        PoolingAllocatorImpl pool = PoolingAllocatorImpl.of(counting);
        MemorySegment p = pool.malloc(256);
        MemorySegment keep = pool.malloc(256);
        pool.free(p, 256);
        String twice = assertThrows(IllegalArgumentException.class,
                () -> runOnAnotherThread(() -> pool.free(p, 256))).getMessage();
        assertTrue(twice.contains("double free"), twice);
        assertEquals(0, pool.slabOf(p.address()).remote, "the refused free changed nothing");
        pool.free(keep, 256);
        pool.close();
        assertEquals(0, counting.liveBlocks());
    }

    /**
     * The owner and another thread free the same block at the same moment, thousands of times. Each
     * round, exactly one free counts: the other throws, or (when both passed their checks) the owner
     * finds it when collecting and counts it as a racing double free. No block is ever handed out
     * twice, and the figures end exact.
     */
    @Test
    void racingDoubleFreesAreCaughtAtOnceOrWhenCollected() throws Exception {
        PoolingAllocatorImpl pool = PoolingAllocatorImpl.of(counting);
        int rounds = 5_000;
        CyclicBarrier barrier = new CyclicBarrier(2);
        AtomicReference<MemorySegment> block = new AtomicReference<>();
        AtomicInteger refused = new AtomicInteger();
        Thread other = new Thread(() -> {
            try {
                for (int i = 0; i < rounds; i++) {
                    barrier.await();
                    try {
                        pool.free(block.get(), 64);
                    } catch (IllegalArgumentException e) {
                        refused.incrementAndGet();
                    }
                    barrier.await();
                }
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        other.start();
        Set<Long> live = new HashSet<>();
        for (int i = 0; i < rounds; i++) {
            MemorySegment p = pool.malloc(64);
            assertTrue(live.add(p.address()), "block 0x" + Long.toHexString(p.address()) + " handed out twice");
            block.set(p);
            barrier.await();
            try {
                pool.free(p, 64);
            } catch (IllegalArgumentException e) {
                refused.incrementAndGet();
            }
            live.remove(p.address());
            barrier.await();
        }
        other.join();
        // Collect every remote free: allocate through a few slabs, checking nothing is handed out twice.
        List<MemorySegment> held = new ArrayList<>();
        Set<Long> seen = new HashSet<>();
        for (int i = 0; i < 1000; i++) {
            MemorySegment q = pool.malloc(64);
            assertTrue(seen.add(q.address()), "handed out twice after the races");
            held.add(q);
        }
        held.forEach(q -> pool.free(q, 64));
        pool.trim();
        LayerSnapshot.Pool s = pool.statistics();
        assertEquals(rounds, refused.get() + s.racingDoubleFrees(), "one of each pair of frees was refused or"
                + " found when collected (refused " + refused.get() + ", found " + s.racingDoubleFrees() + ")");
        assertEquals(0, s.usedByteSize());
        pool.close();
        assertEquals(0, counting.liveBlocks());
    }

    /**
     * The state the race above leaves when both frees pass their checks (the other thread read the
     * free bitmap before the owner's store, the owner read the remote bitmap before the other
     * thread's update): the block is in both bitmaps. The fast path does not hand it out, and the
     * owner, collecting, counts the second free and ignores it, so the block is free once.
     */
    @Test
    void aDoubleFreeBothThreadsGotPastIsFoundWhenCollected() {
        PoolingAllocatorImpl pool = PoolingAllocatorImpl.of(counting);
        MemorySegment p = pool.malloc(64);
        Slab s = pool.slabOf(p.address());
        long bit = 1L << s.index(p.address());
        pool.free(p, 64);
        s.remote |= bit;                                 // the other thread's free, past its check
        Heap.push(s.owner, s);
        MemorySegment q = pool.malloc(64);
        assertTrue(q.address() != p.address(), "a block in both bitmaps is not handed out by the fast path");
        List<MemorySegment> held = new ArrayList<>(List.of(q));
        Set<Long> seen = new HashSet<>(Set.of(q.address()));
        for (int i = 0; i < 200; i++) {
            MemorySegment r = pool.malloc(64);
            assertTrue(seen.add(r.address()), "handed out twice");
            held.add(r);
        }
        assertTrue(seen.contains(p.address()), "collected, and free once");
        assertEquals(1, pool.statistics().racingDoubleFrees());
        assertEquals(0, s.remote);
        held.forEach(r -> pool.free(r, 64));
        pool.close();
        assertEquals(0, counting.liveBlocks());
    }

    /**
     * Threads that each allocate, end, and leave their blocks for another thread to free: their
     * heaps are collected as the pool grows, so memory does not pile up without a trim.
     */
    @Test
    void theHeapsOfEndedThreadsAreCollectedAsThePoolGrows() throws Exception {
        PoolingAllocatorImpl pool = PoolingAllocatorImpl.of(counting);
        for (int t = 0; t < 400; t++) {
            List<MemorySegment> blocks = new ArrayList<>();
            runOnAnotherThread(() -> {
                for (int i = 0; i < 100; i++) {
                    blocks.add(pool.malloc(64));
                }
            });
            blocks.forEach(p -> pool.free(p, 64));
        }
        long upstream = pool.statistics().runByteSize();
        assertTrue(upstream <= 1 << 20, "400 threads of 100 blocks of 64 bytes, all freed, hold " + upstream
                + " bytes upstream");
        LayerSnapshot.Pool s = pool.statistics();
        assertEquals(40_000, s.allocations());
        assertEquals(40_000, frees(s));
        pool.trim();
        assertEquals(0, counting.liveBlocks(), "the last heaps went back at the trim");
        pool.close();
    }

    /**
     * Virtual threads allocate through the shared heap under its lock, and their slow path reaps
     * ended threads' heaps now and then; a trim takes the trim lock and then the shared heap. The
     * two must not wait for each other: virtual threads that keep growing the pool (every trim
     * empties the depot) run beside a thread that trims without pause, and all of them finish.
     */
    @Test
    void trimsRacingVirtualThreadsThatGrowThePoolNeverDeadlock() throws Exception {
        PoolingAllocatorImpl pool = PoolingAllocatorImpl.of(counting);
        java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
        AtomicInteger rounds = new AtomicInteger();
        Thread trimmer = Thread.ofPlatform().daemon().start(() -> {
            while (!done.get()) {
                pool.trim();
                rounds.incrementAndGet();
            }
        });
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            workers.add(Thread.ofVirtual().start(() -> {
                for (int i = 0; i < 20_000; i++) {
                    List<MemorySegment> blocks = new ArrayList<>();
                    for (int c = 0; c < 8; c++) {
                        blocks.add(pool.malloc(64L << c));
                    }
                    for (int c = 0; c < 8; c++) {
                        pool.free(blocks.get(c), 64L << c);
                    }
                }
            }));
        }
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
        for (Thread w : workers) {
            w.join(java.time.Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
            assertTrue(!w.isAlive(), "a virtual thread still allocating after 60 s beside " + rounds.get()
                    + " trims: the pool's locks wait for each other");
        }
        done.set(true);
        trimmer.join(java.time.Duration.ofSeconds(60));
        assertTrue(!trimmer.isAlive(), "the trimming thread still inside a trim after 60 s");
        assertTrue(rounds.get() > 0, "trims ran beside the virtual threads");
        pool.trim();
        assertEquals(0, counting.liveBlocks(), "every slab went back");
        pool.close();
    }

    private static void runOnAnotherThread(Runnable r) throws Exception {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                r.run();
            } catch (Throwable e) {
                failure.set(e);
            }
        });
        t.start();
        t.join();
        Throwable e = failure.get();
        if (e instanceof RuntimeException re) {
            throw re;
        }
        if (e != null) {
            throw new AssertionError(e);
        }
    }

    /** The blocks given back to the pool: its allocations less the blocks its classes have handed out. */
    private static long frees(LayerSnapshot.Pool s) {
        return s.allocations() - s.classes().stream().mapToLong(LayerSnapshot.SizeClass::usedBlocks).sum();
    }
}
