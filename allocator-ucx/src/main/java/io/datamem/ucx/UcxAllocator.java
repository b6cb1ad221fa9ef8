package io.datamem.ucx;

import io.datamem.DataMemAllocator;
import io.datamem.MemoryTraits;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * The {@code ucx} leaf allocator: UCX allocates registered memory ({@code ucp_mem_map} with
 * {@code UCP_MEM_MAP_ALLOCATE}, by the first of the context's
 * {@linkplain UcxContext.Options#allocationMethods() allocation methods} that works here: by default
 * {@link UcxContext#ALLOC_PRIO}, transparent huge pages or anonymous {@code mmap} (whole pages), not
 * UCX's default {@code md:sysv} first, which allocates in shared memory and fills it for a huge
 * request; a context opened with {@link UcxContext#SHARED_MEMORY_ALLOC_PRIO} allocates in POSIX
 * shared memory first, so that peers on this host put into its blocks with one copy) and frees it
 * with {@code ucp_mem_unmap}. Every block is registered from birth, so it can be
 * {@linkplain UcxContext#export exported} and transferred without a registration. Returns NULL when
 * UCX cannot allocate; frees only blocks it allocated.
 */
public final class UcxAllocator implements DataMemAllocator {

    /** The alignment of every block: UCX allocates whole pages. */
    public static final long BYTE_ALIGNMENT = 4096;

    private final UcxContext context;

    private UcxAllocator(UcxContext context) {
        this.context = context;
    }

    /**
     * An allocator over a context.
     *
     * @param context the context that allocates and registers
     * @return the allocator
     * @throws NullPointerException if {@code context} is null
     */
    public static UcxAllocator of(UcxContext context) {
        return new UcxAllocator(Objects.requireNonNull(context, "context"));
    }

    /**
     * The context.
     *
     * @return the context
     */
    public UcxContext context() {
        return context;
    }

    @Override
    public MemorySegment malloc(long byteSize) {
        Sizes.byteSize("byteSize", byteSize);
        UcxRegistration r = context.allocate(Math.max(1, byteSize));
        return r == null ? MemorySegment.NULL : MemorySegment.ofAddress(r.address()).reinterpret(byteSize);
    }

    @Override
    public MemorySegment calloc(long count, long elementByteSize) {
        long n = Sizes.product(count, elementByteSize);
        if (n < 0 || n > io.datamem.DataMemAllocator.MAX_BYTE_SIZE) {
            return MemorySegment.NULL;
        }
        MemorySegment s = malloc(n);
        if (!s.equals(MemorySegment.NULL) && n > 0) {
            s.fill((byte) 0);
        }
        return s;
    }

    @Override
    public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        return Sizes.reallocByCopy(this, this::liveBlock, ptr, oldByteSize, newByteSize);
    }

    /**
     * Unmaps (and so frees) a block this allocator made.
     *
     * @throws IllegalArgumentException if {@code ptr} is not a live block of this allocator
     */
    @Override
    public void free(MemorySegment ptr, long byteSize) {
        Sizes.byteSize("byteSize", byteSize);
        if (ptr == null || ptr.equals(MemorySegment.NULL)) {
            return;
        }
        context.unmap(liveBlock(ptr, byteSize));
    }

    /** The registration of a live block of this allocator at {@code ptr}; refuses anything else. */
    private UcxRegistration liveBlock(MemorySegment ptr, long byteSize) {
        UcxRegistration r = context.registrationOf(ptr.address(), 1);
        if (r == null || r.origin() != UcxRegistration.Origin.ALLOCATED || r.address() != ptr.address()) {
            throw new IllegalArgumentException("free: 0x" + Long.toHexString(ptr.address()) + " (" + byteSize
                    + " bytes) (expected: a live block of this ucx allocator on " + context.id() + ")");
        }
        return r;
    }

    @Override
    public MemoryTraits traits() {
        return MemoryTraits.host(BYTE_ALIGNMENT);
    }

    @Override
    public String toString() {
        return "UcxAllocator[" + context.id() + "]";
    }
}
