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

    /** The lifecycle pin of {@link NDArray}, for exports made outside its package. */
    public interface Pins {
        /**
         * Checks that the array may still reach its memory and pins it: its memory can be neither
         * closed nor resized until {@link #unpin}. One step, under the lock close and resize decide
         * under.
         *
         * @param array the array
         * @throws IllegalStateException if the array is closed, stale, or a close has begun
         */
        void pin(NDArray array);

        /**
         * Releases one {@link #pin}.
         *
         * @param array the array
         * @throws IllegalStateException if no pin is held
         */
        void unpin(NDArray array);
    }

    private static volatile Adopter adopter;
    private static volatile Pins pins;

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
     * Installs NDArray's pins; called once, by NDArray's static initialiser.
     *
     * @param implementation the implementation
     * @throws IllegalStateException if one is installed already
     */
    public static synchronized void installPins(Pins implementation) {
        if (pins != null) {
            throw new IllegalStateException("ArrayAccess pins are installed already");
        }
        pins = implementation;
    }

    /**
     * NDArray's lifecycle pins.
     *
     * @return the implementation
     */
    public static Pins pins() {
        Pins p = pins;
        if (p == null) {
            initialiseNDArray();
            p = pins;
        }
        return p;
    }

    private static void initialiseNDArray() {
        try {
            Class.forName(NDArray.class.getName(), true, NDArray.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * NDArray's internal adopt.
     *
     * @return the implementation
     */
    public static Adopter adopter() {
        Adopter a = adopter;
        if (a == null) {
            initialiseNDArray();
            a = adopter;
        }
        return a;
    }
}
