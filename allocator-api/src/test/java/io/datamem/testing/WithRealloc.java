package io.datamem.testing;

import io.datamem.DataMemAllocator;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * An allocator that forwards everything to an upstream but its {@code realloc}, which a test gives:
 * one that refuses, blocks, or throws, to drive a resize's failure and waiting paths.
 *
 * @param upstream the allocator behind it
 * @param realloc  what {@code realloc} does instead (it may call the upstream's)
 */
public record WithRealloc(DataMemAllocator upstream, Realloc realloc) implements Forwarding {

    /** A {@code realloc} of a test's own. */
    @FunctionalInterface
    public interface Realloc {
        /**
         * Reallocates, as {@link DataMemAllocator#realloc} does.
         *
         * @param ptr         the block
         * @param oldByteSize its size
         * @param newByteSize the size asked for
         * @return the block, or NULL
         */
        MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize);
    }

    /**
     * Validates the components.
     *
     * @throws NullPointerException if either is null
     */
    public WithRealloc {
        Objects.requireNonNull(upstream, "upstream");
        Objects.requireNonNull(realloc, "realloc");
    }

    @Override
    public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        return realloc.realloc(ptr, oldByteSize, newByteSize);
    }
}
