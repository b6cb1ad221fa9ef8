package io.datamem.testing;

import io.datamem.DataMemAllocator;
import io.datamem.MemoryTraits;

import java.lang.foreign.MemorySegment;

/**
 * A test allocator that forwards every call to {@link #upstream()}; implementations override what
 * they change.
 */
public interface Forwarding extends DataMemAllocator {

    /**
     * The allocator calls go to.
     *
     * @return the upstream
     */
    DataMemAllocator upstream();

    @Override
    default MemorySegment malloc(long byteSize) {
        return upstream().malloc(byteSize);
    }

    @Override
    default MemorySegment calloc(long count, long elementByteSize) {
        return upstream().calloc(count, elementByteSize);
    }

    @Override
    default MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        return upstream().realloc(ptr, oldByteSize, newByteSize);
    }

    @Override
    default void free(MemorySegment ptr, long byteSize) {
        upstream().free(ptr, byteSize);
    }

    @Override
    default MemoryTraits traits() {
        return upstream().traits();
    }
}
