package io.datamem.cuda.internal;

import io.datamem.DataMemAllocator;
import io.datamem.internal.Checks;

import java.lang.foreign.MemorySegment;

/**
 * Blocks of an upstream host allocator page-locked with {@code cuMemHostRegister}. Each block is
 * asked of the upstream rounded up to whole pages (the upstream's blocks start on page
 * boundaries), so no two blocks share a page: CUDA registers whole pages, and a page registered
 * twice is an error. Internal.
 */
public final class CudaRegistrations extends CudaBlocks {

    private final DataMemAllocator upstream;
    private final int device;
    private final int flags;
    private final long pageSize;

    /**
     * Registrations over an upstream.
     *
     * @param upstream the host allocator (page-aligned, checked by the caller)
     * @param device   the device whose context registers (checked by the caller)
     * @param flags    {@code cuMemHostRegister} flags
     * @param pageSize the page size blocks are rounded to
     * @param name     the handler name, for messages
     * @return the (empty) registrations
     */
    public static CudaRegistrations of(DataMemAllocator upstream, int device, int flags, long pageSize,
                                       String name) {
        return new CudaRegistrations(upstream, device, flags, pageSize, name);
    }

    private CudaRegistrations(DataMemAllocator upstream, int device, int flags, long pageSize, String name) {
        super(name);
        this.upstream = upstream;
        this.device = device;
        this.flags = flags;
        this.pageSize = pageSize;
    }

    /**
     * The bytes asked of the upstream for a block.
     *
     * @param byteSize the size requested, valid
     * @return {@code byteSize} rounded up to whole pages, at least one page
     */
    public long upstreamByteSize(long byteSize) {
        return Checks.alignUp(Math.max(byteSize, 1), pageSize);
    }

    /**
     * Allocates from the upstream and registers.
     *
     * @param byteSize a valid size
     * @param zeroed   whether to ask the upstream for zeroed memory
     * @return the block, or NULL when the upstream or the registration ran out
     */
    @Override
    MemorySegment allocate(long byteSize, boolean zeroed) {
        long rounded = upstreamByteSize(byteSize);
        MemorySegment p = zeroed ? upstream.calloc(1, rounded) : upstream.malloc(rounded);
        if (p.address() == 0) {
            return MemorySegment.NULL;
        }
        int rc;
        try {
            rc = CudaRuntime.register(device, p.address(), rounded, flags);
        } catch (RuntimeException | Error e) {
            upstream.free(p, rounded);
            throw e;
        }
        if (rc != CudaErrors.SUCCESS) {
            upstream.free(p, rounded);
            if (CudaErrors.isExhaustion(rc)) {
                return MemorySegment.NULL;
            }
            throw CudaErrors.exception(name, byteSize, "cuMemHostRegister", rc,
                    rc == CudaErrors.HOST_MEMORY_ALREADY_REGISTERED ? "the upstream returned pages already"
                            + " registered (does it share pages between blocks?)" : null);
        }
        live.add(p.address(), byteSize);
        return p;
    }

    @Override
    void copy(MemorySegment from, MemorySegment to, long byteSize) {
        MemorySegment.copy(from.reinterpret(byteSize), 0, to.reinterpret(byteSize), 0, byteSize);
    }

    /**
     * Unregisters a block, then frees it through the upstream with the size it was asked for. If
     * unregistering fails the block is not given back to the upstream (the device may still map
     * it) and the {@link io.datamem.BackendException} is thrown.
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
        RuntimeException waiting = null;
        try {
            StreamRecords.global().forget(address);
        } catch (RuntimeException e) {
            waiting = e;   // still unregister and free; report it afterwards
        }
        CudaRuntime.unregister(device, address, name, byteSize);
        upstream.free(ptr, upstreamByteSize(byteSize));
        if (waiting != null) {
            throw waiting;
        }
    }
}
