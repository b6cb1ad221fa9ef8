package io.datamem.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.impl.adaptor.GuardAdaptor;
import io.datamem.impl.adaptor.LimitingAdaptor;
import io.datamem.impl.adaptor.StatisticsAdaptor;
import io.datamem.impl.adaptor.TrackingAdaptor;
import io.datamem.impl.snapshot.LayerSnapshot;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Cross-thread stress in the manner of mimalloc's {@code test-stress}: in each of several rounds a
 * fresh set of threads allocates blocks, fills each with a canary (its serial number at the
 * start, a mix of number and size at the end, a fixed byte between), keeps some and swaps the
 * others into a shared table of slots, freeing whatever block it takes out of a slot, which
 * another thread, often one that has ended since, allocated. The threads end while the blocks
 * in the table and the ones they kept (handed to the next round) still live. Every free checks
 * the canary and marks the block's number in a bitmap, so a block freed twice, or with another
 * size, or overwritten, fails at once. At the end every block is freed exactly once, and the
 * {@code +stats} figures on top equal the counts the threads kept: allocations, frees, bytes
 * each way, nothing current; a {@code +limit} has nothing in use, a {@code +tracking} nothing
 * live, a {@code +guard} no violation.
 *
 * <p>Each leaf family makes {@value #DEFAULT_CROSS_FREES} cross-thread frees in the normal run,
 * the adaptor stacks a quarter of that, and so do the two families whose every block (NUMA) or
 * every block from 32 KiB (huge pages) is a mapping of its own, at tens of microseconds each. {@code -Pstress} (property {@code datamem.stress.ops})
 * multiplies every count.
 */
class CrossThreadStressTest {

    /** Cross-thread frees per leaf family in the normal test run. */
    static final long DEFAULT_CROSS_FREES = 1_000_000;

    private static final int THREADS = 4;
    private static final int ROUNDS = 8;
    private static final int SLOTS = 4096;
    private static final int KEEP = 64;
    private static final byte FILL = (byte) 0xA5;
    private static final long MIX = 0x9E3779B97F4A7C15L;
    private static final int MAX_SIZE = 64 * 1024;
    private static final MemorySegment PATTERN = Arena.global().allocate(MAX_SIZE).fill(FILL);

    /** A live block: where, how big, its serial number and the thread that made it. */
    private record Block(long address, long size, long serial, long owner) {
    }

    /** What the threads did, summed. */
    private static final class Tally {
        final LongAdder allocations = new LongAdder();
        final LongAdder frees = new LongAdder();
        final LongAdder crossFrees = new LongAdder();
        final LongAdder allocatedBytes = new LongAdder();
        final LongAdder freedBytes = new LongAdder();
        final LongAdder refusals = new LongAdder();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "default_allocator+stats, 4",
        "aligned64+stats, 4",
        "hugepages:threshold=32k+stats, 1",
        "numa:local+stats, 1",
        "pool(aligned64)+stats, 4",
        "default_allocator+limit=1g+stats, 1",
        "default_allocator+guard+stats, 1",
        "default_allocator+tracking+stats, 1",
        "pool(aligned64)+guard+tracking+limit=1g+stats, 1",
    })
    void blocksFreedOnOtherThreadsAreExact(String name, int quarters) throws Exception {
        DataMemHandler h;
        try {
            h = DataMem.createHandler(name);
        } catch (IllegalStateException unavailable) {
            Assumptions.abort(name + " cannot be made here: " + unavailable.getMessage());
            return;
        }
        long scale = Long.getLong("datamem.stress.ops", DEFAULT_CROSS_FREES);
        long target = scale * quarters / 4;
        DataMemAllocator a = h.allocator();
        // Each round's threads run until the cross-thread frees reach the round's share of the
        // target; a block's serial number comes from one counter, its freed bit from the bitmap.
        long maxSerials = 4 * target + 100_000;
        AtomicLong serials = new AtomicLong();
        AtomicLongArray freedBits = new AtomicLongArray((int) ((maxSerials + 63) / 64));
        AtomicReferenceArray<Block> slots = new AtomicReferenceArray<>(SLOTS);
        ConcurrentLinkedQueue<Block> orphans = new ConcurrentLinkedQueue<>();
        Tally tally = new Tally();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        long start = System.nanoTime();
        for (int round = 0; round < ROUNDS; round++) {
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                long seed = round * 131L + t;
                long quota = target * (round + 1) / ROUNDS;
                threads.add(Thread.ofPlatform().name("stress-" + round + "-" + t).start(() -> {
                    try {
                        work(a, seed, quota, serials, maxSerials, slots, orphans, freedBits, tally);
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }));
            }
            for (Thread t : threads) {
                t.join();   // the round's threads end here; their blocks in slots and orphans live on
            }
            if (failure.get() != null) {
                throw new AssertionError(name + ": round " + round + " failed", failure.get());
            }
        }
        long self = Thread.currentThread().threadId();
        for (int i = 0; i < SLOTS; i++) {
            Block b = slots.getAndSet(i, null);
            if (b != null) {
                free(a, b, self, freedBits, tally);
            }
        }
        for (Block b; (b = orphans.poll()) != null; ) {
            free(a, b, self, freedBits, tally);
        }
        long nanos = System.nanoTime() - start;

        long allocations = tally.allocations.sum();
        long freedOnce = 0;
        for (int i = 0; i < freedBits.length(); i++) {
            freedOnce += Long.bitCount(freedBits.get(i));
        }
        assertEquals(allocations, tally.frees.sum(), name + ": frees");
        assertEquals(allocations, freedOnce, name + ": blocks freed once");
        assertEquals(tally.allocatedBytes.sum(), tally.freedBytes.sum(), name + ": bytes");
        assertTrue(tally.crossFrees.sum() >= target, name + ": " + tally.crossFrees.sum()
                + " cross-thread frees (expected: >= " + target + ")");
        LayerSnapshot.Statistics s = AllocatorStack.find(h, StatisticsAdaptor.class).orElseThrow().figures();
        assertEquals(allocations, s.allocations(), name + ": stats allocations");
        assertEquals(allocations, s.frees(), name + ": stats frees");
        assertEquals(tally.allocatedBytes.sum(), s.allocatedBytes(), name + ": stats allocated bytes");
        assertEquals(tally.freedBytes.sum(), s.freedBytes(), name + ": stats freed bytes");
        assertEquals(0, s.currentBytes(), name + ": stats current bytes");
        assertEquals(tally.refusals.sum(), s.failures(), name + ": stats failures");
        assertTrue(s.peakBytes() <= tally.allocatedBytes.sum(), name + ": peak " + s.peakBytes());
        AllocatorStack.find(h, LimitingAdaptor.class).ifPresent(l ->
                assertEquals(0, l.snapshot().inUseBytes(), name + ": limit in use"));
        AllocatorStack.find(h, TrackingAdaptor.class).ifPresent(tr -> {
            assertEquals(0, tr.liveAllocations().size(), tr.leakReport());
            assertEquals(List.of(), tr.problems());
        });
        AllocatorStack.find(h, GuardAdaptor.class).ifPresent(g -> {
            assertEquals(List.of(), g.check());
            g.drainQuarantine();
            assertEquals(List.of(), g.violations(), g.report());
        });
        System.out.printf("stress %s: %d allocations, %d cross-thread frees, %d threads in %d rounds, %.2f s%n",
                name, allocations, tally.crossFrees.sum(), THREADS * ROUNDS, ROUNDS, nanos / 1e9);
    }

    private static void work(DataMemAllocator a, long seed, long quota, AtomicLong serials, long maxSerials,
                             AtomicReferenceArray<Block> slots, ConcurrentLinkedQueue<Block> orphans,
                             AtomicLongArray freedBits, Tally tally) {
        SplittableRandom r = new SplittableRandom(seed);
        long self = Thread.currentThread().threadId();
        List<Block> kept = new ArrayList<>();
        for (Block b; kept.size() < KEEP / 2 && (b = orphans.poll()) != null; ) {
            kept.add(b);   // blocks an ended thread kept
        }
        for (long i = 0; (i & 255) != 0 || tally.crossFrees.sum() < quota; i++) {
            long size = size(r);
            MemorySegment p = a.malloc(size);
            if (p.address() == 0) {
                tally.refusals.increment();
                continue;
            }
            long serial = serials.getAndIncrement();
            if (serial >= maxSerials) {
                a.free(p, size);
                throw new AssertionError(maxSerials + " blocks made before " + quota + " cross-thread frees");
            }
            Block b = new Block(p.address(), size, serial, self);
            fill(b);
            tally.allocations.increment();
            tally.allocatedBytes.add(size);
            if (r.nextInt(8) == 0) {
                kept.add(b);
                if (kept.size() > KEEP) {
                    free(a, kept.remove(r.nextInt(kept.size())), self, freedBits, tally);
                }
            } else {
                Block out = slots.getAndSet(r.nextInt(SLOTS), b);
                if (out != null) {
                    free(a, out, self, freedBits, tally);
                }
            }
        }
        orphans.addAll(kept);   // live past this thread's end
    }

    /** Mostly small blocks, some of pages, a few of tens of KiB (mimalloc's test-stress leans the same way). */
    private static long size(SplittableRandom r) {
        int k = r.nextInt(100);
        if (k < 75) {
            return r.nextInt(16, 257);
        }
        if (k < 97) {
            return r.nextInt(257, 4097);
        }
        return r.nextInt(4097, MAX_SIZE + 1);
    }

    private static void fill(Block b) {
        MemorySegment m = MemorySegment.ofAddress(b.address()).reinterpret(b.size());
        m.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, b.serial());
        m.asSlice(8, b.size() - 16).fill(FILL);
        m.set(ValueLayout.JAVA_LONG_UNALIGNED, b.size() - 8, b.serial() * MIX ^ b.size());
    }

    private static void free(DataMemAllocator a, Block b, long self, AtomicLongArray freedBits, Tally tally) {
        MemorySegment m = MemorySegment.ofAddress(b.address()).reinterpret(b.size());
        long head = m.get(ValueLayout.JAVA_LONG_UNALIGNED, 0);
        long tail = m.get(ValueLayout.JAVA_LONG_UNALIGNED, b.size() - 8);
        long body = MemorySegment.mismatch(m, 8, b.size() - 8, PATTERN, 0, b.size() - 16);
        if (head != b.serial() || tail != (b.serial() * MIX ^ b.size()) || body != -1) {
            throw new AssertionError("block " + b + ": canary overwritten (head " + head + ", tail " + tail
                    + ", body differs at " + body + ")");
        }
        long bit = 1L << (b.serial() & 63);
        int word = (int) (b.serial() >>> 6);
        while (true) {
            long before = freedBits.get(word);
            if ((before & bit) != 0) {
                throw new AssertionError("block " + b + " freed twice");
            }
            if (freedBits.compareAndSet(word, before, before | bit)) {
                break;
            }
        }
        a.free(MemorySegment.ofAddress(b.address()), b.size());
        tally.frees.increment();
        tally.freedBytes.add(b.size());
        if (b.owner() != self) {
            tally.crossFrees.increment();
        }
    }
}
