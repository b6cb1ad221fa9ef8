package io.datamem.jcuda;

import io.datamem.BackendException;
import io.datamem.DataMemHandler;
import io.datamem.Device;
import io.datamem.DeviceType;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.dlpack.DLPack;
import io.datamem.spi.ReleasingAllocator;
import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUpointer_attribute;
import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;
import jcuda.runtime.JCuda;
import jcuda.runtime.cudaError;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * Memory JCuda allocated, brought into datamem as C-contiguous arrays without copying: pinned host
 * memory from {@code cudaMallocHost} and device memory from {@code cuMemAlloc}. The array owns the
 * memory: closing it (or its collection, if it leaks) frees it exactly once through the function
 * that pairs with the allocation ({@code cudaFreeHost}, {@code cuMemFree}). Its handler is
 * {@value #HANDLER_NAME}; it cannot be resized. Its traits are those DLPack gives imported CUDA
 * memory ({@link DLPack#importTraits}): with datamem's {@code allocator-cuda} present, the array
 * exports and copies as that backend's own memory does. If the import is refused, the memory stays
 * the caller's.
 */
public final class JCudaArrays {

    /** The name of the handlers of imported arrays. */
    public static final String HANDLER_NAME = "jcuda";

    private JCudaArrays() {
    }

    /**
     * An array over pinned host memory that JCuda's {@code cudaMallocHost} (or
     * {@code cudaHostAlloc}) allocated, which the array then owns: closing the array calls
     * {@code cudaFreeHost} on it.
     *
     * @param hostPointer the pointer {@code cudaMallocHost} filled in
     * @param byteSize    the size allocated, in bytes; it bounds the shape
     * @param dtype       the element type
     * @param shape       the length of each axis
     * @return the owning array, over the memory's address, of kind {@code HOST_PINNED}
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if {@code hostPointer} holds no native address (NULL, or a
     *                                  pointer to a Java array or buffer), {@code byteSize} is
     *                                  negative, or the shape is invalid or needs more than
     *                                  {@code byteSize} bytes
     */
    public static NDArray fromCudaMallocHost(Pointer hostPointer, long byteSize, DType dtype, long... shape) {
        Objects.requireNonNull(hostPointer, "hostPointer");
        long address = Addresses.of(hostPointer);
        if (address == 0) {
            throw new IllegalArgumentException("hostPointer: " + hostPointer + " holds no native address (expected:"
                    + " the pointer cudaMallocHost filled in, not NULL or a pointer to a Java array or buffer)");
        }
        return adopt(address, byteSize, new Device(DeviceType.CUDA_HOST, 0), dtype, shape,
                "pinned host memory at 0x" + Long.toHexString(address) + ", through cudaFreeHost", () -> {
                    int status = JCuda.cudaFreeHost(hostPointer);
                    if (status != cudaError.cudaSuccess) {
                        throw new BackendException(HANDLER_NAME, byteSize, "CUDA", "cudaFreeHost", status,
                                cudaError.stringFor(status), "the pinned host memory at 0x" + Long.toHexString(address));
                    }
                });
    }

    /**
     * An array over device memory that JCuda's {@code cuMemAlloc} allocated, which the array then
     * owns: closing the array calls {@code cuMemFree} on it, with the allocation's context made
     * current for the call (on whatever thread closes it). The device and the context are asked of
     * the driver ({@code cuPointerGetAttribute}), and the shape is checked against the allocation's
     * range ({@code cuMemGetAddressRange}).
     *
     * @param devicePointer the pointer {@code cuMemAlloc} filled in
     * @param byteSize      the size allocated, in bytes; it bounds the shape
     * @param dtype         the element type
     * @param shape         the length of each axis
     * @return the owning array, over the memory's device address, of kind {@code DEVICE} on the
     *         pointer's CUDA device
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if {@code devicePointer} is NULL, {@code byteSize} is
     *                                  negative or reaches past the allocation, or the shape is
     *                                  invalid or needs more than {@code byteSize} bytes
     * @throws BackendException         if the driver does not know the pointer (not device memory,
     *                                  or freed already)
     */
    public static NDArray fromCuMemAlloc(CUdeviceptr devicePointer, long byteSize, DType dtype, long... shape) {
        Objects.requireNonNull(devicePointer, "devicePointer");
        long address = Addresses.of(devicePointer);
        if (address == 0) {
            throw new IllegalArgumentException("devicePointer: NULL (expected: the pointer cuMemAlloc filled in)");
        }
        int[] ordinal = new int[1];
        check(JCudaDriver.cuPointerGetAttribute(Pointer.to(ordinal),
                CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, devicePointer), "cuPointerGetAttribute",
                byteSize, address);
        CUcontext context = new CUcontext();
        check(JCudaDriver.cuPointerGetAttribute(Pointer.to(context), CUpointer_attribute.CU_POINTER_ATTRIBUTE_CONTEXT,
                devicePointer), "cuPointerGetAttribute", byteSize, address);
        CUdeviceptr base = new CUdeviceptr();
        long[] rangeSize = new long[1];
        check(JCudaDriver.cuMemGetAddressRange(base, rangeSize, devicePointer), "cuMemGetAddressRange", byteSize,
                address);
        long end = Addresses.of(base) + rangeSize[0];
        if (byteSize > end - address) {
            throw new IllegalArgumentException("byteSize: " + byteSize + " (expected: at most " + (end - address)
                    + ", the bytes from 0x" + Long.toHexString(address) + " to the end of its allocation)");
        }
        return adopt(address, byteSize, new Device(DeviceType.CUDA, ordinal[0]), dtype, shape,
                "device memory at 0x" + Long.toHexString(address) + " on CUDA device " + ordinal[0]
                        + ", through cuMemFree", () -> {
                    check(JCudaDriver.cuCtxPushCurrent(context), "cuCtxPushCurrent", byteSize, address);
                    try {
                        check(JCudaDriver.cuMemFree(devicePointer), "cuMemFree", byteSize, address);
                    } finally {
                        JCudaDriver.cuCtxPopCurrent(new CUcontext());
                    }
                });
    }

    private static NDArray adopt(long address, long byteSize, Device device, DType dtype, long[] shape,
                                 String what, Runnable free) {
        Objects.requireNonNull(dtype, "dtype");
        Objects.requireNonNull(shape, "shape");
        ReleasingAllocator owner = ReleasingAllocator.of(HANDLER_NAME, () -> what,
                DLPack.importTraits(device, address), free);
        // Refused (a shape too large, say): the memory stays the caller's, and owner is never freed.
        return NDArray.adopt(new DataMemHandler(HANDLER_NAME, 1, owner), MemorySegment.ofAddress(address), byteSize,
                dtype, shape, null, 0);
    }

    private static void check(int status, String operation, long byteSize, long address) {
        if (status != CUresult.CUDA_SUCCESS) {
            throw new BackendException(HANDLER_NAME, byteSize, "CUDA", operation, status, CUresult.stringFor(status),
                    "the device memory at 0x" + Long.toHexString(address));
        }
    }
}
