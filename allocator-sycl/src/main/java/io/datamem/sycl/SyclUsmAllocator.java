package io.datamem.sycl;

import io.datamem.DataMemAllocator;
import io.datamem.MemoryTraits;
import io.datamem.impl.os.LiveBlocks;
import io.datamem.internal.Checks;
import io.datamem.internal.Libc;
import io.datamem.sycl.internal.ClError;
import io.datamem.sycl.internal.UsmFunctions;
import io.datamem.usm.UsmKind;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Objects;

import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * SYCL unified shared memory of one kind (host, shared or device) on one device, through the OpenCL
 * extension {@code cl_intel_unified_shared_memory}: what SYCL's {@code malloc_host},
 * {@code malloc_shared} and {@code malloc_device} return on that device's context.
 *
 * <ul>
 *   <li>Alignment: every block is aligned to {@link #byteAlignment()}. Alignments up to the device's
 *       {@link SyclDevice#baseAddressAlignment() base address alignment} are asked of the runtime
 *       (and checked); larger ones, or ones the runtime does not honour, are provided by
 *       over-allocating and keeping the real base for the free.</li>
 *   <li>{@code malloc(0)} returns a unique pointer (OpenCL rejects size 0, so it holds one byte),
 *       freed with size 0.</li>
 *   <li>{@code calloc} zeroes on the host for host memory and with {@code clEnqueueMemFillINTEL}
 *       for shared and device memory; {@code realloc} allocates, copies ({@link SyclQueue#copy}) and
 *       frees, leaving the old block untouched when the new allocation fails.</li>
 *   <li>Exhaustion ({@code CL_OUT_OF_RESOURCES}, {@code CL_OUT_OF_HOST_MEMORY},
 *       {@code CL_MEM_OBJECT_ALLOCATION_FAILURE}, or {@code CL_INVALID_BUFFER_SIZE} for sizes above
 *       the device's largest allocation) returns NULL; other OpenCL errors throw a
 *       {@link io.datamem.BackendException} naming the code.</li>
 *   <li>{@code free} waits for the commands that may still use the block: it uses
 *       {@code clMemBlockingFreeINTEL}, except on PoCL, whose blocking free crashes under
 *       concurrent use, where it waits for the allocator's queue ({@code clFinish}) and calls
 *       {@code clMemFreeINTEL}. Freeing a pointer that is not a live allocation of the context (a
 *       double free, a foreign pointer) is an {@link IllegalArgumentException}.</li>
 * </ul>
 *
 * <p>Traits: {@link io.datamem.MemoryKind#HOST_PINNED}, {@link io.datamem.MemoryKind#MANAGED} or
 * {@link io.datamem.MemoryKind#DEVICE}, on device {@code (kDLOneAPI, ordinal)}; device memory is not
 * host-accessible (arrays on it have no host view; copy with {@link SyclQueue#copy(io.datamem.array.NDArray,
 * io.datamem.array.NDArray)}). The traits carry the queue's SYCL
 * {@link io.datamem.DeviceInterchange}, so arrays on this memory (and on pools over it) export
 * through the SYCL USM array interface ({@code syclobj}: the queue's OpenCL handles), extended
 * buffers (device id {@code io.datamem.sycl}, {@link SyclDeviceInfo}) and DLPack
 * ({@code kDLOneAPI}). Thread-safe.
 */
public final class SyclUsmAllocator implements DataMemAllocator {

    /** The largest alignment accepted: 2^40 bytes. */
    public static final long MAX_BYTE_ALIGNMENT = 1L << 40;

    private record Block(long base, long userAddress, long byteSize) {
    }

    private final SyclQueue queue;
    private final UsmKind kind;
    private final long byteAlignment;
    private final long directAlignment;
    private final String name;
    private final MemoryTraits traits;
    private final UsmFunctions usm;
    private final MemorySegment context;
    private final MemorySegment device;
    // Blocks whose address or size differ from the runtime's allocation (over-aligned, size 0), by
    // the address the caller has and by the runtime's base. Liveness itself is the runtime's to check.
    private final LiveBlocks<Block> byUserAddress;
    private final LiveBlocks<Block> byBase;

    private SyclUsmAllocator(Builder b, SyclQueue queue) {
        this.queue = queue;
        this.kind = b.kind;
        SyclDevice d = queue.device();
        this.directAlignment = Math.min(d.baseAddressAlignment(), 1L << 30);
        this.byteAlignment = b.byteAlignment > 0 ? b.byteAlignment : directAlignment;
        this.name = b.name != null ? b.name : "sycl:" + kind.dpctlName() + ":" + d.filterString();
        this.traits = new MemoryTraits(kind.memoryKind(), d.dlpackDevice(), kind.hostAccessible(), byteAlignment,
                Libc.pageSize(), queue.interchange());
        this.usm = queue.usm();
        this.context = queue.contextHandle();
        this.device = queue.deviceHandle();
        this.byUserAddress = LiveBlocks.of(Block::byteSize, LiveBlocks.Refusals.of(name));
        this.byBase = LiveBlocks.of(Block::byteSize, LiveBlocks.Refusals.of(name));
    }

    /**
     * An allocator of a kind on the default device's shared queue.
     *
     * @param kind host, shared or device
     * @return the allocator
     * @throws NullPointerException        if {@code kind} is null
     * @throws IllegalArgumentException    if {@code kind} is {@link UsmKind#UNKNOWN}
     * @throws IllegalStateException       if no device can allocate the kind, with the reason
     * @throws io.datamem.BackendException if OpenCL cannot create the context or queue
     */
    public static SyclUsmAllocator create(UsmKind kind) {
        return builder(kind).build();
    }

    /**
     * An allocator of a kind on a queue's context and device.
     *
     * @param kind  host, shared or device
     * @param queue the queue
     * @return the allocator
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if {@code kind} is {@link UsmKind#UNKNOWN}
     * @throws IllegalStateException    if the device cannot allocate the kind, or the queue is closed
     */
    public static SyclUsmAllocator create(UsmKind kind, SyclQueue queue) {
        return builder(kind).queue(queue).build();
    }

    /**
     * A builder for an allocator of a kind.
     *
     * @param kind host, shared or device
     * @return the builder
     * @throws NullPointerException     if {@code kind} is null
     * @throws IllegalArgumentException if {@code kind} is {@link UsmKind#UNKNOWN}
     */
    public static Builder builder(UsmKind kind) {
        return new Builder(kind);
    }

    /** Builds a {@link SyclUsmAllocator}. Not thread-safe. */
    public static final class Builder {
        private final UsmKind kind;
        private SyclQueue queue;
        private SyclSelector selector;
        private long byteAlignment;
        private String name;

        private Builder(UsmKind kind) {
            Objects.requireNonNull(kind, "kind");
            if (kind == UsmKind.UNKNOWN) {
                throw new IllegalArgumentException("kind: UNKNOWN (expected: HOST, SHARED or DEVICE)");
            }
            this.kind = kind;
        }

        /**
         * Allocates in a queue's context, on its device (instead of a selected device's shared queue).
         *
         * @param queue the queue
         * @return this builder
         * @throws NullPointerException if {@code queue} is null
         */
        public Builder queue(SyclQueue queue) {
            this.queue = Objects.requireNonNull(queue, "queue");
            this.selector = null;
            return this;
        }

        /**
         * Allocates on the shared queue of the device a selector picks (the default selector unless
         * set).
         *
         * @param selector the selector
         * @return this builder
         * @throws NullPointerException if {@code selector} is null
         */
        public Builder selector(SyclSelector selector) {
            this.selector = Objects.requireNonNull(selector, "selector");
            this.queue = null;
            return this;
        }

        /**
         * Allocates on the shared queue of the device a filter selector string picks.
         *
         * @param filterSelector for example {@code opencl:gpu:0}
         * @return this builder
         * @throws NullPointerException     if {@code filterSelector} is null
         * @throws IllegalArgumentException if the selector is malformed
         */
        public Builder selector(String filterSelector) {
            return selector(SyclSelector.parse(filterSelector));
        }

        /**
         * The alignment of every block (default: the device's base address alignment).
         *
         * @param byteAlignment a power of two from 8 to {@link #MAX_BYTE_ALIGNMENT}
         * @return this builder
         * @throws IllegalArgumentException if {@code byteAlignment} is not a power of two in range
         */
        public Builder byteAlignment(long byteAlignment) {
            Checks.powerOfTwo("byteAlignment", byteAlignment);
            if (byteAlignment < 8 || byteAlignment > MAX_BYTE_ALIGNMENT) {
                throw new IllegalArgumentException("byteAlignment: " + byteAlignment
                        + " (expected: a power of two from 8 to 2^40)");
            }
            this.byteAlignment = byteAlignment;
            return this;
        }

        /**
         * The name errors report as the handler (default {@code sycl:KIND:FILTER}).
         *
         * @param name for example the handler name {@code sycl:device:opencl:gpu:0}
         * @return this builder
         * @throws NullPointerException     if {@code name} is null
         * @throws IllegalArgumentException if {@code name} is blank
         */
        public Builder name(String name) {
            Objects.requireNonNull(name, "name");
            if (name.isBlank()) {
                throw new IllegalArgumentException("name: '' (expected: a handler name)");
            }
            this.name = name;
            return this;
        }

        /**
         * Builds the allocator.
         *
         * @return the allocator
         * @throws IllegalStateException       if no device can allocate the kind (with the reason), or
         *                                     the queue is closed
         * @throws io.datamem.BackendException if OpenCL cannot create the context or queue
         */
        public SyclUsmAllocator build() {
            SyclQueue q = queue;
            if (q == null) {
                SyclSelector s = selector == null ? SyclSelector.defaultSelector() : selector;
                var availability = SyclQueue.availability(s, kind);
                if (!availability.available()) {
                    throw new IllegalStateException("no SYCL USM " + kind.dpctlName()
                            + " memory for the filter selector '" + s + "': " + availability.reason());
                }
                q = SyclQueue.of(s);
            }
            q.checkOpen();
            if (!q.device().supports(kind)) {
                throw new IllegalStateException("device " + q.device() + " cannot allocate USM " + kind.dpctlName()
                        + " memory (" + ClRuntime.capabilityQuery(kind) + " is 0)");
            }
            return new SyclUsmAllocator(this, q);
        }
    }

    // ---------------------------------------------------------------------------------------------

    /**
     * The kind of memory this allocator hands out.
     *
     * @return host, shared or device
     */
    public UsmKind kind() {
        return kind;
    }

    /**
     * The queue whose context and device the memory belongs to, and whose operations copy it.
     *
     * @return the queue
     */
    public SyclQueue queue() {
        return queue;
    }

    /**
     * The alignment of every block.
     *
     * @return bytes, a power of two
     */
    public long byteAlignment() {
        return byteAlignment;
    }

    /**
     * The name errors report as the handler.
     *
     * @return for example {@code sycl:device}
     */
    public String name() {
        return name;
    }

    @Override
    public MemoryTraits traits() {
        return traits;
    }

    /**
     * What the context knows about a pointer (see {@link SyclQueue#pointerInfo}), with the blocks of
     * this allocator reported as the caller sees them: a pointer inside an over-aligned or zero-size
     * block reports that block's address and requested size rather than the runtime's larger
     * allocation.
     *
     * @param ptr any address
     * @return the information; {@link UsmPointerInfo#UNKNOWN} for foreign and freed pointers
     * @throws NullPointerException        if {@code ptr} is null
     * @throws IllegalStateException       if the queue is closed
     * @throws io.datamem.BackendException if {@code clGetMemAllocInfoINTEL} fails
     */
    public UsmPointerInfo pointerInfo(MemorySegment ptr) {
        UsmPointerInfo info = queue.pointerInfo(ptr);
        if (info.kind() != UsmKind.UNKNOWN && !byBase.isEmpty()) {
            Block b = byBase.get(info.baseAddress());
            if (b != null) {
                long offset = ptr.address() - b.userAddress;
                if (ptr.address() == b.userAddress || (offset > 0 && offset < b.byteSize)) {
                    return new UsmPointerInfo(info.kind(), b.userAddress, b.byteSize, info.device());
                }
            }
        }
        return info;
    }

    // ---------------------------------------------------------------------------------------------
    // DataMemAllocator

    @Override
    public MemorySegment malloc(long byteSize) {
        Checks.byteSize("byteSize", byteSize);
        queue.checkOpen();
        return allocate(byteSize);
    }

    @Override
    public MemorySegment calloc(long count, long elementByteSize) {
        long byteSize = Checks.callocByteSize(count, elementByteSize);
        queue.checkOpen();
        if (byteSize < 0) {
            return MemorySegment.NULL;
        }
        MemorySegment p = allocate(byteSize);
        if (p.address() == 0 || byteSize == 0) {
            return p;
        }
        try {
            if (kind == UsmKind.HOST) {
                p.reinterpret(byteSize).fill((byte) 0);
            } else {
                queue.fill(p, (byte) 0, byteSize);
            }
        } catch (RuntimeException e) {
            release(p);
            throw e;
        }
        return p;
    }

    @Override
    public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        Objects.requireNonNull(ptr, "ptr");
        Checks.byteSize("oldByteSize", oldByteSize);
        Checks.byteSize("newByteSize", newByteSize);
        queue.checkOpen();
        if (ptr.address() == 0) {
            return allocate(newByteSize);
        }
        MemorySegment moved = allocate(newByteSize);
        if (moved.address() == 0) {
            return MemorySegment.NULL;
        }
        long keep = Math.min(oldByteSize, newByteSize);
        try {
            if (keep > 0) {
                if (kind.hostAccessible()) {
                    MemorySegment.copy(ptr.reinterpret(keep), 0, moved.reinterpret(keep), 0, keep);
                } else {
                    queue.copy(moved, ptr, keep);
                }
            }
        } catch (RuntimeException e) {
            release(moved);
            throw e;
        }
        try {
            free(ptr, oldByteSize);
        } catch (RuntimeException e) {
            release(moved);
            throw e;
        }
        return moved;
    }

    @Override
    public void free(MemorySegment ptr, long byteSize) {
        Objects.requireNonNull(ptr, "ptr");
        Checks.notNegative("byteSize", byteSize);
        if (ptr.address() == 0) {
            return;
        }
        queue.checkOpen();
        Block b = byUserAddress.take(ptr.address());
        if (b != null) {
            byBase.take(b.base);
        }
        long base = b == null ? ptr.address() : b.base;
        int status = usm.freeWhenIdle(context, queue.queueHandle(), MemorySegment.ofAddress(base));
        if (status == ClError.SUCCESS) {
            return;
        }
        if (b != null) {
            track(b);
        }
        if (status == ClError.INVALID_VALUE) {
            throw new IllegalArgumentException("ptr: 0x" + Long.toHexString(ptr.address()) + " (expected: a live block of"
                    + " handler '" + name + "'; " + usm.freeFunction() + " returned CL_INVALID_VALUE: freed twice, or not"
                    + " USM memory of this context)");
        }
        throw ClError.exception(name, byteSize, usm.freeFunction(), status, "at 0x" + Long.toHexString(ptr.address()));
    }

    // ---------------------------------------------------------------------------------------------

    private MemorySegment allocate(long byteSize) {
        long request = Math.max(byteSize, 1);
        if (byteAlignment <= directAlignment) {
            MemorySegment p = raw(request, (int) byteAlignment);
            if (p.address() == 0) {
                return p;
            }
            if (p.address() % byteAlignment == 0) {
                if (byteSize == 0) {
                    track(new Block(p.address(), p.address(), 0));
                }
                return p;
            }
            rawFree(p); // the runtime did not honour the alignment: over-allocate instead
        }
        if (request > MAX_BYTE_SIZE - byteAlignment) {
            return MemorySegment.NULL;
        }
        MemorySegment p = raw(request + byteAlignment - 1, (int) Math.min(byteAlignment, directAlignment));
        if (p.address() == 0) {
            return p;
        }
        long aligned = Checks.alignUp(p.address(), byteAlignment);
        track(new Block(p.address(), aligned, byteSize));
        return MemorySegment.ofAddress(aligned);
    }

    private void track(Block b) {
        byBase.add(b.base, b);
        byUserAddress.add(b.userAddress, b);
    }

    /** Frees a block this allocator just made, on an error path. */
    private void release(MemorySegment p) {
        Block b = byUserAddress.take(p.address());
        if (b != null) {
            byBase.take(b.base);
        }
        rawFree(MemorySegment.ofAddress(b == null ? p.address() : b.base));
    }

    private MemorySegment raw(long byteSize, int alignment) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment status = arena.allocate(JAVA_INT);
            MemorySegment p = switch (kind) {
                case HOST -> usm.hostAlloc(context, byteSize, alignment, status);
                case SHARED -> usm.sharedAlloc(context, device, byteSize, alignment, status);
                case DEVICE -> usm.deviceAlloc(context, device, byteSize, alignment, status);
                case UNKNOWN -> throw new IllegalStateException("unreachable");
            };
            int code = status.get(JAVA_INT, 0);
            if (p.address() != 0 && code == ClError.SUCCESS) {
                return p;
            }
            if (p.address() != 0) {
                usm.freeWhenIdle(context, queue.queueHandle(), p);
            }
            if (ClError.isExhaustion(code)) {
                return MemorySegment.NULL;
            }
            throw ClError.exception(name, byteSize, "cl" + switch (kind) {
                case HOST -> "Host";
                case SHARED -> "Shared";
                default -> "Device";
            } + "MemAllocINTEL", code, "alignment " + alignment + " on " + queue.device().filterString());
        }
    }

    private void rawFree(MemorySegment base) {
        int status = usm.freeWhenIdle(context, queue.queueHandle(), base);
        if (status != ClError.SUCCESS) {
            throw ClError.exception(name, 0, usm.freeFunction(), status, "at 0x" + Long.toHexString(base.address()));
        }
    }

    /** For tests: blocks whose address or size differ from the runtime's allocation, still live. */
    int trackedBlocks() {
        return byUserAddress.count();
    }

    @Override
    public String toString() {
        return "SyclUsmAllocator[" + kind.dpctlName() + ", " + queue.device() + ", alignment " + byteAlignment + "]";
    }
}
