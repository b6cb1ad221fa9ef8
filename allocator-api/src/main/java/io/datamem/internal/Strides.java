package io.datamem.internal;

/**
 * Where the elements of a strided layout lie relative to its first element: each dimension reaches
 * {@code strides[i] * (shape[i] - 1)} bytes from it, below for a negative stride and above for a
 * positive one. Arrays, buffers and DLPack all bound their memory with it; arrays and buffer
 * requests test contiguity with {@link #isContiguous}. Internal.
 */
public final class Strides {

    private Strides() {
    }

    /**
     * The lowest byte offset an element of a non-empty layout starts at, relative to the first
     * element: the sum of the negative reaches (0 when no stride is negative).
     *
     * @param shape   the extent of each dimension, none 0
     * @param strides the byte stride of each dimension, as many as {@code shape}
     * @return the offset, at most 0
     * @throws ArithmeticException if the sum overflows a {@code long}
     */
    public static long lowestByte(long[] shape, long[] strides) {
        return reach(shape, strides, true);
    }

    /**
     * The highest byte offset an element of a non-empty layout starts at, relative to the first
     * element: the sum of the positive reaches (0 when no stride is positive).
     *
     * @param shape   the extent of each dimension, none 0
     * @param strides the byte stride of each dimension, as many as {@code shape}
     * @return the offset, at least 0
     * @throws ArithmeticException if the sum overflows a {@code long}
     */
    public static long highestByte(long[] shape, long[] strides) {
        return reach(shape, strides, false);
    }

    /**
     * Whether a layout's elements lie in C (row-major) or Fortran (column-major) order without
     * gaps, as NumPy decides it: a layout with at most one element is both, and axes of length 1
     * may have any stride.
     *
     * @param shape    the extent of each dimension
     * @param strides  the byte stride of each dimension, as many as {@code shape}
     * @param itemSize the bytes of one element
     * @param fortran  true to test Fortran order, false for C order
     * @return true if contiguous in that order
     */
    public static boolean isContiguous(long[] shape, long[] strides, long itemSize, boolean fortran) {
        for (long d : shape) {
            if (d == 0) {
                return true;
            }
        }
        long expected = itemSize;
        for (int k = 0; k < shape.length; k++) {
            int d = fortran ? k : shape.length - 1 - k;
            if (shape[d] != 1) {
                if (strides[d] != expected) {
                    return false;
                }
                expected *= shape[d];
            }
        }
        return true;
    }

    private static long reach(long[] shape, long[] strides, boolean below) {
        long sum = 0;
        for (int i = 0; i < shape.length; i++) {
            long extent = Math.multiplyExact(strides[i], shape[i] - 1);
            if ((extent < 0) == below && extent != 0) {
                sum = Math.addExact(sum, extent);
            }
        }
        return sum;
    }
}
