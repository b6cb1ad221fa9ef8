package io.datamem.impl.adaptor;

import io.datamem.impl.AllocatorAdaptor;
import io.datamem.impl.snapshot.LiveBlock;
import io.datamem.impl.snapshot.SnapshotSource;

import java.util.List;
import java.util.Objects;

/**
 * Keeps the set of live allocations (address, size, thread, time and, depending on the
 * stack-trace level, where it was allocated), checks that every {@code free} and
 * {@code realloc} names a live block with the size it was allocated with, and writes a leak report
 * of what is still live.
 *
 * <p>A {@code free} or {@code realloc} that names a pointer which is not live (a double free, or a
 * pointer this adaptor never returned), or gives the wrong size, is recorded as a {@link Problem} and
 * refused with an {@link IllegalArgumentException} before anything is forwarded: the upstream never
 * sees it, and the block (if any) stays live and listed. When the upstream refuses a {@code free} or
 * {@code realloc} with an exception, the block stays live too, unless the exception is a
 * {@link GuardViolationException} whose {@link GuardViolationException#blockReleased()} is true: the
 * guard below freed the block, so it is no longer listed (no false leak).
 *
 * <p>Stack traces, as Netty's leak detector levels, chosen by the handler term:
 * {@code tracking=off} records none (the cheapest); {@code tracking=sampled} records one for about
 * one allocation in 128; {@code tracking=full} records one for every allocation. A bare
 * {@code tracking} takes its level from the system property {@value #STACK_TRACES_PROPERTY}
 * ({@code off}, {@code sampled} or {@code full}), else {@code sampled}.
 *
 * <p>Thread-safe. The cost per operation is one concurrent-map update and one small record (plus
 * the stack walk when one is taken). *
 * <p>Built by the handler term {@code tracking} ({@code DataMem.handler("default_allocator+tracking=full")},
 * or {@code AllocatorStack.on(upstream).with("tracking")}) and found with
 * {@code AllocatorStack.find(handler, TrackingAdaptor.class)}.
 */
public interface TrackingAdaptor extends AllocatorAdaptor, SnapshotSource {

    /**
     * The system property giving the default stack-trace level of a bare {@code tracking} term:
     * {@code off}, {@code sampled} or {@code full}.
     */
    String STACK_TRACES_PROPERTY = "datamem.tracking.stackTraces";

    /**
     * A misuse the adaptor refused.
     *
     * @param kind          what was wrong
     * @param operation     {@code "free"} or {@code "realloc"}
     * @param address       the pointer passed
     * @param byteSize      the size passed
     * @param allocatedSize the size the block was allocated with, or -1 if the pointer is not live
     * @param threadName    the thread that called
     * @param allocation    the live block's record, or null if the pointer is not live
     */
    record Problem(Kind kind, String operation, long address, long byteSize, long allocatedSize,
                          String threadName, LiveBlock allocation) {

        /** Kinds of problems. */
        public enum Kind {
            /** The size passed is not the size the block was allocated with. */
            WRONG_SIZE,
            /** The pointer is not a live block: freed already, or never allocated here. */
            NOT_LIVE
        }

        /**
         * Validates.
         *
         * @throws NullPointerException if {@code kind}, {@code operation} or {@code threadName} is null
         */
        public Problem {
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(operation, "operation");
            Objects.requireNonNull(threadName, "threadName");
        }

        /**
         * The message of the exception the caller got.
         *
         * @return for example {@code free(0x7f3a10, 100): wrong size, the block was allocated with 128
         *         bytes ...}
         */
        @Override
        public String toString() {
            String call = operation + "(0x" + Long.toHexString(address) + ", " + byteSize + ")";
            return switch (kind) {
                case WRONG_SIZE -> call + ": WRONG_SIZE, the block was allocated with " + allocatedSize
                        + " bytes (" + describe(allocation) + "); called on thread '" + threadName + "'";
                case NOT_LIVE -> call + ": NOT_LIVE, no live block at this address (a double free, or a pointer"
                        + " this handler never allocated); called on thread '" + threadName + "'";
            };
        }

        private static String describe(LiveBlock b) {
            return b == null ? "null" : "0x" + Long.toHexString(b.address()) + " (" + b.byteSize()
                    + " bytes) allocated by thread '" + b.thread() + "' at " + b.time() + " (#" + b.sequence() + ")";
        }
    }

    /**
     * The live allocations, oldest first, as {@link LiveBlock}s: each with its address, size,
     * thread, time, age now, sequence number and, when recorded, stack trace; no placement
     * ({@link LiveBlock#pageSize()} 0, {@link LiveBlock#nodes()} empty).
     *
     * @return a snapshot
     */
    List<LiveBlock> liveAllocations();

    /**
     * The number of live allocations.
     *
     * @return count
     */
    long liveCount();

    /**
     * The bytes of the live allocations.
     *
     * @return bytes
     */
    long liveBytes();

    /**
     * The misuses refused so far, in order.
     *
     * @return a snapshot
     */
    List<Problem> problems();

    /**
     * Whether nothing is live and nothing was refused.
     *
     * @return true if clean
     */
    boolean isClean();

    /**
     * A report of what is live (each block with its thread, time and stack trace when recorded; the
     * first 50, oldest first) and of the problems refused.
     *
     * @return the report, or {@code "no leaks"} followed by any problems
     */
    String leakReport();
}
