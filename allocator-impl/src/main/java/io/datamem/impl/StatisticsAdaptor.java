package io.datamem.impl;

import io.datamem.DataMemAllocator;
import io.datamem.internal.Checks;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongConsumer;

/**
 * Counts what flows through an upstream allocator: bytes in use now and at peak, total bytes
 * allocated and freed, the number of allocations, frees, reallocations and failures, and a
 * histogram of allocation sizes. Nested <em>scopes</em> ({@link #push()}, {@link #pop()}) let a
 * compute block read its own figures.
 *
 * <p>Accounting follows the sizes callers pass: {@code free(ptr, n)} subtracts {@code n}. A failed
 * allocation ({@code NULL}) counts as a failure and changes nothing else; a caller mistake
 * (an {@link IllegalArgumentException} from the upstream) counts nothing, except a
 * {@link GuardViolationException} whose {@link GuardViolationException#blockReleased()} is true: the
 * guard below freed the block, so it counts as freed (for a {@code realloc}, the old block). An <em>allocation</em> is
 * a successful {@code malloc}, {@code calloc} or {@code realloc} of {@code NULL}; a
 * <em>reallocation</em> is a successful {@code realloc} of an existing block.
 *
 * <p>Thread-safe and lean: counters are {@link LongAdder}s, bytes in use an {@link AtomicLong}
 * (its peak is exact), and nothing is allocated per call. Figures read while other threads
 * allocate are each exact but not a consistent snapshot of one instant.
 *
 * <p>Scopes form a stack shared by every thread using this adaptor, as RMM's
 * {@code statistics_resource_adaptor} counters: operations are counted in the whole-life figures
 * and in the innermost open scope; popping a scope adds its figures to the enclosing one (its peak
 * counted on top of the enclosing scope's bytes in use). An operation racing with a
 * {@link #pop()} is counted in the popped scope and may miss the enclosing one; the whole-life
 * figures are always exact.
 */
public final class StatisticsAdaptor implements AllocatorAdaptor {

    /** The number of buckets of {@link #histogram()}: size 0, then one per power of two up to 2^57. */
    public static final int HISTOGRAM_BUCKETS = 59;

    private static final System.Logger LOG = System.getLogger(StatisticsAdaptor.class.getName());

    private final DataMemAllocator upstream;
    private final Counters all = new Counters(null);
    private final LongAdder[] histogram = new LongAdder[HISTOGRAM_BUCKETS];
    private final Object scopeLock = new Object();
    private volatile Counters top;              // innermost open scope; null when none
    private volatile LongConsumer[] observers;  // null when none

    /**
     * Wraps an upstream allocator.
     *
     * @param upstream the allocator to count
     * @throws NullPointerException if {@code upstream} is null
     */
    public StatisticsAdaptor(DataMemAllocator upstream) {
        this.upstream = Objects.requireNonNull(upstream, "upstream");
        for (int i = 0; i < HISTOGRAM_BUCKETS; i++) {
            histogram[i] = new LongAdder();
        }
    }

    @Override
    public DataMemAllocator upstream() {
        return upstream;
    }

    // ---------------------------------------------------------------------------------------------
    // The allocator

    @Override
    public MemorySegment malloc(long byteSize) {
        MemorySegment p = upstream.malloc(byteSize);
        if (p.address() == 0) {
            failed();
        } else {
            allocated(byteSize);
        }
        return p;
    }

    @Override
    public MemorySegment calloc(long count, long elementByteSize) {
        MemorySegment p = upstream.calloc(count, elementByteSize);
        if (p.address() == 0) {
            failed();
        } else {
            allocated(count * elementByteSize);
        }
        return p;
    }

