package io.datamem.cuda;

import io.datamem.DataMemAllocator;
import io.datamem.MemoryKind;
import io.datamem.MemoryTraits;
import io.datamem.cuda.internal.CudaAllocations;
import io.datamem.cuda.internal.CudaInterchange;
import io.datamem.cuda.internal.CudaRegistrations;
import io.datamem.internal.Checks;
import io.datamem.internal.Libc;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * Host memory of any page-aligned host allocator, page-locked for CUDA with
 * {@code cuMemHostRegister}: handler names {@code cuda:registered(UPSTREAM)}, for example
 * {@code cuda:registered(numa:bind=pci:0000:3b:00.0)} (pinned memory on the NUMA node next to the
 * GPU) or {@code cuda:registered(hugepages:threshold=0)}.
 *
 * <p>Each block is asked of the upstream rounded up to whole pages and registered; {@code free}
 * unregisters it ({@code cuMemHostUnregister}) <em>before</em> the upstream frees it, with the
 * rounded size. The upstream must return page-aligned blocks (its traits' alignment at least the
 * page size: {@code aligned:4096}, {@code numa:...}, {@code hugepages:...,threshold=0}), so no two
 * blocks share a page. Registration costs about as much as {@code cuMemHostAlloc}: put a pool in
 * front, {@code pool(cuda:registered(numa:local))}.
 *
 * <p>Options ({@code cuMemHostRegister} flags): <em>portable</em>, <em>mapped</em>,
 * <em>read-only</em> (the device only reads the memory). Traits: the upstream's alignment and page
 * size, with {@link MemoryKind#HOST_PINNED} on {@code (CUDA_HOST, N)}, host-accessible, and
 * datamem's CUDA interchange hook; {@code traitsOf} refines the upstream's per-block traits the same
 * way. {@code calloc} asks the upstream for zeroed memory; {@code realloc} allocates, copies and
 * frees; exhaustion (of the upstream, or {@code CUDA_ERROR_OUT_OF_MEMORY} from the registration)
 * returns NULL with nothing held; other CUDA errors throw {@link io.datamem.BackendException}.
 * Thread-safe if the upstream is.
 */
public final class CudaRegisteredAllocator extends CudaAllocator {

    /** {@code CU_MEMHOSTREGISTER_PORTABLE}. */
    static final int PORTABLE = 1;
    /** {@code CU_MEMHOSTREGISTER_DEVICEMAP}. */
    static final int MAPPED = 2;
    /** {@code CU_MEMHOSTREGISTER_READ_ONLY}. */
    static final int READ_ONLY = 8;

    private final DataMemAllocator upstream;
    private final Builder options;
    private final CudaRegistrations blocks;

    private CudaRegisteredAllocator(Builder b, String name) {
        this(b, CudaRegistrations.of(b.upstream, b.device, b.flags(), Libc.pageSize(), name));
    }

    private CudaRegisteredAllocator(Builder b, CudaRegistrations blocks) {
        super(blocks, b.device, refine(b.upstream.traits(), b.device));
        this.upstream = b.upstream;
        this.options = b.copy();
        this.blocks = blocks;
    }

    /**
     * A builder over an upstream host allocator: device 0, no options.
     *
     * @param upstream the allocator blocks come from
     * @return a new builder
     * @throws NullPointerException if {@code upstream} is null
     */
    public static Builder builder(DataMemAllocator upstream) {
        return new Builder(Objects.requireNonNull(upstream, "upstream"));
    }

    /**
     * An upstream's traits as this allocator reports them.
     *
     * @param upstream the upstream's traits
     * @param device   the device ordinal
     * @return {@link MemoryKind#HOST_PINNED} on {@code (CUDA_HOST, device)}, host-accessible, the
     *         upstream's alignment and page size, with datamem's CUDA interchange hook
     * @throws IllegalArgumentException if {@code device} is negative
     */
    public static MemoryTraits refine(MemoryTraits upstream, int device) {
        return upstream.withPlacement(MemoryKind.HOST_PINNED, CudaInterchange.device(MemoryKind.HOST_PINNED, device),
                true).withInterchange(CudaInterchange.of(MemoryKind.HOST_PINNED, device));
    }

    /**
     * Checks an upstream can be registered: host memory, not already pinned or on a device, blocks
     * starting on page boundaries.
     *
     * @param upstream the upstream
     * @throws IllegalArgumentException if it cannot, saying why and what to use instead
     */
    public static void checkUpstream(DataMemAllocator upstream) {
        MemoryTraits t = upstream.traits();
        if (t.kind() != MemoryKind.HOST || !t.hostAccessible()) {
            throw new IllegalArgumentException("upstream: " + upstream + " allocates " + t.kind() + " memory on "
                    + t.device() + " (expected: ordinary host memory to page-lock, such as aligned:4096, numa:local or"
                    + " hugepages:threshold=0)");
        }
        long page = Libc.pageSize();
        if (t.byteAlignment() < page) {
            throw new IllegalArgumentException("upstream: " + upstream + " guarantees " + t.byteAlignment()
                    + "-byte alignment (expected: at least the page size " + page + ": CUDA page-locks whole pages,"
                    + " and blocks sharing a page cannot both be registered; use aligned:" + page + ", numa:...,"
                    + " or hugepages:threshold=0)");
        }
    }

    /** Builds {@link CudaRegisteredAllocator}s. Not thread-safe. */
    public static final class Builder {
        private final DataMemAllocator upstream;
        private int device;
        private boolean portable;
        private boolean mapped;
        private boolean readOnly;
        private String name;

        private Builder(DataMemAllocator upstream) {
            this.upstream = upstream;
        }

        /**
         * The device whose context registers the memory (default 0).
         *
         * @param ordinal the device ordinal
         * @return this builder
         * @throws IllegalArgumentException if {@code ordinal} is negative
         */
        public Builder device(int ordinal) {
            if (ordinal < 0) {
                throw new IllegalArgumentException("device: " + ordinal + " (expected: a CUDA device ordinal >= 0)");
            }
            this.device = ordinal;
            return this;
        }

        /**
         * {@code CU_MEMHOSTREGISTER_PORTABLE}: registered for every CUDA context.
         *
         * @param value whether to set it
         * @return this builder
         */
        public Builder portable(boolean value) {
            this.portable = value;
            return this;
        }

        /**
         * {@code CU_MEMHOSTREGISTER_DEVICEMAP}: mapped into the device's address space.
         *
         * @param value whether to set it
         * @return this builder
         */
        public Builder mapped(boolean value) {
            this.mapped = value;
            return this;
        }

        /**
         * {@code CU_MEMHOSTREGISTER_READ_ONLY}: the device only reads the memory.
         *
         * @param value whether to set it
         * @return this builder
         */
        public Builder readOnly(boolean value) {
            this.readOnly = value;
            return this;
        }

        /**
         * The handler name messages use (default: {@code cuda:registered...(UPSTREAM)} with the
         * upstream's description).
         *
         * @param handlerName the name
         * @return this builder
         * @throws NullPointerException if {@code handlerName} is null
         */
        public Builder name(String handlerName) {
            this.name = Objects.requireNonNull(handlerName, "handlerName");
            return this;
        }

        int flags() {
            return (portable ? PORTABLE : 0) | (mapped ? MAPPED : 0) | (readOnly ? READ_ONLY : 0);
        }

        Builder copy() {
            Builder b = new Builder(upstream);
            b.device = device;
            b.portable = portable;
            b.mapped = mapped;
            b.readOnly = readOnly;
            b.name = name;
            return b;
        }

        /**
         * Builds the allocator.
         *
         * @return the allocator
         * @throws IllegalArgumentException if the upstream's memory cannot be registered (see
         *                                  {@link #checkUpstream}), or the device does not exist
         * @throws IllegalStateException    if CUDA is unavailable here (the message says why)
         */
        public CudaRegisteredAllocator build() {
            checkUpstream(upstream);
            CudaAllocations.checkDevice(device);
            String n = name != null ? name : "cuda:registered" + (device != 0 ? "=" + device : "")
                    + (portable ? ",portable" : "") + (mapped ? ",mapped" : "") + (readOnly ? ",readonly" : "")
                    + "(" + upstream + ")";
            return new CudaRegisteredAllocator(this, n);
        }
    }

    /**
     * The allocator blocks come from.
     *
     * @return the upstream
     */
    public DataMemAllocator upstream() {
        return upstream;
    }

    /**
     * Whether blocks are registered for every context.
     *
     * @return the portable option
     */
    public boolean portable() {
        return options.portable;
    }

    /**
     * Whether blocks are mapped into the device's address space.
     *
     * @return the mapped option
     */
    public boolean mapped() {
        return options.mapped;
    }

    /**
     * Whether blocks are registered read-only for the device.
     *
     * @return the read-only option
     */
    public boolean readOnly() {
        return options.readOnly;
    }

    /**
     * The bytes the upstream provides for a block of a size.
     *
     * @param byteSize the size asked of this allocator
     * @return the size rounded up to whole pages
     * @throws IllegalArgumentException if {@code byteSize} is negative or above
     *                                  {@link DataMemAllocator#MAX_BYTE_SIZE}
     */
    public long upstreamByteSize(long byteSize) {
        Checks.byteSize("byteSize", byteSize);
        return blocks.upstreamByteSize(byteSize);
    }

    @Override
    public MemoryTraits traitsOf(MemorySegment ptr) {
        return refine(upstream.traitsOf(ptr), options.device);
    }
}
