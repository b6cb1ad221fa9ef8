package io.datamem.array;

import io.datamem.DataMemAllocator;
import io.datamem.internal.Checks;
import io.datamem.internal.Strides;

import java.util.Arrays;
import java.util.Objects;

/**
 * An array's layout arithmetic and its validation: shapes and strides checked on the way in, the
 * element count and byte size with their overflow checks, C strides, the extent a layout reaches
 * within a block, shape inference for {@link NDArray#reshape}, contiguity (through
 * {@link Strides}, which buffer requests share), and the byte offset of an element from its
 * indices, with the messages of every refusal. Static methods over the arrays {@link NDArray} keeps
 * in its fields, so the accessors' offset computation stays a few loads and inlines.
 */
final class ArrayLayout {

    private ArrayLayout() {
    }

    /** How many 1-axis shapes {@link #checkShape} shares instead of copying: lengths 0 to this minus 1. */
    private static final int SHARED_1D = 1024;
    /** The shared 1-axis shapes, made on first use (a race makes two equal arrays: harmless). */
    private static final long[][] SHAPES_1D = new long[SHARED_1D][];

    /**
     * A copy of {@code shape}, checked: at most {@link NDArray#MAX_NDIM} lengths, none negative. A
     * short 1-axis shape is a shared array instead of a copy (the shape arrays of arrays are never
     * written in place): one object less for every small array's lifecycle, and the caller's
     * varargs array may then be scalar-replaced.
     */
    static long[] checkShape(long[] shape) {
        Objects.requireNonNull(shape, "shape");
        if (shape.length == 1) {
            long d = shape[0];
            if (d >= 0 && d < SHARED_1D) {
                long[] s = SHAPES_1D[(int) d];
                if (s == null) {
                    SHAPES_1D[(int) d] = s = new long[] {d};
                }
                return s;
            }
        }
        if (shape.length > NDArray.MAX_NDIM) {
            throw new IllegalArgumentException("ndim: " + shape.length + " (expected: <= " + NDArray.MAX_NDIM + ")");
        }
        // One pass that checks and copies: clone() of a short array is a call to the copy stub, which
        // cost more than the loop for the few axes arrays have
        long[] copy = new long[shape.length];
        for (int i = 0; i < shape.length; i++) {
            long d = shape[i];
            if (d < 0) {
                throw new IllegalArgumentException("shape[" + i + "]: " + d + " (expected: >= 0)");
            }
            copy[i] = d;
        }
        return copy;
    }

    /** A copy of {@code strides}, after checking that there is one per axis. */
    static long[] checkStrides(long[] strides, int ndim) {
        if (strides.length != ndim) {
            throw new IllegalArgumentException("strides: " + strides.length + " values (expected: " + ndim
                    + ", one per axis)");
        }
        long[] copy = new long[ndim];   // a loop, as in checkShape
        for (int i = 0; i < ndim; i++) {
            copy[i] = strides[i];
        }
        return copy;
    }

    /** The product of the lengths: 0 if one is 0, -1 if it overflows a {@code long}. */
    static long elementCount(long[] shape) {
        long n = 1;
        for (long d : shape) {
            if (d == 0) {
                return 0;
            }
        }
        for (long d : shape) {
            long hi = Math.multiplyHigh(n, d);
            n *= d;
            if (hi != 0 || n < 0) {
                return -1;
            }
        }
        return n;
    }

    /** The bytes of {@code count} elements, refused beyond {@link DataMemAllocator#MAX_BYTE_SIZE}. */
    static long byteSizeOf(DType dtype, long[] shape, long count) {
        long bytes = count < 0 ? -1 : Checks.productOrMinusOne(count, dtype.itemSize());
        if (bytes < 0) {
            throw new IllegalArgumentException("shape " + Arrays.toString(shape) + " of " + dtype + " needs more than "
                    + DataMemAllocator.MAX_BYTE_SIZE + " bytes (expected: at most 2^57 bytes, the address-space limit)");
        }
        return bytes;
    }

    /** {@code {itemSize}} for item sizes up to 16 bytes: the C strides of every 1-axis array of those. */
    private static final long[][] STRIDES_1D = new long[17][];

    static {
        for (int i = 0; i < STRIDES_1D.length; i++) {
            STRIDES_1D[i] = new long[] {i};
        }
    }

    /**
     * The byte strides of C (row-major) order; axes of length 0 count as 1. The result must never be
     * written in place: for one axis and small items it is a shared array (arrays never change their
     * strides in place, and hand out copies).
     */
    static long[] cStrides(DType dtype, long[] shape) {
        long itemSize = dtype.itemSize();
        if (shape.length == 1 && itemSize < STRIDES_1D.length) {
            return STRIDES_1D[(int) itemSize];
        }
        long[] st = new long[shape.length];
        long acc = dtype.itemSize();
        for (int i = shape.length - 1; i >= 0; i--) {
            st[i] = acc;
            acc *= Math.max(shape[i], 1);
        }
        return st;
    }

