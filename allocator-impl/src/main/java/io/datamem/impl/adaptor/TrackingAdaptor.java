package io.datamem.impl.adaptor;

import io.datamem.impl.AllocatorAdaptor;
import io.datamem.impl.snapshot.LiveBlock;
import io.datamem.impl.snapshot.SnapshotSource;

import java.util.List;

/**
 * Keeps the set of live allocations (address, size, thread, time and, depending on the
 * stack-trace level, where it was allocated), checks that every {@code free} and
 * {@code realloc} names a live block with the size it was allocated with, and writes a leak report
 * of what is still live.
 *
 * <p>A {@code free} or {@code realloc} that names a pointer which is not live (a double free, or a
 * pointer this adaptor never returned), or gives the wrong size, is recorded as a {@link Misuse} (of kind
 * {@link Misuse.Kind#NOT_LIVE} or {@link Misuse.Kind#WRONG_SIZE}) and
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
 * the stack walk when one is taken).
 *
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
     * The live allocations, oldest first, as {@link LiveBlock}s: each with its address, size,
     * thread, time, age now, sequence number and, when recorded, stack trace; no placement
     * ({@link LiveBlock#pageSize()} 0, {@link LiveBlock#nodes()} empty). How many are live is its
     * {@code size()}; their bytes, the sum of their {@link LiveBlock#byteSize()}s, also
     * {@link io.datamem.impl.snapshot.LayerSnapshot.Tracking#liveBytes()} of this layer's
     * {@link #snapshot()}.
     *
     * @return a snapshot
     */
    List<LiveBlock> liveAllocations();

    /**
     * The misuses refused so far, in order: each a {@link Misuse.Kind#WRONG_SIZE} (with the live
     * block named, {@link Misuse#allocation()}) or a {@link Misuse.Kind#NOT_LIVE}.
     *
     * @return a snapshot
     */
    List<Misuse> problems();

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
