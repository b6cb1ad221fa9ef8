package io.datamem.impl.adaptor;

import io.datamem.DataMemAllocator;
import io.datamem.impl.AllocatorAdaptor;
import io.datamem.impl.snapshot.LayerSnapshot;
import io.datamem.impl.snapshot.SnapshotSource;
import io.datamem.internal.Checks;

import java.util.Arrays;
import java.util.Objects;

/**
 * Counts what flows through an upstream allocator: bytes in use now and at peak, total bytes
 * allocated and freed, the number of allocations, frees, reallocations and failures, and a
 * histogram of allocation sizes. Nested <em>scopes</em> ({@link #push()}, closed innermost first)
 * let a compute block read its own figures:
 *
 * <pre>{@code
 * try (StatisticsAdaptor.Scope block = stats.push()) {
 *     compute();
 *     long peak = block.figures().peakBytes();
 * }
 * }</pre>
 *
 * <p>Accounting follows the sizes callers pass: {@code free(ptr, n)} subtracts {@code n}. A failed
 * allocation ({@code NULL}) counts as a failure and changes nothing else; a caller mistake
 * (an {@link IllegalArgumentException} from the upstream) counts nothing, except a
 * {@link GuardViolationException} whose {@link GuardViolationException#blockReleased()} is true: the
 * guard below freed the block, so it counts as freed (for a {@code realloc}, the old block). An <em>allocation</em> is
 * a successful {@code malloc}, {@code calloc} or {@code realloc} of {@code NULL}; a
 * <em>reallocation</em> is a successful {@code realloc} of an existing block.
 *
 * <p>Thread-safe and lean: the whole-life figures are kept in per-thread <em>cells</em>. A platform
 * thread gets its own cell on its first call, which only it writes (plain reads, release stores:
 * no atomic read-modify-write and no shared cache line on the hot path); virtual threads share a
 * small fixed set of striped cells (chosen by thread id, updated atomically), so any number of
 * virtual threads costs no more memory than one stripe set per adaptor. A figure is read as the sum
 * of every cell plus the folded figures of ended threads: the cell of a platform
 * thread that has terminated is folded into a retired total (its thread's end happens-before the
 * fold, so nothing is lost) when later threads register or when figures are read, so threads that
 * come and go do not accumulate cells. Nothing is allocated per call.
 *
 * <p><b>Reading.</b> Each update of a cell is bracketed by two counters (updates begun, updates
 * ended; two release stores). A read-out takes every cell between its counters and then checks in a
 * second pass that no cell began an update meanwhile, so every figure of one read-out
 * ({@link #figures()}, {@link LayerSnapshot.Statistics#currentBytes()},
 * {@link LayerSnapshot.Statistics#liveAllocations()}) is that of one instant: exact for an
 * interleaving of the calls, even when threads free each other's blocks. A read-out spoiled by
 * updates a few times running holds new updates back (they wait before they begin, for as long as
 * one pass over the cells takes) until one succeeds, so a reader is never starved by churn. Every
 * completed call that happens-before a read is counted in it.
 *
 * <p><b>The peak.</b> Each cell remembers the net bytes (allocated minus freed through that cell) it
 * had when it last <em>synchronised</em>; a call that takes its cell's net bytes above that level
 * synchronises again: it takes a read-out and raises the peak to its bytes in use if higher.
 * Reading {@link LayerSnapshot.Statistics#peakBytes()} or {@link #figures()} also raises the peak
 * to the bytes in use read then, so the peak is never below a {@code currentBytes} read before it.
 * A thread's steady loop of allocations and frees that do not exceed its earlier high level pays no
 * synchronisation. What is guaranteed:
 * <ul>
 *   <li><b>One thread: exact.</b> When every call is made by one thread, its cell's net bytes are the
 *       bytes in use, it synchronises at each new high, and the peak is the true peak.</li>
 *   <li><b>Never above the true peak:</b> the peak is the largest bytes in use of read-outs, each of
 *       one instant, so it is a figure the bytes in use really had.</li>
 *   <li><b>Never below any single cell's high figure with the others as they stood then:</b> when no
 *       thread frees blocks another thread allocated, the peak is at least the most bytes any one
 *       thread had in use at once.</li>
 *   <li><b>May be below the true peak under concurrency:</b> a cell coming back up to a level it
 *       has already synchronised at does not synchronise again, so several threads each returning to
 *       their earlier highs at the same time are not seen together.</li>
 * </ul>
 *
 * <p>Scopes form a stack shared by every thread using this adaptor, as RMM's
 * {@code statistics_resource_adaptor} counters: operations are counted in the whole-life figures
 * and in the innermost open scope; closing a scope adds its figures to the enclosing one (its peak
 * counted on top of the enclosing scope's bytes in use). An operation racing with a
 * scope's {@link Scope#close()} is counted in the closed scope and may miss the enclosing one; the whole-life
 * figures are always exact.
 *
 * <p>Built by the handler term {@code stats} ({@code DataMem.handler("default_allocator+stats")}, or
 * {@code AllocatorStack.on(upstream).with("stats")}) and found with
 * {@code AllocatorStack.find(handler, StatisticsAdaptor.class)}.
 */
