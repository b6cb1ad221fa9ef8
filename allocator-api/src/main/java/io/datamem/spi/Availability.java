package io.datamem.spi;

import java.util.Objects;

/**
 * Whether a provider can make handlers on this machine, and if not, why.
 *
 * @param available whether the provider works here
 * @param reason    why not (for example {@code "no CUDA driver: libcuda.so.1 not found"}); empty
 *                  when available
 */
public record Availability(boolean available, String reason) {

    /** Available. */
    public static final Availability AVAILABLE = new Availability(true, "");

    /**
     * Validates the components.
     *
     * @throws NullPointerException     if {@code reason} is null
     * @throws IllegalArgumentException if an unavailable provider gives a blank reason
     */
    public Availability {
        Objects.requireNonNull(reason, "reason");
        if (!available && reason.isBlank()) {
            throw new IllegalArgumentException("reason: '' (expected: why the provider is unavailable)");
        }
    }

    /**
     * Unavailable, for a reason.
     *
     * @param reason why, in words a user can act on
     * @return the availability
     * @throws IllegalArgumentException if {@code reason} is blank
     */
    public static Availability unavailable(String reason) {
        return new Availability(false, reason);
    }

    @Override
    public String toString() {
        return available ? "available" : "unavailable: " + reason;
    }
}
