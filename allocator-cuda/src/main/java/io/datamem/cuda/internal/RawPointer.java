package io.datamem.cuda.internal;

import jcuda.Pointer;

/**
 * A JCuda {@link Pointer} made from, or read back as, a plain address: JCuda keeps addresses in a
 * protected field its subclasses may use. Runtime calls that return a pointer
 * ({@code cudaMalloc(Pointer, size)}) write it into the object passed. Internal.
 */
final class RawPointer extends Pointer {

    /** A NULL pointer for a runtime call to fill in. */
    RawPointer() {
    }

    /**
     * A pointer to an address.
     *
     * @param address the address
     */
    RawPointer(long address) {
        super(address);
    }

    /**
     * The address this pointer holds.
     *
     * @return the address
     */
    long address() {
        return getNativePointer() + getByteOffset();
    }
}
