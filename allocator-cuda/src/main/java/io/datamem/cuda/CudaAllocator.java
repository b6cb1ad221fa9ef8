package io.datamem.cuda;

import io.datamem.DataMemAllocator;
import io.datamem.MemoryTraits;
import io.datamem.cuda.internal.CudaBlocks;

import java.lang.foreign.MemorySegment;

/**
 * What datamem's CUDA allocators share: one device, the NEP 49 entry points with their argument
 * checks, and the bookkeeping of live blocks that turns a wrong-size, double or foreign free into an
 * {@link IllegalArgumentException} before any CUDA call. {@code malloc(0)} returns a unique
 * pointer, {@code calloc} zeroes, {@code realloc} allocates, copies and frees (a failed allocation
 * leaves the old block untouched), exhaustion returns NULL and every other CUDA error is an
 * {@link io.datamem.BackendException} naming the error code. Each subclass says where its memory
 * lives. Thread-safe.
 */
public abstract sealed class CudaAllocator implements DataMemAllocator
        permits CudaDeviceAllocator, CudaManagedAllocator, CudaPinnedAllocator, CudaRegisteredAllocator {

    private final CudaBlocks blocks;
    private final int device;
    private final MemoryTraits traits;

    CudaAllocator(CudaBlocks blocks, int device, MemoryTraits traits) {
        this.blocks = blocks;
        this.device = device;
        this.traits = traits;
    }

    /**
     * The device ordinal: the device whose context allocates, pins or registers the memory.
     *
     * @return the ordinal
     */
    public final int device() {
        return device;
    }

    @Override
    public final MemorySegment malloc(long byteSize) {
        return blocks.malloc(byteSize);
    }

    @Override
    public final MemorySegment calloc(long count, long elementByteSize) {
        return blocks.calloc(count, elementByteSize);
    }

    @Override
    public final MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        return blocks.realloc(ptr, oldByteSize, newByteSize);
    }

    @Override
    public final void free(MemorySegment ptr, long byteSize) {
        blocks.free(ptr, byteSize);
    }

    @Override
    public final MemoryTraits traits() {
        return traits;
    }

    /**
     * The number of blocks allocated and not freed.
     *
     * @return the count
     */
    public final int liveBlocks() {
        return blocks.liveBlocks();
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + blocks.name() + "]";
    }
}
