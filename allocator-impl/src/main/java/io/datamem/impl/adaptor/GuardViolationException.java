package io.datamem.impl.adaptor;

import io.datamem.spi.BlockReleased;

import java.util.Objects;

/**
 * Thrown by a {@link GuardAdaptor} (in its default mode, the handler term {@code guard};
 * {@code guard=record} only records) when it catches a {@link Misuse}. A caller mistake about the pointer or size passed, so an
 * {@link IllegalArgumentException}, as the allocator contract says of checking adaptors.
 *
 * <p>Whether the block is gone is part of the exception: {@link #blockReleased()} is true when the
 * guard freed the block before throwing (corruption, an overrun or underrun, found by {@code free}
 * or {@code realloc}), and false when it refused the call and changed nothing (a wrong size, a
 * double free, a foreign pointer). Adaptors above a guard follow it: when a {@code free} or
 * {@code realloc} they forwarded throws this exception with {@link #blockReleased()} true, they
 * account the block as freed (a {@code realloc} as a free of the old block: nothing new was
 * allocated); any other exception leaves their accounting as it was.
 */
public final class GuardViolationException extends IllegalArgumentException implements BlockReleased {

    private static final long serialVersionUID = 1L;

    private final transient Misuse misuse;
    private final boolean blockReleased;

    /**
     * Creates the exception for a call that changed nothing.
     *
     * @param misuse what was caught
     * @throws NullPointerException if {@code misuse} is null
     */
    public GuardViolationException(Misuse misuse) {
        this(misuse, false);
    }

    /**
     * Creates the exception.
     *
     * @param misuse        what was caught
     * @param blockReleased whether the block was freed before the exception was thrown
     * @throws NullPointerException if {@code misuse} is null
     */
    public GuardViolationException(Misuse misuse, boolean blockReleased) {
        super(Objects.requireNonNull(misuse, "misuse") + (blockReleased ? " (the block was freed)" : ""));
        this.misuse = misuse;
        this.blockReleased = blockReleased;
    }

    /**
     * Whether the block named by the {@code free} or {@code realloc} was freed before this exception
     * was thrown (and must be accounted as freed by the layers above), or is still live.
     *
     * @return true if the block is gone
     */
    public boolean blockReleased() {
        return blockReleased;
    }

    /**
     * What was caught.
     *
     * @return the misuse, as {@link GuardAdaptor#violations()} lists it
     */
    public Misuse misuse() {
        return misuse;
    }
}
