package io.datamem.cuda;

import io.datamem.MemoryKind;
import io.datamem.MemoryTraits;
import io.datamem.cuda.internal.CudaAllocations;
import io.datamem.cuda.internal.CudaInterchange;

import java.util.Objects;

/**
 * CUDA device memory ({@code cuMemAlloc}) on one GPU: handler name {@code cuda:device=N}.
 *
 * <p>The host cannot dereference it: arrays over it have no {@code segment()}; copy them with
 * {@link CudaMemory}. Its traits say {@link MemoryKind#DEVICE} on {@code (CUDA, N)}, not
 * host-accessible, 256-byte aligned (what {@code cuMemAlloc} guarantees), and carry datamem's CUDA
 * {@link io.datamem.DeviceInterchange}: buffers export it with device id
 * {@code io.datamem.cuda}, DLPack as {@code kDLCUDA}.
 *
 * <ul>
 *   <li>{@code malloc(0)} allocates one byte, so the pointer is unique.</li>
 *   <li>{@code calloc} zeroes on the device ({@code cuMemsetD8}) and waits for it.</li>
 *   <li>{@code realloc} allocates, copies on the device, waits, and frees the old block; if the new
 *       allocation fails the old block is untouched.</li>
 *   <li>Exhaustion ({@code CUDA_ERROR_OUT_OF_MEMORY}) returns NULL; any other CUDA error is a
 *       {@link io.datamem.BackendException} naming the error code.</li>
 *   <li>{@code free} checks the block is live with that size ({@link IllegalArgumentException}
 *       otherwise, before any CUDA call), waits for copies datamem enqueued on it, then
 *       {@code cuMemFree}.</li>
 * </ul>
 *
 * <p>Every call makes the allocator's device current on the calling thread and restores the
 * thread's device afterwards: allocate and free on any thread. Thread-safe.
 */
public final class CudaDeviceAllocator extends CudaAllocator {

    /** The alignment of every block: {@code cuMemAlloc} returns 256-byte aligned memory. */
    public static final long BYTE_ALIGNMENT = 256;

    private CudaDeviceAllocator(int device, String name) {
        super(CudaAllocations.of(CudaAllocations.Kind.DEVICE, device, 0, name), device, traits(device));
    }

    /**
     * Device memory on a GPU, named {@code cuda:device=N}.
     *
     * @param device the device ordinal
     * @return the allocator
     * @throws IllegalArgumentException if {@code device} is negative or no such device exists
     * @throws IllegalStateException    if CUDA is unavailable here (the message says why)
     */
    public static CudaDeviceAllocator of(int device) {
        return of(device, "cuda:device=" + device);
    }

    /**
     * Device memory on a GPU, with the name its messages use.
     *
     * @param device the device ordinal
     * @param name   the handler name for messages, for example {@code pool(cuda:device=0)}
     * @return the allocator
     * @throws NullPointerException     if {@code name} is null
     * @throws IllegalArgumentException if {@code device} is negative or no such device exists
     * @throws IllegalStateException    if CUDA is unavailable here (the message says why)
     */
    public static CudaDeviceAllocator of(int device, String name) {
        Objects.requireNonNull(name, "name");
        CudaAllocations.checkDevice(device);
        return new CudaDeviceAllocator(device, name);
    }

    /**
     * The traits of device memory on a device (also without a GPU, for inspection).
     *
     * @param device the device ordinal
     * @return {@link MemoryKind#DEVICE} on {@code (CUDA, device)}, not host-accessible, 256-byte
     *         aligned, 2 MiB pages, with datamem's CUDA interchange hook
     * @throws IllegalArgumentException if {@code device} is negative
     */
    public static MemoryTraits traits(int device) {
        return CudaInterchange.traits(MemoryKind.DEVICE, device, BYTE_ALIGNMENT,
                CudaInterchange.pageSize(MemoryKind.DEVICE));
    }
}
