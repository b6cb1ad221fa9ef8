package io.datamem.impl.adaptor;

import io.datamem.impl.AllocatorAdaptor;

import java.util.List;

/**
 * NEP 49's sample handler made into a tool: every block gets a header in front (its size and a
 * canary), a red zone behind, and is poisoned when allocated and when freed; freed blocks wait in a
 * quarantine before going back upstream. The guard detects, and reports precisely (address, sizes,
 * kind, thread):
 * <ul>
 * <li>{@link Misuse.Kind#WRONG_SIZE}: {@code free} or {@code realloc} with a size other than the block's;</li>
 * <li>{@link Misuse.Kind#DOUBLE_FREE}: a block freed twice;</li>
 * <li>{@link Misuse.Kind#FOREIGN_POINTER}: a pointer it never allocated;</li>
 * <li>{@link Misuse.Kind#OVERRUN} and {@link Misuse.Kind#UNDERRUN}: writes past the end or before the start of a
 * block, checked on {@code free}/{@code realloc} and on demand for every live block
 * ({@link #check()});</li>
 * <li>{@link Misuse.Kind#USE_AFTER_FREE}: writes into a freed block while it is in quarantine, checked
 * when it leaves the quarantine and by {@link #check()}.</li>
 * </ul>
 *
 * <p>The guard never reads memory it does not own: it keeps its own registry of live blocks and
 * looks at a header only when the registry says the pointer is a live block; a bad pointer is
 * reported without being touched or forwarded.
 *
 * <p>On a violation the guard records it as a {@link Misuse} ({@link #violations()}) and, in the default
 * mode (the term {@code guard}), throws a {@link GuardViolationException}. Misuses of the pointer
 * or size passed (wrong size, double free, foreign pointer) leave memory untouched in that mode;
 * corruption found by a {@code free} (overrun, underrun) is reported after the block is freed,
 * since the red zone absorbed it. A {@code realloc} checks the block before it moves anything:
 * corruption found there is handled as by a {@code free} (the old block is freed) and nothing is
 * allocated or copied. The exception says which happened:
 * {@link GuardViolationException#blockReleased()} is true when the block was freed, and adaptors
 * above the guard then account it as freed. In record mode (the term {@code guard=record}) nothing is thrown: a
 * wrong-size free frees the block with its real size, a bad pointer is ignored, and a bad
 * {@code realloc} returns {@code NULL}.
 *
 * <p>Layout of a block of {@code n} bytes: {@code header} bytes (the upstream's alignment, at least
 * 32; only its last 32 bytes are written and checked: 16 bytes of red-zone filler, then the size and
 * a canary derived from the address; padding before them stays untouched, so a large alignment
 * commits no memory for it), the {@code n} bytes,
 * then a red zone of 32 bytes. The guard keeps the
 * upstream's alignment. Bytes of a {@code malloc} block start as {@code 0xCD} ({@link #UNINITIALISED_BYTE}),
 * freed bytes become {@code 0xDD} ({@link #FREED_BYTE}), red zones are {@code 0xFD}
 * ({@link #RED_ZONE_BYTE}). {@code realloc} always moves the block (so stale
 * pointers to the old one are caught). Thread-safe; meant for testing and debugging, not speed.
 *
 * <p>Built by the handler term {@code guard} or {@code guard=record}
 * ({@code DataMem.handler("default_allocator+guard")}, or {@code AllocatorStack.on(upstream).with("guard")})
 * and found with {@code AllocatorStack.find(handler, GuardAdaptor.class)}.
 */
public interface GuardAdaptor extends AllocatorAdaptor {

    /** The byte a {@code malloc} block starts filled with. */
    byte UNINITIALISED_BYTE = (byte) 0xCD;
    /** The byte a freed block is filled with. */
    byte FREED_BYTE = (byte) 0xDD;
    /** The byte of the red zones. */
    byte RED_ZONE_BYTE = (byte) 0xFD;

    /**
     * Checks every live block for overruns and underruns, and every quarantined block for writes
     * after free. Each block is reported once.
     *
     * @return the violations found by this check (also added to {@link #violations()})
     */
    List<Misuse> check();

    /**
     * Sends every quarantined block upstream, checking each for writes after free first.
     *
     * @return how many blocks were released
     */
    int drainQuarantine();

    /**
     * Every violation caught so far, in order.
     *
     * @return a snapshot
     */
    List<Misuse> violations();

    /**
     * The number of live blocks: those the guard allocated and has not yet freed (quarantined
     * blocks are not live).
     *
     * @return count
     */
    long liveCount();

    /**
     * The bytes of the live blocks (as callers asked, without the guard's overhead).
     *
     * @return bytes
     */
    long liveBytes();

    /**
     * The bytes the guard adds to each block.
     *
     * @return header plus red zone
     */
    long overheadBytes();

    /**
     * One line per violation, or {@code "no violations"}.
     *
     * @return the report
     */
    String report();
}