    @Override
    public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        MemorySegment p;
        try {
            p = upstream.realloc(ptr, oldByteSize, newByteSize);
        } catch (RuntimeException e) {
            if (ptr.address() != 0 && GuardViolationException.released(e)) {
                freed(oldByteSize);
            }
            throw e;
        }
        if (p.address() == 0) {
            failed();
        } else if (ptr.address() == 0) {
            allocated(newByteSize);
        } else {
            all.reallocated(oldByteSize, newByteSize);
            Counters s = top;
            if (s != null) {
                s.reallocated(oldByteSize, newByteSize);
            }
        }
        return p;
    }

    @Override
    public void free(MemorySegment ptr, long byteSize) {
        try {
            upstream.free(ptr, byteSize);
        } catch (RuntimeException e) {
            if (ptr.address() != 0 && GuardViolationException.released(e)) {
                freed(byteSize);
            }
            throw e;
        }
        if (ptr.address() != 0) {
            freed(byteSize);
        }
    }

    private void freed(long byteSize) {
        all.freed(byteSize);
        Counters s = top;
        if (s != null) {
            s.freed(byteSize);
        }
    }

    private void failed() {
        all.failures.increment();
        Counters s = top;
        if (s != null) {
            s.failures.increment();
        }
    }

    private void allocated(long byteSize) {
        // The whole-life count of allocations is the histogram's total: one atomic update less.
        all.allocatedBytes(byteSize);
        histogram[bucketOf(byteSize)].increment();
        Counters s = top;
        if (s != null) {
            s.allocated(byteSize);
        }
        LongConsumer[] o = observers;
        if (o != null) {
            notify(o, byteSize);
        }
    }

    private static void notify(LongConsumer[] o, long byteSize) {
        for (LongConsumer c : o) {
            try {
                c.accept(byteSize);
            } catch (RuntimeException e) {
                // The block is allocated and the caller owns it: an observer must not undo that.
                LOG.log(System.Logger.Level.WARNING, "datamem: an allocation-size observer failed", e);
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Figures

    /**
     * Bytes allocated and not yet freed.
     *
     * @return bytes in use
     */
    public long currentBytes() {
        return all.current.get();
    }

    /**
     * The highest {@link #currentBytes()} seen.
     *
     * @return peak bytes
     */
    public long peakBytes() {
        return all.peak.get();
    }

    /**
     * All bytes ever allocated (growth by realloc included).
     *
     * @return bytes
     */
    public long allocatedBytes() {
        return all.allocatedBytes.sum();
    }

    /**
     * All bytes ever freed (shrinking by realloc included).
     *
     * @return bytes
     */
    public long freedBytes() {
        return all.freedBytes.sum();
    }

    /**
     * Successful malloc and calloc calls (and realloc of NULL).
     *
     * @return count
     */
    public long allocations() {
        long n = 0;
        for (LongAdder bucket : histogram) {
            n += bucket.sum();
        }
        return n;
    }

    /**
     * Frees of non-NULL pointers.
     *
     * @return count
     */
    public long frees() {
        return all.frees.sum();
    }

    /**
     * Successful reallocations of existing blocks.
     *
     * @return count
     */
    public long reallocations() {
        return all.reallocations.sum();
    }

    /**
     * Requests the upstream answered with NULL.
     *
     * @return count
     */
    public long failures() {
        return all.failures.sum();
    }

    /**
     * Blocks allocated and not yet freed: {@code allocations() - frees()}.
     *
     * @return count
     */
    public long liveAllocations() {
        return allocations() - frees();
    }

    /**
     * Every whole-life figure at once.
     *
     * @return the figures since this adaptor was created
     */
    public Figures figures() {
        return all.figures(allocations());
    }

    /**
     * The sizes of every allocation so far, by power of two.
     *
     * @return a snapshot of the histogram
     */
    public SizeHistogram histogram() {
        long[] counts = new long[HISTOGRAM_BUCKETS];
        for (int i = 0; i < HISTOGRAM_BUCKETS; i++) {
            counts[i] = histogram[i].sum();
        }
        return new SizeHistogram(counts);
    }

    /**
     * The histogram bucket of a size: 0 for 0 bytes, else {@code k} for sizes in
     * {@code [2^(k-1), 2^k)}.
     *
     * @param byteSize a size, at least 0
     * @return the bucket, from 0 to {@link #HISTOGRAM_BUCKETS} - 1
     */
    public static int bucketOf(long byteSize) {
        return Math.min(64 - Long.numberOfLeadingZeros(byteSize), HISTOGRAM_BUCKETS - 1);
    }

    // ---------------------------------------------------------------------------------------------
    // Scopes

    /**
     * Opens a scope: from now on, and until it is popped, operations are also counted in it, starting
     * from zero. Scopes nest; the figures of an inner scope are added to the enclosing one when it is
     * popped.
     *
     * @return the scope; {@link Scope#close()} pops it
     */
    public Scope push() {
        synchronized (scopeLock) {
            Counters c = new Counters(top);
            top = c;
            return new Scope(c);
        }
    }

    /**
     * Closes the innermost scope and adds its figures to the enclosing one.
     *
     * @return the figures of the scope closed
     * @throws IllegalStateException if no scope is open
     */
    public Figures pop() {
        synchronized (scopeLock) {
            Counters c = top;
            if (c == null) {
                throw new IllegalStateException("pop: no scope is open on " + this);
            }
            return popLocked(c);
        }
    }

    private Figures popLocked(Counters c) {
        top = c.parent;
        c.closed = true;
        if (c.parent != null) {
            c.parent.absorb(c);
        }
        return c.figures();
    }

    /**
     * How many scopes are open.
     *
     * @return the depth of the scope stack
     */
    public int scopeDepth() {
        synchronized (scopeLock) {
            int n = 0;
            for (Counters c = top; c != null; c = c.parent) {
                n++;
            }
            return n;
        }
    }

    /**
     * A scope opened by {@link #push()}: counts the operations made while it is the innermost open
     * scope (and those of the scopes nested in it, once they are popped).
     */
    public final class Scope implements AutoCloseable {

        private final Counters counters;

        private Scope(Counters counters) {
            this.counters = counters;
        }

        /**
         * The scope's figures so far (or final, once closed).
         *
         * @return the figures
         */
        public Figures figures() {
            return counters.figures();
        }

        /**
         * Whether the scope is still open.
         *
         * @return false once popped
         */
        public boolean isOpen() {
            return !counters.closed;
        }

        /**
         * Pops the scope. Idempotent.
         *
         * @throws IllegalStateException if the scope is open but not the innermost one
         */
        @Override
        public void close() {
            synchronized (scopeLock) {
                if (counters.closed) {
                    return;
                }
                if (top != counters) {
                    throw new IllegalStateException("close: an inner scope of " + StatisticsAdaptor.this
                            + " is still open; close scopes innermost first");
                }
                popLocked(counters);
            }
        }

        @Override
        public String toString() {
            return "Scope" + figures();
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Observers

    /**
     * Calls {@code observer} with the byte size of every allocation from now on (what
     * {@link #allocations()} counts), on the allocating thread, until the returned subscription is
     * closed. This is how a {@code DistributionSummary} of a metrics binder is fed; with no observer
     * the cost is one read of a volatile field per allocation. An observer that throws is logged and
     * otherwise ignored: the allocation stands.
     *
     * @param observer a fast, thread-safe consumer of sizes in bytes
     * @return the subscription; closing it removes the observer
     * @throws NullPointerException if {@code observer} is null
     */
    public Subscription observeAllocationSizes(LongConsumer observer) {
        Objects.requireNonNull(observer, "observer");
        synchronized (scopeLock) {
            LongConsumer[] o = observers;
            LongConsumer[] next = o == null ? new LongConsumer[1] : Arrays.copyOf(o, o.length + 1);
            next[next.length - 1] = observer;
            observers = next;
        }
        return () -> {
            synchronized (scopeLock) {
                LongConsumer[] o = observers;
                if (o == null) {
                    return;
                }
                List<LongConsumer> rest = new ArrayList<>(Arrays.asList(o));
                if (rest.remove(observer)) {
                    observers = rest.isEmpty() ? null : rest.toArray(LongConsumer[]::new);
                }
            }
        };
    }

    /** What {@link #observeAllocationSizes} returns: closing it removes the observer. */
    @FunctionalInterface
    public interface Subscription extends AutoCloseable {
        /** Removes the observer. Idempotent. */
        @Override
        void close();
    }

    @Override
    public String toString() {
        return "StatisticsAdaptor[" + upstream + "]";
    }

    // ---------------------------------------------------------------------------------------------
    // Value types

    /**
     * The figures of a {@link StatisticsAdaptor} or of one of its scopes.
     *
     * @param currentBytes   bytes allocated and not yet freed (in a scope: may be negative when it
     *                       freed blocks allocated before it)
     * @param peakBytes      the highest {@code currentBytes}
     * @param allocatedBytes all bytes allocated (growth by realloc included)
     * @param freedBytes     all bytes freed (shrinking by realloc included)
     * @param allocations    successful malloc, calloc and realloc of NULL
     * @param frees          frees of non-NULL pointers
     * @param reallocations  successful reallocations of existing blocks
     * @param failures       requests answered with NULL
     */
    public record Figures(long currentBytes, long peakBytes, long allocatedBytes, long freedBytes,
                          long allocations, long frees, long reallocations, long failures) {

        /**
         * Blocks allocated and not yet freed.
         *
         * @return {@code allocations - frees}
         */
        public long liveAllocations() {
            return allocations - frees;
        }
    }

    /**
     * Allocation sizes by power of two: bucket 0 counts zero-byte allocations, bucket {@code k}
     * those of {@code 2^(k-1)} to {@code 2^k - 1} bytes.
     */
    public static final class SizeHistogram {

        private final long[] counts;

        /**
         * A histogram with given counts.
         *
         * @param counts one count per bucket, {@link #HISTOGRAM_BUCKETS} of them
         * @throws IllegalArgumentException if the length is wrong or a count is negative
         */
        public SizeHistogram(long[] counts) {
            if (counts.length != HISTOGRAM_BUCKETS) {
                throw new IllegalArgumentException("counts: " + counts.length + " buckets (expected: "
                        + HISTOGRAM_BUCKETS + ")");
            }
            for (long c : counts) {
                Checks.notNegative("count", c);
            }
            this.counts = counts.clone();
        }

        /**
         * The count of a bucket.
         *
         * @param bucket from 0 to {@link #HISTOGRAM_BUCKETS} - 1
         * @return allocations whose size fell in it
         * @throws IndexOutOfBoundsException if {@code bucket} is out of range
         */
        public long count(int bucket) {
            return counts[Objects.checkIndex(bucket, HISTOGRAM_BUCKETS)];
        }

        /**
         * Every count.
         *
         * @return a copy of the counts, bucket 0 first
         */
        public long[] counts() {
            return counts.clone();
        }

        /**
         * All allocations counted.
         *
         * @return the sum of the counts
         */
        public long total() {
            long t = 0;
            for (long c : counts) {
                t += c;
            }
            return t;
        }

        /**
         * The smallest size of a bucket.
         *
         * @param bucket from 0 to {@link #HISTOGRAM_BUCKETS} - 1
         * @return bytes
         * @throws IndexOutOfBoundsException if {@code bucket} is out of range
         */
        public static long lowerBound(int bucket) {
            Objects.checkIndex(bucket, HISTOGRAM_BUCKETS);
            return bucket == 0 ? 0 : 1L << (bucket - 1);
        }

        /**
         * The largest size of a bucket.
         *
         * @param bucket from 0 to {@link #HISTOGRAM_BUCKETS} - 1
         * @return bytes
         * @throws IndexOutOfBoundsException if {@code bucket} is out of range
         */
        public static long upperBound(int bucket) {
            Objects.checkIndex(bucket, HISTOGRAM_BUCKETS);
            return bucket == 0 ? 0 : bucket == HISTOGRAM_BUCKETS - 1 ? DataMemAllocator.MAX_BYTE_SIZE
                    : (1L << bucket) - 1;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof SizeHistogram h && Arrays.equals(counts, h.counts);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(counts);
        }

        /**
         * The non-empty buckets, one per line: {@code [64, 127] bytes: 12}.
         *
         * @return the text
         */
        @Override
        public String toString() {
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < HISTOGRAM_BUCKETS; i++) {
                if (counts[i] != 0) {
                    b.append('[').append(lowerBound(i)).append(", ").append(upperBound(i)).append("] bytes: ")
                            .append(counts[i]).append('\n');
                }
            }
            return b.isEmpty() ? "(no allocations)\n" : b.toString();
        }
    }

    /** One set of counters: the whole-life ones, or a scope's. */
    private static final class Counters {
        final Counters parent;
        final AtomicLong current = new AtomicLong();
        final AtomicLong peak = new AtomicLong();
        final LongAdder allocatedBytes = new LongAdder();
        final LongAdder freedBytes = new LongAdder();
        final LongAdder allocations = new LongAdder();
        final LongAdder frees = new LongAdder();
        final LongAdder reallocations = new LongAdder();
        final LongAdder failures = new LongAdder();
        volatile boolean closed;

        Counters(Counters parent) {
            this.parent = parent;
        }

        void allocated(long byteSize) {
            allocations.increment();
            allocatedBytes(byteSize);
        }

        /** An allocation's bytes, without counting it (the whole-life count is the histogram's). */
        void allocatedBytes(long byteSize) {
            allocatedBytes.add(byteSize);
            raise(byteSize);
        }

        void reallocated(long oldByteSize, long newByteSize) {
            reallocations.increment();
            long delta = newByteSize - oldByteSize;
            if (delta >= 0) {
                allocatedBytes.add(delta);
                raise(delta);
            } else {
                freedBytes.add(-delta);
                current.addAndGet(delta);
            }
        }

        void freed(long byteSize) {
            frees.increment();
            freedBytes.add(byteSize);
            current.addAndGet(-byteSize);
        }

        void raise(long byteSize) {
            long now = current.addAndGet(byteSize);
            long p = peak.get();
            while (now > p && !peak.compareAndSet(p, now)) {
                p = peak.get();
            }
        }

        /** Adds a popped child's figures: RMM's add_counters_from_tracked_sub_block. */
        void absorb(Counters child) {
            long childPeak = child.peak.get();
            long base = current.get();
            long p = peak.get();
            while (base + childPeak > p && !peak.compareAndSet(p, base + childPeak)) {
                p = peak.get();
            }
            current.addAndGet(child.current.get());
            allocatedBytes.add(child.allocatedBytes.sum());
            freedBytes.add(child.freedBytes.sum());
            allocations.add(child.allocations.sum());
            frees.add(child.frees.sum());
            reallocations.add(child.reallocations.sum());
            failures.add(child.failures.sum());
        }

        Figures figures() {
            return figures(allocations.sum());
        }

        Figures figures(long allocationCount) {
            return new Figures(current.get(), peak.get(), allocatedBytes.sum(), freedBytes.sum(), allocationCount,
                    frees.sum(), reallocations.sum(), failures.sum());
        }
    }
}
