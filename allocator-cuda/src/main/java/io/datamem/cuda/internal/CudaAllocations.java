package io.datamem.cuda.internal;

import java.lang.foreign.MemorySegment;

/**
 * The blocks of one CUDA allocator made by a driver allocation call ({@code cuMemHostAlloc},
 * {@code cuMemAlloc}, {@code cuMemAllocManaged}): allocation with NULL on exhaustion, zeroing on
 * the device or the host, copies for reallocation, and frees after the work enqueued on a block.
 * Internal.
 */
public final class CudaAllocations extends CudaBlocks {

    /** The allocation call. */
    public enum Kind {
        /** Page-locked host memory, {@code cuMemHostAlloc}. */
        PINNED(CudaRuntime.Alloc.HOST),
        /** Device memory, {@code cuMemAlloc}. */
        DEVICE(CudaRuntime.Alloc.DEVICE),
        /** Managed memory, {@code cuMemAllocManaged}. */
        MANAGED(CudaRuntime.Alloc.MANAGED);

        final CudaRuntime.Alloc call;

        Kind(CudaRuntime.Alloc call) {
            this.call = call;
        }
    }

    private final Kind kind;
    private final int device;
    private final int flags;

    /**
     * The blocks of an allocator.
     *
     * @param kind   the allocation call
     * @param device the device ordinal (checked by the caller)
     * @param flags  the call's flags
     * @param name   the handler name, for messages
     * @return the (empty) blocks
     */
    public static CudaAllocations of(Kind kind, int device, int flags, String name) {
        return new CudaAllocations(kind, device, flags, name);
    }

    private CudaAllocations(Kind kind, int device, int flags, String name) {
        super(name);
        this.kind = kind;
        this.device = device;
        this.flags = flags;
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
     * Allocates a block ({@code max(byteSize, 1)} bytes, so that every pointer is unique). Zeroed
     * blocks are zeroed on the device for device and globally attached managed memory, by the host
     * for pinned and host-attached managed memory.
     *
     * @param byteSize a valid size
     * @param zeroed   whether to zero it
     * @return the block, or NULL on exhaustion
     */
    @Override
    MemorySegment allocate(long byteSize, boolean zeroed) {
        long address = CudaRuntime.allocate(kind.call, device, Math.max(byteSize, 1), flags, name);
        if (address == 0) {
            return MemorySegment.NULL;
        }
        live.add(address, byteSize);
        MemorySegment p = MemorySegment.ofAddress(address);
        if (!zeroed || byteSize == 0) {
            return p;
        }
        try {
            if (hostTouches()) {
                p.reinterpret(byteSize).fill((byte) 0);
            } else {
                CudaRuntime.zero(device, address, byteSize, name);
            }
        } catch (RuntimeException | Error e) {
            release(p, byteSize);
            throw e;
        }
        return p;
    }

    /**
     * Whether the host zeroes and copies this allocator's blocks itself: pinned memory, and managed
     * memory attached to the host (which devices without concurrent managed access must not touch
     * before a stream attaches it).
     */
    private boolean hostTouches() {
        return kind == Kind.PINNED || (kind == Kind.MANAGED && flags == 2);
    }

    @Override
    void copy(MemorySegment from, MemorySegment to, long byteSize) {
        if (hostTouches()) {
            MemorySegment.copy(from.reinterpret(byteSize), 0, to.reinterpret(byteSize), 0, byteSize);
        } else {
            CudaRuntime.copy(device, from.address(), CudaRuntime.Side.DEVICE, to.address(),
                    CudaRuntime.Side.DEVICE, byteSize);
        }
    }

    /**
     * Frees a block after the work datamem enqueued on it is done.
     *
     * @param ptr      the block, NULL being a no-op
     * @param byteSize its size
     * @throws IllegalArgumentException if {@code ptr} is not a live block of that size
     */
    @Override
    void release(MemorySegment ptr, long byteSize) {
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
