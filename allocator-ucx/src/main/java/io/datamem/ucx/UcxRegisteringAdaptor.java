package io.datamem.ucx;

import io.datamem.BackendException;
import io.datamem.DataMemAllocator;
import io.datamem.impl.ForwardingAllocator;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * The {@code +ucx} adaptor: registers every block of its upstream with a {@link UcxContext}
 * ({@code ucp_mem_map}) when it is allocated and unmaps it before it is freed, so transfers from and
 * to the block need no registration and the block can be {@linkplain UcxContext#export exported} to
 * peers. Frees forward the size they were given. A failed registration frees the upstream block and
 * throws; nothing stays registered after its block is freed, so a key for a freed block is refused.
 */
public final class UcxRegisteringAdaptor extends ForwardingAllocator {

    private final UcxContext context;

    private UcxRegisteringAdaptor(DataMemAllocator upstream, UcxContext context) {
        super(upstream);
        this.context = context;
    }

    /**
     * Wraps an upstream.
     *
     * @param upstream the allocator whose blocks are registered (host memory)
     * @param context  the context to register with
     * @return the adaptor
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if the upstream's memory is not host-accessible
     */
    public static UcxRegisteringAdaptor of(DataMemAllocator upstream, UcxContext context) {
        Objects.requireNonNull(upstream, "upstream");
        Objects.requireNonNull(context, "context");
        if (!upstream.traits().hostAccessible()) {
            throw new IllegalArgumentException("upstream: " + upstream + " gives " + upstream.traits().kind()
                    + " memory (expected: host memory; this module registers host memory only)");
        }
        return new UcxRegisteringAdaptor(upstream, context);
    }

    /**
     * The context the blocks are registered with.
     *
     * @return the context
     */
    public UcxContext context() {
        return context;
    }

    @Override
    public MemorySegment malloc(long byteSize) {
        Sizes.byteSize("byteSize", byteSize);
        return registered(upstream().malloc(byteSize), byteSize);
    }

    @Override
    public MemorySegment calloc(long count, long elementByteSize) {
        long n = Sizes.product(count, elementByteSize);
        if (n < 0 || n > io.datamem.DataMemAllocator.MAX_BYTE_SIZE) {
            return MemorySegment.NULL;
        }
        return registered(upstream().calloc(count, elementByteSize), n);
    }

    /**
     * A new registered block, the contents copied, the old block unmapped and freed; on failure the
     * old block is untouched and NULL is returned.
     */
    @Override
    public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        return Sizes.reallocByCopy(this, this::registeredBlock, ptr, oldByteSize, newByteSize);
    }

    /** Refuses a pointer that is not a block this adaptor registered (before a realloc reads it). */
    private void registeredBlock(MemorySegment ptr, long byteSize) {
        if (byteSize == 0) {
            return;   // nothing is read; the upstream's free checks the block
        }
        UcxRegistration r = context.registrationOf(ptr.address(), byteSize);
        if (r == null || r.origin() != UcxRegistration.Origin.BLOCK || r.address() != ptr.address()) {
            throw new IllegalArgumentException("realloc: 0x" + Long.toHexString(ptr.address()) + " (" + byteSize
                    + " bytes) (expected: a live block of this +ucx adaptor on " + context.id() + ")");
        }
    }

    @Override
    public void free(MemorySegment ptr, long byteSize) {
        Sizes.byteSize("byteSize", byteSize);
        if (ptr == null || ptr.equals(MemorySegment.NULL)) {
            return;
        }
        if (byteSize > 0) {
            UcxRegistration r = context.registrationOf(ptr.address(), byteSize);
            if (r != null && r.origin() == UcxRegistration.Origin.BLOCK && r.address() == ptr.address()) {
                context.unmap(r);
            }
        }
        upstream().free(ptr, byteSize);
    }

    private MemorySegment registered(MemorySegment block, long byteSize) {
        if (block.equals(MemorySegment.NULL) || byteSize == 0) {
            return block;
        }
        try {
            context.map(block.address(), byteSize, UcxRegistration.Origin.BLOCK, null);
        } catch (RuntimeException e) {
            upstream().free(block, byteSize);
            int code = e instanceof UcxException u ? u.status() : 0;
            throw new BackendException("+ucx", byteSize, "ucx", "ucp_mem_map", code,
                    code == 0 ? "none" : io.datamem.ucx.internal.Ucp.statusString(code), e.getMessage());
        }
        return block;
    }

    @Override
    public String toString() {
        return "UcxRegisteringAdaptor[" + upstream() + ", " + context.id() + "]";
    }
}
