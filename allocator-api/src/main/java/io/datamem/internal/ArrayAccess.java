package io.datamem.internal;

import io.datamem.DataMemHandler;
import io.datamem.array.DType;
import io.datamem.array.NDArray;

import java.lang.foreign.MemorySegment;

/**
 * Access to {@link NDArray} internals for datamem's own export and import code (the JDK's
 * "shared secrets" pattern): {@code NDArray} installs the implementation when it is initialised.
 */
public final class ArrayAccess {

    /** What {@link NDArray} lets datamem's other packages do. */
    @FunctionalInterface
    public interface Adopter {
        /**
         * {@link NDArray#adopt} with a read-only option: the array refuses writes from the start.
         *
         * @param handler           the handler whose allocator frees the block
         * @param block             the block's start
         * @param allocatedByteSize the size to pass to {@code free}
         * @param dtype             the element type
         * @param shape             the length of each axis (validated)
         * @param strides           the byte stride of each axis (validated, one per axis)
         * @param byteOffset        bytes from {@code block} to element [0, ..., 0]
         * @param readOnly          whether the array refuses writes
         * @return the owning array
         * @throws IllegalArgumentException if an element would lie outside the block
         */
        NDArray adopt(DataMemHandler handler, MemorySegment block, long allocatedByteSize, DType dtype, long[] shape,
                      long[] strides, long byteOffset, boolean readOnly);
    }

    private static volatile Adopter adopter;

    private ArrayAccess() {
    }

    /**
     * Installs NDArray's implementation; called once, by NDArray's static initialiser.
     *
     * @param implementation the implementation
     * @throws IllegalStateException if one is installed already
     */
    public static synchronized void install(Adopter implementation) {
        if (adopter != null) {
            throw new IllegalStateException("ArrayAccess is installed already");
        }
        adopter = implementation;
    }

    /**
     * NDArray's internal adopt.
     *
     * @return the implementation
     */
    public static Adopter adopter() {
        Adopter a = adopter;
        if (a == null) {
            try {
                Class.forName(NDArray.class.getName(), true, NDArray.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException(e);
            }
            a = adopter;
        }
        return a;
    }
}
