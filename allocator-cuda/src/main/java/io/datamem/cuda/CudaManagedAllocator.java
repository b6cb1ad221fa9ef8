package io.datamem.cuda;

import io.datamem.MemoryKind;
import io.datamem.MemoryTraits;
import io.datamem.cuda.internal.CudaAllocations;
import io.datamem.cuda.internal.CudaInterchange;

import java.util.Locale;
import java.util.Objects;

/**
 * CUDA managed (unified) memory from {@code cuMemAllocManaged}: handler names
 * {@code cuda:managed=N} and {@code cuda:managed=N,attach=host}.
 *
 * <p>One pointer is valid on the host and on every device; the driver migrates pages to whoever
 * touches them. Traits: {@link MemoryKind#MANAGED} on {@code (CUDA_MANAGED, N)}, host-accessible,
 * 256-byte aligned, host pages; exported as CPU buffers, and as DLPack {@code kDLCUDAManaged} (or
 * {@code kDLCPU} when the consumer asks for the CPU). On devices without concurrent managed access
 * (compute capability below 6.0, or Windows), the host must not touch managed memory while a kernel
 * runs; datamem zeroes and copies globally attached blocks on the device.
 *
 * <p>{@code malloc(0)} allocates one byte; {@code calloc} zeroes with {@code cuMemsetD8} and waits
 * (on the host for memory attached to the host); {@code realloc} allocates, copies and frees; exhaustion returns NULL, other CUDA errors throw
 * {@link io.datamem.BackendException}; {@code free} checks the block and its size first. Every call
 * makes the device current on the calling thread and restores the thread's device afterwards.
 * Thread-safe.
 */
public final class CudaManagedAllocator extends CudaAllocator {

    /** The alignment of every block. */
    public static final long BYTE_ALIGNMENT = 256;

    /** Which streams may access a new block ({@code CU_MEM_ATTACH_*}). */
    public enum Attach {
        /** {@code CU_MEM_ATTACH_GLOBAL}: every stream on every device (the default). */
        GLOBAL(1),
        /** {@code CU_MEM_ATTACH_HOST}: only the host, until a stream attaches it ({@code cuStreamAttachMemAsync}). */
        HOST(2);

        private final int flag;

        Attach(int flag) {
            this.flag = flag;
        }

        /**
         * The {@code cuMemAllocManaged} flag.
         *
         * @return 1 or 2
         */
        public int flag() {
            return flag;
        }

        /**
         * The option's spelling in handler names.
         *
         * @return {@code global} or {@code host}
         */
        public String optionName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final Attach attach;

    private CudaManagedAllocator(int device, Attach attach, String name) {
        super(CudaAllocations.of(CudaAllocations.Kind.MANAGED, device, attach.flag(), name), device, traits(device));
        this.attach = attach;
    }

    /**
     * Managed memory of a device, attached globally, named {@code cuda:managed=N}.
     *
     * @param device the device ordinal
     * @return the allocator
     * @throws IllegalArgumentException if {@code device} is negative or no such device exists
     * @throws IllegalStateException    if CUDA is unavailable here (the message says why)
     */
    public static CudaManagedAllocator of(int device) {
        return of(device, Attach.GLOBAL, canonicalName(device, Attach.GLOBAL));
    }

    /**
     * Managed memory of a device.
     *
     * @param device the device ordinal
     * @param attach which streams may access new blocks
     * @param name   the handler name messages use
     * @return the allocator
     * @throws NullPointerException     if {@code attach} or {@code name} is null
     * @throws IllegalArgumentException if {@code device} is negative or no such device exists
     * @throws IllegalStateException    if CUDA is unavailable here (the message says why)
     */
    public static CudaManagedAllocator of(int device, Attach attach, String name) {
        Objects.requireNonNull(attach, "attach");
        Objects.requireNonNull(name, "name");
        CudaAllocations.checkDevice(device);
        return new CudaManagedAllocator(device, attach, name);
    }

    /**
     * The canonical handler name.
     *
     * @param device the device ordinal
     * @param attach the attach mode
     * @return for example {@code cuda:managed=0} or {@code cuda:managed=1,attach=host}
     * @throws NullPointerException if {@code attach} is null
     */
    public static String canonicalName(int device, Attach attach) {
        return "cuda:managed=" + device + (attach == Attach.GLOBAL ? "" : ",attach=" + attach.optionName());
    }

    /**
     * The traits of managed memory of a device (also without a GPU, for inspection).
     *
     * @param device the device ordinal
     * @return {@link MemoryKind#MANAGED} on {@code (CUDA_MANAGED, device)}, host-accessible,
     *         256-byte aligned, host pages, with datamem's CUDA interchange hook
     * @throws IllegalArgumentException if {@code device} is negative
     */
    public static MemoryTraits traits(int device) {
        return CudaInterchange.traits(MemoryKind.MANAGED, device, BYTE_ALIGNMENT,
                CudaInterchange.pageSize(MemoryKind.MANAGED));
    }

    /**
     * The attach mode of new blocks.
     *
     * @return the mode
     */
    public Attach attach() {
        return attach;
    }
}