    /** Checks that every element of the layout lies within {@code [0, available)} bytes of the block. */
    static void checkExtent(DType dtype, long[] shape, long[] strides, long byteOffset, long available) {
        if (byteOffset < 0) {
            throw new IllegalArgumentException("byteOffset: " + byteOffset + " (expected: >= 0)");
        }
        long count = elementCount(shape);
        if (count < 0) {
            throw new IllegalArgumentException("shape " + Arrays.toString(shape) + " has more than 2^63 elements");
        }
        if (count == 0) {
            if (byteOffset > available) {
                throw new IllegalArgumentException("byteOffset: " + byteOffset + " (expected: <= " + available + ")");
            }
            return;
        }
        long lo;
        long hi;
        try {
            lo = Math.addExact(byteOffset, Strides.lowestByte(shape, strides));
            hi = Math.addExact(byteOffset, Strides.highestByte(shape, strides));
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("strides " + Arrays.toString(strides) + " with shape "
                    + Arrays.toString(shape) + " overflow a long");
        }
        if (lo < 0 || hi > available - dtype.itemSize()) {
            throw new IllegalArgumentException("shape " + Arrays.toString(shape) + ", strides "
                    + Arrays.toString(strides) + " and byteOffset " + byteOffset + " reach bytes [" + lo + ", "
                    + (hi + dtype.itemSize()) + ") (expected: within the " + available + " bytes available)");
        }
    }

    /**
     * The shape {@link NDArray#reshape} gives {@code size} elements: {@code newShape} with its -1
     * (at most one) inferred from the others, checked to hold exactly {@code size} elements.
     */
    static long[] inferShape(long[] newShape, long size) {
        Objects.requireNonNull(newShape, "newShape");
        long[] s = newShape.clone();
        int unknown = -1;
        long known = 1;
        for (int i = 0; i < s.length; i++) {
            if (s[i] == -1) {
                if (unknown >= 0) {
                    throw new IllegalArgumentException("newShape " + Arrays.toString(newShape)
                            + " (expected: at most one -1)");
                }
                unknown = i;
            } else if (s[i] < 0) {
                throw new IllegalArgumentException("newShape[" + i + "]: " + s[i] + " (expected: >= -1)");
            } else {
                long hi = Math.multiplyHigh(known, s[i]);
                known *= s[i];
                if (hi != 0 || known < 0) {
                    throw new IllegalArgumentException("cannot reshape array of size " + size + " into shape "
                            + Arrays.toString(newShape) + " (it has more than 2^63 elements)");
                }
            }
        }
        if (unknown >= 0) {
            if (known == 0 || size % known != 0) {
                throw new IllegalArgumentException("cannot reshape " + size + " elements into "
                        + Arrays.toString(newShape));
            }
            s[unknown] = size / known;
        }
        checkShape(s);
        if (elementCount(s) != size) {
            throw new IllegalArgumentException("cannot reshape array of size " + size + " into shape "
                    + Arrays.toString(newShape));
        }
        return s;
    }

    /** Whether the elements lie in C ({@code fortran} false) or Fortran order without gaps. */
    static boolean isContiguous(DType dtype, long[] shape, long[] strides, boolean fortran) {
        return Strides.isContiguous(shape, strides, dtype.itemSize(), fortran);
    }

    /** Checks that {@code axis} names an axis of {@code shape}. */
    static void checkAxis(long[] shape, int axis) {
        if (axis < 0 || axis >= shape.length) {
            throw new IllegalArgumentException("axis: " + axis + " (expected: 0.." + (shape.length - 1) + ")");
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Element offsets: the accessors' arithmetic

    /** The byte offset of the element at {@code index}, one index per axis, each within its axis. */
    static long elementOffset(long[] shape, long[] strides, long offset, long[] index) {
        if (index.length != shape.length) {
            throw wrongIndexCount(shape, index.length);
        }
        long off = offset;
        for (int i = 0; i < index.length; i++) {
            long ix = index[i];
            if (ix < 0 || ix >= shape[i]) {
                throw outOfBounds(shape, ix, i);
            }
            off += ix * strides[i];
        }
        return off;
    }

    static IllegalArgumentException wrongIndexCount(long[] shape, int given) {
        return new IllegalArgumentException("index has " + given + " value(s) (expected: " + shape.length
                + ", one per axis of shape " + Arrays.toString(shape) + ")");
    }

    static IndexOutOfBoundsException outOfBounds(long[] shape, long index, int axis) {
        return new IndexOutOfBoundsException("index " + index + " is out of bounds for axis " + axis + " with size "
                + shape[axis]);
    }
}
