package io.datamem.cuda.internal;

import io.datamem.impl.os.LiveBlocks;
import io.datamem.internal.Checks;

import java.lang.foreign.MemorySegment;

/**
 * The blocks of one CUDA allocator: the checked {@code malloc}/{@code calloc}/{@code realloc}/
 * {@code free} entry points the public allocators delegate to, the live-block bookkeeping that
 * refuses wrong-size, double and foreign frees, and reallocation by allocating, copying and
 * freeing. Subclasses say how a block is made, copied and given back. Internal.
 */
public abstract sealed class CudaBlocks permits CudaAllocations, CudaRegistrations {

    /** The handler name, for messages. */
    final String name;
    /** The blocks handed out and not freed, with their sizes. */
    final LiveBlocks<Long> live;

    CudaBlocks(String name) {
        this.name = name;
        this.live = LiveBlocks.sizes(name);
    }

    /**
     * The handler name used in messages.
     *
     * @return the name
     */
    public final String name() {
        return name;
    }

    /**
     * The number of live blocks.
     *
     * @return the count
     */
    public final int liveBlocks() {
        return live.count();
    }

    /**
     * {@code malloc}: checks the size, then allocates.
     *
     * @param byteSize the size
     * @return the block, or NULL on exhaustion
     * @throws IllegalArgumentException if {@code byteSize} is negative or too large
     */
    public final MemorySegment malloc(long byteSize) {
        Checks.byteSize("byteSize", byteSize);
        return allocate(byteSize, false);
    }

    /**
     * {@code calloc}: checks the counts, then allocates zeroed memory; a product that overflows is
     * NULL, as C's {@code calloc}.
     *
     * @param count           the number of elements
     * @param elementByteSize the size of each
     * @return the zeroed block, or NULL on exhaustion or overflow
     * @throws IllegalArgumentException if either argument is negative
     */
    public final MemorySegment calloc(long count, long elementByteSize) {
        long size = Checks.callocByteSize(count, elementByteSize);
        return size < 0 ? MemorySegment.NULL : allocate(size, true);
    }

    /**
     * {@code realloc}: checks the sizes, then reallocates by allocating, copying and freeing; a NULL
     * result leaves the old block untouched.
     *
     * @param ptr         the block, or NULL
     * @param oldByteSize its size
     * @param newByteSize the new size
     * @return the new block, or NULL on exhaustion
     * @throws IllegalArgumentException if a size is negative or too large, or {@code ptr} is not a
     *                                  live block of {@code oldByteSize} bytes
     */
    public final MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        Checks.byteSize("oldByteSize", oldByteSize);
        Checks.byteSize("newByteSize", newByteSize);
        if (ptr.address() == 0) {
            return allocate(newByteSize, false);
        }
        live.check(ptr.address(), oldByteSize, "realloc");
        MemorySegment moved = allocate(newByteSize, false);
        if (moved.address() == 0) {
            return MemorySegment.NULL;
        }
        long keep = Math.min(oldByteSize, newByteSize);
        try {
            StreamRecords.global().await(ptr.address());
            if (keep > 0) {
                copy(ptr, moved, keep);
            }
        } catch (RuntimeException | Error e) {
            release(moved, newByteSize);
            throw e;
        }
        release(ptr, oldByteSize);
        return moved;
    }

    /**
     * {@code free}: checks the size, then gives the block back after the work datamem enqueued on
     * it is done.
     *
     * @param ptr      the block, NULL being a no-op
     * @param byteSize its size
     * @throws IllegalArgumentException if {@code byteSize} is negative or too large, or {@code ptr}
     *                                  is not a live block of that size
     */
    public final void free(MemorySegment ptr, long byteSize) {
        Checks.byteSize("byteSize", byteSize);
        release(ptr, byteSize);
    }

    /**
     * Makes a block and records it live.
     *
     * @param byteSize a valid size
     * @param zeroed   whether the block must read as zeros
     * @return the block, or NULL on exhaustion
     */
    abstract MemorySegment allocate(long byteSize, boolean zeroed);

    /**
     * Copies the first {@code byteSize} bytes of one live block into another.
     *
     * @param from     the source
     * @param to       the destination
     * @param byteSize the bytes to copy, positive
     */
    abstract void copy(MemorySegment from, MemorySegment to, long byteSize);

    /**
     * Removes a block from the live set and gives it back.
     *
     * @param ptr      the block, NULL being a no-op
     * @param byteSize its size
     * @throws IllegalArgumentException if {@code ptr} is not a live block of that size
     */
    abstract void release(MemorySegment ptr, long byteSize);
}
