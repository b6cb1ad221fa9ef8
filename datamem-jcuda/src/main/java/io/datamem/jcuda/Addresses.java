package io.datamem.jcuda;

import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;

/**
 * Addresses into JCuda's pointer objects and out of them. JCuda keeps a pointer's address in
 * protected state (its native pointer and byte offset, which its native code adds up); a subclass
 * reads and sets it through JCuda's own protected constructors and accessors, no reflection.
 */
final class Addresses {

    private Addresses() {
    }

    /**
     * A JCuda pointer holding an address, as JCuda's native code reads it.
     *
     * @param address the address
     * @return a {@code jcuda.Pointer} to it
     */
    static Pointer pointer(long address) {
        return new AddressPointer(address);
    }

    /**
     * A JCuda device pointer holding an address: its byte offset from NULL (a {@code CUdeviceptr}
     * takes its native pointer only from JCuda's native code), which JCuda's native code adds to it.
     *
     * @param address the device address
     * @return a {@code CUdeviceptr} to it
     */
    static CUdeviceptr devicePointer(long address) {
        return new CUdeviceptr().withByteOffset(address);
    }

    /**
     * The native address a JCuda pointer holds: its native pointer plus its byte offset.
     *
     * @param pointer a pointer JCuda's native code filled in (cudaMallocHost, cuMemAllocHost) or
     *                one this bridge made
     * @return the address, 0 if the pointer holds none (NULL, or a pointer to a Java array or buffer)
     */
    static long of(Pointer pointer) {
        return new PointerAddress(pointer).address();
    }

    /**
     * The device address a JCuda device pointer holds.
     *
     * @param pointer a device pointer JCuda's native code filled in (cuMemAlloc) or one this bridge
     *                made
     * @return the address, 0 for NULL
     */
    static long of(CUdeviceptr pointer) {
        return new DeviceAddress(pointer).address();
    }

    private static final class AddressPointer extends Pointer {
        AddressPointer(long address) {
            super(address);
        }
    }

    private static final class PointerAddress extends Pointer {
        PointerAddress(Pointer other) {
            super(other);
        }

        long address() {
            // A pointer into a Java array or buffer has no native pointer, only an offset into it.
            return getNativePointer() == 0 ? 0 : getNativePointer() + getByteOffset();
        }
    }

    private static final class DeviceAddress extends CUdeviceptr {
        DeviceAddress(CUdeviceptr other) {
            super(other);
        }

        long address() {
            return getNativePointer() + getByteOffset();
        }
    }
}
