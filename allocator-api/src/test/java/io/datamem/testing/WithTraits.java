package io.datamem.testing;

import io.datamem.DataMemAllocator;
import io.datamem.MemoryTraits;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * An allocator that hands out an upstream's memory but reports other traits: device memory, another
 * device, another interchange hook. Exports and traits can then be tested on machines without the
 * hardware; nothing may dereference "device" memory through it.
 *
 * @param upstream the allocator behind it
 * @param traits   the traits to report
 */
public record WithTraits(DataMemAllocator upstream, MemoryTraits traits) implements DataMemAllocator {

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
    public MemorySegment malloc(long byteSize) {
        return upstream.malloc(byteSize);
    }

    @Override
    public MemorySegment calloc(long count, long elementByteSize) {
        return upstream.calloc(count, elementByteSize);
    }

    @Override
    public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        return upstream.realloc(ptr, oldByteSize, newByteSize);
    }

    @Override
    public void free(MemorySegment ptr, long byteSize) {
        upstream.free(ptr, byteSize);
    }

    @Override
    public String toString() {
        return "host memory with " + traits.kind() + " traits on " + traits.device();
    }
}
