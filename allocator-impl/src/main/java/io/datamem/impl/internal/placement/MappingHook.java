package io.datamem.impl.internal.placement;

import io.datamem.impl.placement.HugePageAllocator;

/**
 * What an allocator that places memory (NUMA binding) does to a fresh mapping of a
 * {@link HugePageAllocatorImpl} before anything touches it. Package-private: the composition of
 * NUMA binding and huge pages is built by {@link NumaAllocatorImpl}.
 */
interface MappingHook {

    /**
     * Prepares a fresh, untouched mapping.
     *
     * @param address  the mapping
     * @param byteSize its length (whole pages)
     * @param kind     the pages behind it
     * @param pageSize their size
     * @return false if the memory cannot be provided as asked (exhaustion: the caller unmaps it and
     *         tries its next kind of page, or returns NULL)
     * @throws io.datamem.BackendException if the placement fails for another reason
     */
    boolean prepare(long address, long byteSize, HugePageAllocator.PageKind kind, long pageSize);

    /**
     * Prepares the part a mapping gained when it grew in place or moved with {@code mremap}: the
     * kernel carries the mapping's placement policy over, but pages that must be faulted in now
     * (populated placements) are not there yet.
     *
     * @param address     the mapping (perhaps moved)
     * @param oldByteSize its old length
     * @param newByteSize its new length
     * @param kind        the pages behind it
     * @param pageSize    their size
     * @return false if the new part cannot be provided (the caller shrinks the mapping back)
     * @throws io.datamem.BackendException if the placement fails for another reason
     */
    boolean grown(long address, long oldByteSize, long newByteSize, HugePageAllocator.PageKind kind, long pageSize);
}
