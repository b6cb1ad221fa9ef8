package io.datamem.impl.shared;

import io.datamem.DataMemAllocator;

/**
 * Host memory another process can map: each block is its own sealed {@code memfd} (created with
 * {@code MFD_CLOEXEC | MFD_ALLOW_SEALING}, sized to whole pages, sealed against shrinking and
 * growing) mapped {@code MAP_SHARED}, whose descriptor stays open until the block is freed, so
 * that {@link SharedMemory#handleOf(MemorySegment)} can export it. The memfd is named
 * {@code datamem:TAG}, {@code TAG} a random 128-bit tag importers check. Blocks are page-aligned;
 * {@code calloc} costs nothing more than {@code malloc} (new pages are zero). {@code pool(shared)}
 * carves small blocks out of such mappings: a pooled block's handle names its run's mapping and its
 * offset there.
 *
 * <p>Each block costs a descriptor, a mapping and a few system calls (about 10 µs): for many small
 * blocks, use {@code pool(shared)}.
 *
 * <p>Frees and reallocations are checked against the allocator's live blocks: a pointer it did not
 * return, a block freed twice, or a size other than the block's is an
 * {@link IllegalArgumentException} and changes nothing. {@code realloc} keeps a block in place
 * while the new size fits its pages, else it makes a new mapping, copies and frees the old one
 * (an importer of the old block keeps the old bytes). Freeing a block unmaps it and closes its
 * descriptor; an importer that mapped it keeps the pages until it unmaps them, and no later block
 * of this allocator ever shares them (see {@code docs/ipc.md}). Thread-safe.
 */
public interface SharedMemoryAllocator extends DataMemAllocator {

    /**
     * A new allocator.
     *
     * @return the allocator
     * @throws UnsupportedOperationException if this is not Linux
     */
    static SharedMemoryAllocator of() {
        Posix.requireLinux();
        return new SharedMemoryAllocatorImpl();
    }

    /**
     * How many blocks are live.
     *
     * @return the count
     */
    int liveBlocks();
}
