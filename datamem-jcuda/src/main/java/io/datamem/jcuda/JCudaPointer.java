package io.datamem.jcuda;

import io.datamem.DeviceType;
import io.datamem.MemoryKind;
import io.datamem.MemoryTraits;
import io.datamem.array.NDArray;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;

import java.util.Objects;

/**
 * A datamem array's memory as JCuda pointers, zero-copy: a {@link Pointer} (what JCuda's runtime
 * API and its libraries take, for host and device memory alike) and, for memory a GPU addresses,
 * a {@link CUdeviceptr} (what the driver API and kernel parameters take). Both hold the address of
 * the array's element [0, ..., 0]. The array is held against closing and resizing until this is
 * closed, through the lifecycle check every export of an array goes through
 * ({@link NDArray#hold()}): while it is held, {@code close()} and {@code resize} of the array (and
 * of its owner, for a view) throw {@link IllegalStateException}.
 *
 * <p>Close it exactly when JCuda is done with the memory: after the kernels and copies that use
 * it have completed (a stream or context synchronisation), not merely queued. Closing it again
 * does nothing, and never releases another holder's hold.
 */
public final class JCudaPointer implements AutoCloseable {

    private final NDArray array;
    private final NDArray.Hold pin;
    private final long address;
    private final boolean deviceAddressable;

    private JCudaPointer(NDArray array, NDArray.Hold pin, long address, boolean deviceAddressable) {
        this.array = array;
        this.pin = pin;
        this.address = address;
        this.deviceAddressable = deviceAddressable;
    }

    /**
     * Holds an array and gives its memory as JCuda pointers.
     *
     * @param array an array of host memory or of CUDA memory (pinned, device, managed)
     * @return the hold, with the pointers; close it when JCuda is done
     * @throws NullPointerException          if {@code array} is null
     * @throws IllegalStateException         if the array is closed or being closed, or is a view of an
     *                                       owner resized since the view was made
     * @throws IllegalArgumentException      if the array's memory belongs to a device other than a
     *                                       CUDA GPU (SYCL or ROCm memory, say)
     * @throws UnsupportedOperationException if the array wraps a Java heap segment, which has no
     *                                       native address
     */
    public static JCudaPointer of(NDArray array) {
        Objects.requireNonNull(array, "array");
        NDArray.Hold pin = array.hold();
        try {
            MemoryTraits traits = array.traits();
            DeviceType type = traits.device().type();
            if (type != DeviceType.CPU && type != DeviceType.CUDA && type != DeviceType.CUDA_HOST
                    && type != DeviceType.CUDA_MANAGED) {
                throw new IllegalArgumentException(array + ": its memory is on " + traits.device()
                        + " (expected: host memory or CUDA memory, which JCuda can address)");
            }
            boolean deviceAddressable = traits.kind() != MemoryKind.HOST;
            return new JCudaPointer(array, pin, array.address(), deviceAddressable);
        } catch (RuntimeException | Error e) {
            pin.close();
            throw e;
        }
    }

    /**
     * The array's memory as a {@code jcuda.Pointer}: for {@code cudaMemcpy} and the other functions
     * of JCuda's runtime API and its libraries, which take host and device addresses alike. Each
     * call gives a new object (JCuda's native code may write into the ones it is given).
     *
     * @return a pointer to the array's element [0, ..., 0]
     * @throws IllegalStateException if this hold was closed (the array may be freed since)
     */
    public Pointer pointer() {
        checkHeld();
        return Addresses.pointer(address);
    }

    /**
     * The array's memory as a {@code CUdeviceptr}: for the driver API ({@code cuMemcpyHtoD},
     * {@code cuMemsetD32}, ...) and for kernel parameters ({@code Pointer.to(devicePointer())}).
     * Each call gives a new object.
     *
     * @return a device pointer to the array's element [0, ..., 0]
     * @throws IllegalStateException         if this hold was closed
     * @throws UnsupportedOperationException if the array is in plain host memory, which the GPU does
     *                                       not address (allocate it through {@code cuda:pinned},
     *                                       {@code cuda:managed=N} or {@code cuda:device=N}, or
     *                                       register it with {@code cuda:registered(...)})
     */
    public CUdeviceptr devicePointer() {
        checkHeld();
        if (!deviceAddressable) {
            throw new UnsupportedOperationException(array + " is in plain host memory (kind "
                    + array.traits().kind() + "), which a GPU does not address (expected: CUDA memory; allocate it"
                    + " through cuda:pinned, cuda:managed=N or cuda:device=N, or register it with"
                    + " cuda:registered(...))");
        }
        return Addresses.devicePointer(address);
    }

    /**
     * The array held.
     *
     * @return the array
     */
    public NDArray array() {
        return array;
    }

    /**
     * Whether {@link #close()} has run.
     *
     * @return true once the hold is released
     */
    public boolean isReleased() {
        return pin.isReleased();
    }

    /** Releases the hold on the array, the first time it is called; later calls do nothing. */
    @Override
    public void close() {
        pin.close();   // releases once; later closes do nothing
    }

    private void checkHeld() {
        if (pin.isReleased()) {
            throw new IllegalStateException(this + " is closed: its pointers may no longer be used");
        }
    }

    @Override
    public String toString() {
        return "JCudaPointer[" + array + ", 0x" + Long.toHexString(address) + (pin.isReleased() ? ", released" : ", held")
                + "]";
    }
}
