package io.datamem.testing;

import io.datamem.DataMemAllocator;
import io.datamem.MemoryTraits;

import java.util.Objects;

/**
 * An allocator that hands out an upstream's memory but reports other traits: device memory, another
 * device, another interchange hook. Exports and traits can then be tested on machines without the
 * hardware; nothing may dereference "device" memory through it.
 *
 * @param upstream the allocator behind it
 * @param traits   the traits to report
 */
public record WithTraits(DataMemAllocator upstream, MemoryTraits traits) implements Forwarding {

    /**
     * Validates the components.
     *
     * @throws NullPointerException if either is null
     */
    public WithTraits {
        Objects.requireNonNull(upstream, "upstream");
        Objects.requireNonNull(traits, "traits");
    }

    @Override
    public String toString() {
        return "host memory with " + traits.kind() + " traits on " + traits.device();
    }
}