public interface StatisticsAdaptor extends AllocatorAdaptor, SnapshotSource {

    /** The number of buckets of {@link #histogram()}: size 0, then one per power of two up to 2^57. */
    int HISTOGRAM_BUCKETS = 59;

    /**
     * Every whole-life figure at once: what {@link #snapshot()} says of this layer.
     *
     * @return the figures since this adaptor was created, its {@code type} {@code StatisticsAdaptor}
     */
    LayerSnapshot.Statistics figures();

    /**
     * The sizes of every allocation so far, by power of two.
     *
     * @return a snapshot of the histogram
     */
    SizeHistogram histogram();

    /**
     * Opens a scope: from now on, and until it is popped, operations are also counted in it, starting
     * from zero. Scopes nest; the figures of an inner scope are added to the enclosing one when it is
     * popped.
     *
     * @return the scope; {@link Scope#close()} pops it
     */
    Scope push();

    /**
     * A scope opened by {@link #push()}: counts the operations made while it is the innermost open
     * scope (and those of the scopes nested in it, once they are popped).
     */
    interface Scope extends AutoCloseable {

        /**
         * The scope's figures so far (or final, once closed), in the record of the whole-life
         * figures; its {@code currentBytes} may be negative when the scope freed blocks allocated
         * before it was opened.
         *
         * @return the figures, their {@code type} {@code StatisticsAdaptor}
         */
        LayerSnapshot.Statistics figures();

        /**
         * Whether the scope is still open.
         *
         * @return false once popped
         */
        boolean isOpen();

        /**
         * Pops the scope. Idempotent.
         *
         * @throws IllegalStateException if the scope is open but not the innermost one
         */
        @Override
        void close();
    }

    /**
     * Allocation sizes by power of two: bucket 0 counts zero-byte allocations, bucket {@code k}
     * those of {@code 2^(k-1)} to {@code 2^k - 1} bytes; with the sum of the sizes and the largest
     * size, what a size distribution summary publishes.
     */
    final class SizeHistogram {

        private final long[] counts;
        private final long totalBytes;
        private final long largestBytes;

        /**
         * A histogram with given counts.
         *
         * @param counts       one count per bucket, {@link #HISTOGRAM_BUCKETS} of them
         * @param totalBytes   the sum of the sizes counted
         * @param largestBytes the largest size counted, 0 when none
         * @throws NullPointerException     if {@code counts} is null
         * @throws IllegalArgumentException if the length is wrong or a count or size is negative
         */
        public SizeHistogram(long[] counts, long totalBytes, long largestBytes) {
            if (counts.length != HISTOGRAM_BUCKETS) {
                throw new IllegalArgumentException("counts: " + counts.length + " buckets (expected: "
                        + HISTOGRAM_BUCKETS + ")");
            }
            for (long c : counts) {
                Checks.notNegative("count", c);
            }
            this.counts = counts.clone();
            this.totalBytes = Checks.notNegative("totalBytes", totalBytes);
            this.largestBytes = Checks.notNegative("largestBytes", largestBytes);
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
         * The sum of the sizes of the allocations counted (what {@link LayerSnapshot.Statistics#allocations()}
         * counts): the {@link LayerSnapshot.Statistics#allocatedBytes()} without realloc growth.
         *
         * @return bytes
         */
        public long totalBytes() {
            return totalBytes;
        }

        /**
         * The size of the largest allocation counted.
         *
         * @return bytes; 0 before the first allocation
         */
        public long largestBytes() {
            return largestBytes;
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
            return o instanceof SizeHistogram h && Arrays.equals(counts, h.counts) && totalBytes == h.totalBytes
                    && largestBytes == h.largestBytes;
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(counts) * 31 + Long.hashCode(totalBytes) * 17 + Long.hashCode(largestBytes);
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
}
