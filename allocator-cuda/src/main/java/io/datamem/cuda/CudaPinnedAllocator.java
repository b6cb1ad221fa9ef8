package io.datamem.cuda;

import io.datamem.MemoryKind;
import io.datamem.MemoryTraits;
import io.datamem.cuda.internal.CudaAllocations;
import io.datamem.cuda.internal.CudaInterchange;

import java.util.Objects;

/**
 * Page-locked ("pinned") host memory from {@code cuMemHostAlloc}: handler names {@code cuda:pinned},
 * {@code cuda:pinned=N,portable,mapped,writecombined}.
 *
 * <p>The GPU's DMA engines read and write pinned memory directly, so copies from and to it run at
 * the full speed of the bus and may be asynchronous; pageable memory is staged through a driver
 * buffer. The host uses it as ordinary memory. Allocating it costs far more than {@code malloc}
 * (the pages are locked and mapped for the device): put a pool in front,
 * {@code pool(cuda:pinned)}.
 *
 * <p>Options ({@code cuMemHostAlloc} flags): <em>portable</em> (pinned for every CUDA context, not
 * only the device's), <em>mapped</em> (also mapped into the device's address space, so kernels may
 * read it across the bus; with unified addressing the device pointer is the host pointer),
 * <em>write-combined</em> (faster for the device to read and the host to write, very slow for the
 * host to read).
 *
 * <p>Traits: {@link MemoryKind#HOST_PINNED} on {@code (CUDA_HOST, N)}, host-accessible, 256-byte
 * aligned, host pages; exported as CPU buffers, and as DLPack {@code kDLCUDAHost} (or
 * {@code kDLCPU} when the consumer asks for the CPU). {@code malloc(0)} allocates one byte;
 * {@code calloc} zeroes on the host; {@code realloc} allocates, copies and frees; exhaustion
 * returns NULL, other CUDA errors throw {@link io.datamem.BackendException}; {@code free} checks the
 * block and its size first. Every call makes the device current on the calling thread and restores
 * the thread's device afterwards. Thread-safe.
 */
public final class CudaPinnedAllocator extends CudaAllocator {

    /** The alignment of every block. */
    public static final long BYTE_ALIGNMENT = 256;

    /** {@code CU_MEMHOSTALLOC_PORTABLE}. */
    static final int PORTABLE = 1;
    /** {@code CU_MEMHOSTALLOC_DEVICEMAP}. */
    static final int MAPPED = 2;
    /** {@code CU_MEMHOSTALLOC_WRITECOMBINED}. */
    static final int WRITE_COMBINED = 4;

    private final Builder options;

    private CudaPinnedAllocator(Builder b, String name) {
        super(CudaAllocations.of(CudaAllocations.Kind.PINNED, b.device, b.flags(), name), b.device, traits(b.device));
        this.options = b.copy();
    }

    /**
     * Pinned memory of a device's context, without options.
     *
     * @param device the device ordinal
     * @return the allocator
     * @throws IllegalArgumentException if {@code device} is negative or no such device exists
     * @throws IllegalStateException    if CUDA is unavailable here (the message says why)
     */
    public static CudaPinnedAllocator of(int device) {
        return builder().device(device).build();
    }

    /**
     * A builder: device 0, no options.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The traits of pinned memory of a device (also without a GPU, for inspection).
     *
     * @param device the device ordinal
     * @return {@link MemoryKind#HOST_PINNED} on {@code (CUDA_HOST, device)}, host-accessible,
     *         256-byte aligned, host pages, with datamem's CUDA interchange hook
     * @throws IllegalArgumentException if {@code device} is negative
     */
    public static MemoryTraits traits(int device) {
        return CudaInterchange.traits(MemoryKind.HOST_PINNED, device, BYTE_ALIGNMENT,
                CudaInterchange.pageSize(MemoryKind.HOST_PINNED));
    }

    /** Builds {@link CudaPinnedAllocator}s. Not thread-safe. */
    public static final class Builder {
        private int device;
        private boolean portable;
        private boolean mapped;
        private boolean writeCombined;
        private String name;

        private Builder() {
        }

        /**
         * The device whose context allocates the memory (default 0).
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
         * {@code CU_MEMHOSTALLOC_PORTABLE}: pinned for every CUDA context.
         *
         * @param value whether to set it
         * @return this builder
         */
        public Builder portable(boolean value) {
            this.portable = value;
            return this;
        }

        /**
         * {@code CU_MEMHOSTALLOC_DEVICEMAP}: mapped into the device's address space.
         *
         * @param value whether to set it
         * @return this builder
         */
        public Builder mapped(boolean value) {
            this.mapped = value;
            return this;
        }

        /**
         * {@code CU_MEMHOSTALLOC_WRITECOMBINED}: write-combined (fast device reads and host writes,
         * slow host reads).
         *
         * @param value whether to set it
         * @return this builder
         */
        public Builder writeCombined(boolean value) {
            this.writeCombined = value;
            return this;
        }

        /**
         * The handler name messages use (default: the canonical {@code cuda:pinned...} name).
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
            return (portable ? PORTABLE : 0) | (mapped ? MAPPED : 0) | (writeCombined ? WRITE_COMBINED : 0);
        }

        /**
         * The canonical handler name of these options.
         *
         * @return for example {@code cuda:pinned=1,portable,mapped}
         */
        public String canonicalName() {
            StringBuilder s = new StringBuilder("cuda:pinned");
            if (device != 0) {
                s.append('=').append(device);
            }
            if (portable) {
                s.append(",portable");
            }
            if (mapped) {
                s.append(",mapped");
            }
            if (writeCombined) {
                s.append(",writecombined");
            }
            return s.toString();
        }

        Builder copy() {
            Builder b = new Builder();
            b.device = device;
            b.portable = portable;
            b.mapped = mapped;
            b.writeCombined = writeCombined;
            b.name = name;
            return b;
        }

        /**
         * Builds the allocator.
         *
         * @return the allocator
         * @throws IllegalArgumentException if the device does not exist
         * @throws IllegalStateException    if CUDA is unavailable here (the message says why)
         */
        public CudaPinnedAllocator build() {
            CudaAllocations.checkDevice(device);
            return new CudaPinnedAllocator(this, name == null ? canonicalName() : name);
        }
    }

    /**
     * Whether blocks are pinned for every context.
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
     * Whether blocks are write-combined.
     *
     * @return the write-combined option
     */
    public boolean writeCombined() {
        return options.writeCombined;
    }
}
