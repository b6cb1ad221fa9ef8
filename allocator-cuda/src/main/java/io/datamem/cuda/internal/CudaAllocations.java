package io.datamem.cuda.internal;

import java.lang.foreign.MemorySegment;

/**
 * The blocks of one CUDA allocator made by a runtime allocation call ({@code cudaHostAlloc},
 * {@code cudaMalloc}, {@code cudaMallocManaged}): allocation with NULL on exhaustion, zeroing,
 * reallocation by copy, and checked frees. Arguments are validated by the public allocators before
 * they get here. Internal.
 */
public final class CudaAllocations {

    /** The allocation call. */
    public enum Kind {
        /** Page-locked host memory, {@code cudaHostAlloc}. */
        PINNED(CudaRuntime.Alloc.HOST),
        /** Device memory, {@code cudaMalloc}. */
        DEVICE(CudaRuntime.Alloc.DEVICE),
        /** Managed memory, {@code cudaMallocManaged}. */
        MANAGED(CudaRuntime.Alloc.MANAGED);

        final CudaRuntime.Alloc call;

        Kind(CudaRuntime.Alloc call) {
            this.call = call;
        }
    }

    private final Kind kind;
    private final int device;
    private final int flags;
    private final String name;
    private final LiveBlocks live;

    /**
     * The blocks of an allocator.
     *
     * @param kind   the allocation call
     * @param device the device ordinal (checked by the caller)
     * @param flags  the call's flags
     * @param name   the handler name, for messages
     */
    public CudaAllocations(Kind kind, int device, int flags, String name) {
        this.kind = kind;
        this.device = device;
        this.flags = flags;
        this.name = name;
        this.live = new LiveBlocks(name);
    }

    /**
     * Checks a device ordinal and that CUDA is available.
     *
     * @param device the ordinal
     * @throws IllegalArgumentException if negative or no such device exists
     * @throws IllegalStateException    if CUDA is unavailable
     */
    public static void checkDevice(int device) {
        CudaRuntime.checkDevice(device);
    }

    /**
     * The device ordinal.
     *
     * @return the ordinal
     */
    public int device() {
        return device;
    }

    /**
     * The handler name used in messages.
     *
     * @return the name
     */
    public String name() {
        return name;
    }

    /**
     * The number of live blocks.
     *
     * @return the count
     */
    public int liveBlocks() {
        return live.count();
    }

    /**
     * Allocates a block ({@code max(byteSize, 1)} bytes, so that every pointer is unique).
     *
     * @param byteSize a valid size
     * @return the block, or NULL on exhaustion
     */
    public MemorySegment allocate(long byteSize) {
        long address = CudaRuntime.allocate(kind.call, device, Math.max(byteSize, 1), flags, name);
        if (address == 0) {
            return MemorySegment.NULL;
        }
        live.add(address, byteSize);
        return MemorySegment.ofAddress(address);
    }

    /**
     * Whether the host zeroes and copies this allocator's blocks itself: pinned memory, and managed
     * memory attached to the host (which devices without concurrent managed access must not touch
     * before a stream attaches it).
     */
    private boolean hostTouches() {
        return kind == Kind.PINNED || (kind == Kind.MANAGED && flags == 2);
    }

    /**
     * Allocates a zeroed block: on the device for device and globally attached managed memory, by
     * the host for pinned and host-attached managed memory.
     *
     * @param byteSize a valid size
     * @return the block, or NULL on exhaustion
     */
    public MemorySegment allocateZeroed(long byteSize) {
        MemorySegment p = allocate(byteSize);
        if (p.address() == 0 || byteSize == 0) {
            return p;
        }
        try {
            if (hostTouches()) {
                p.reinterpret(byteSize).fill((byte) 0);
            } else {
                CudaRuntime.zero(device, p.address(), byteSize, name);
            }
        } catch (RuntimeException | Error e) {
            release(p, byteSize);
            throw e;
        }
        return p;
    }

    /**
     * Reallocates by allocating, copying and freeing: a NULL result leaves the old block untouched.
     *
     * @param ptr         the block, or NULL
     * @param oldByteSize its size
     * @param newByteSize the new size
     * @return the new block, or NULL on exhaustion
     * @throws IllegalArgumentException if {@code ptr} is not a live block of that size
     */
    public MemorySegment reallocate(MemorySegment ptr, long oldByteSize, long newByteSize) {
        if (ptr.address() == 0) {
            return allocate(newByteSize);
        }
        live.check(ptr.address(), oldByteSize, "realloc");
        MemorySegment moved = allocate(newByteSize);
        if (moved.address() == 0) {
            return MemorySegment.NULL;
        }
        long keep = Math.min(oldByteSize, newByteSize);
        try {
            StreamRecords.global().await(ptr.address());
            if (keep > 0) {
                if (hostTouches()) {
                    MemorySegment.copy(ptr.reinterpret(keep), 0, moved.reinterpret(keep), 0, keep);
                } else {
                    CudaRuntime.copy(device, ptr.address(), CudaRuntime.Side.DEVICE, moved.address(),
                            CudaRuntime.Side.DEVICE, keep);
                }
            }
        } catch (RuntimeException | Error e) {
            release(moved, newByteSize);
            throw e;
        }
        release(ptr, oldByteSize);
        return moved;
    }

    /**
     * Frees a block after the work datamem enqueued on it is done.
     *
     * @param ptr      the block, NULL being a no-op
     * @param byteSize its size
     * @throws IllegalArgumentException if {@code ptr} is not a live block of that size
     */
    public void release(MemorySegment ptr, long byteSize) {
        long address = ptr.address();
        if (address == 0) {
            return;
        }
        live.remove(address, byteSize, "free");
        try {
            StreamRecords.global().forget(address);
        } finally {
            CudaRuntime.free(kind.call, device, address, name, byteSize);
        }
    }
}
