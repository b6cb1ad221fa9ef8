package io.datamem.impl;

import java.util.Objects;

/**
 * Thrown by a {@link GuardAdaptor} (in its default {@link GuardAdaptor.OnViolation#THROW} mode) when
 * it catches a misuse. A caller mistake about the pointer or size passed, so an
 * {@link IllegalArgumentException}, as the allocator contract says of checking adaptors.
 */
public final class GuardViolationException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    private final transient GuardViolation violation;

    /**
     * Creates the exception.
     *
     * @param violation what was caught
     * @throws NullPointerException if {@code violation} is null
     */
    public GuardViolationException(GuardViolation violation) {
        super(Objects.requireNonNull(violation, "violation").toString());
        this.violation = violation;
    }

    /**
     * What was caught.
     *
     * @return the violation
     */
    public GuardViolation violation() {
        return violation;
    }
}
