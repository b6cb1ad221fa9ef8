package io.datamem.array;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * How elements are read and written: the conversions between each {@link DType} and Java's
 * {@code double}, {@code long}, {@code boolean} and complex pairs, in native byte order, and the
 * refusals (complex read as a real, custom dtypes). Static methods taking the dtype, the segment and
 * the byte offset of the element, so the accessors of {@link NDArray} stay a few loads and one call
 * that inlines: float64 is tested first and skips the switches; the rest is a switch on the dtype's
 * kind and item size. The caller has checked the offset against the array's layout and the segment
 * against its lifecycle.
 */
final class ElementCodec {

    private ElementCodec() {
    }

    /** Reads a real element as a double: booleans as 0 or 1, unsigned integers as their value. */
    static double readDouble(DType dtype, MemorySegment d, long off) {
        if (dtype == DType.FLOAT64) {   // the common case: one comparison instead of two switches
            return d.get(ValueLayout.JAVA_DOUBLE_UNALIGNED, off);
        }
        return switch (dtype.kind()) {
            case BOOL -> d.get(ValueLayout.JAVA_BYTE, off) != 0 ? 1 : 0;
            case SIGNED -> readSigned(dtype, d, off);
            case UNSIGNED -> {
                long v = readUnsigned(dtype, d, off);
                yield v >= 0 ? v : (double) (v >>> 1) * 2.0 + (v & 1);
            }
            case FLOAT -> switch (dtype.itemSize()) {
                case 2 -> Float.float16ToFloat(d.get(ValueLayout.JAVA_SHORT_UNALIGNED, off));
                case 4 -> d.get(ValueLayout.JAVA_FLOAT_UNALIGNED, off);
                default -> d.get(ValueLayout.JAVA_DOUBLE_UNALIGNED, off);
            };
            case BFLOAT -> Float.intBitsToFloat((d.get(ValueLayout.JAVA_SHORT_UNALIGNED, off) & 0xFFFF) << 16);
            case COMPLEX -> throw new UnsupportedOperationException("dtype " + dtype
                    + " is complex: read it with getComplex");
            case CUSTOM -> throw customAccess(dtype);
        };
    }

    /** Reads a real element as a long: floats truncate toward zero, uint64 gives its bits. */
    static long readLong(DType dtype, MemorySegment d, long off) {
        return switch (dtype.kind()) {
            case BOOL -> d.get(ValueLayout.JAVA_BYTE, off) != 0 ? 1 : 0;
            case SIGNED -> readSigned(dtype, d, off);
            case UNSIGNED -> readUnsigned(dtype, d, off);
            case FLOAT, BFLOAT -> (long) readDouble(dtype, d, off);
            case COMPLEX -> throw new UnsupportedOperationException("dtype " + dtype
                    + " is complex: read it with getComplex");
            case CUSTOM -> throw customAccess(dtype);
        };
    }

    /** Whether an element is non-zero (for complex: either part). */
    static boolean readBoolean(DType dtype, MemorySegment d, long off) {
        return switch (dtype.kind()) {
            case COMPLEX -> {
                double[] c = readComplex(dtype, d, off);
                yield c[0] != 0 || c[1] != 0;
            }
            case FLOAT, BFLOAT -> readDouble(dtype, d, off) != 0;
            default -> readLong(dtype, d, off) != 0;
        };
    }

    /** A signed integer element, sign-extended. */
    static long readSigned(DType dtype, MemorySegment d, long off) {
        return switch (dtype.itemSize()) {
            case 1 -> d.get(ValueLayout.JAVA_BYTE, off);
            case 2 -> d.get(ValueLayout.JAVA_SHORT_UNALIGNED, off);
            case 4 -> d.get(ValueLayout.JAVA_INT_UNALIGNED, off);
            default -> d.get(ValueLayout.JAVA_LONG_UNALIGNED, off);
        };
    }

    /** An unsigned integer element, zero-extended (uint64: its bits). */
    static long readUnsigned(DType dtype, MemorySegment d, long off) {
        return switch (dtype.itemSize()) {
            case 1 -> d.get(ValueLayout.JAVA_BYTE, off) & 0xFFL;
            case 2 -> d.get(ValueLayout.JAVA_SHORT_UNALIGNED, off) & 0xFFFFL;
            case 4 -> d.get(ValueLayout.JAVA_INT_UNALIGNED, off) & 0xFFFF_FFFFL;
            default -> d.get(ValueLayout.JAVA_LONG_UNALIGNED, off);
        };
    }

    /** A complex element as {@code {real, imaginary}}; the dtype is complex64 or complex128. */
    static double[] readComplex(DType dtype, MemorySegment d, long off) {
        if (dtype.itemSize() == 8) {
            return new double[] {d.get(ValueLayout.JAVA_FLOAT_UNALIGNED, off),
                    d.get(ValueLayout.JAVA_FLOAT_UNALIGNED, off + 4)};
        }
        return new double[] {d.get(ValueLayout.JAVA_DOUBLE_UNALIGNED, off),
                d.get(ValueLayout.JAVA_DOUBLE_UNALIGNED, off + 8)};
    }

    /** Any element as {@code {real, imaginary}}: real dtypes read with an imaginary part of 0. */
    static double[] readAsComplex(DType dtype, MemorySegment d, long off) {
        return dtype.kind() == DType.Kind.COMPLEX ? readComplex(dtype, d, off)
                : new double[] {readDouble(dtype, d, off), 0};
    }

    /** Writes a double as a C cast would (integers truncate toward zero, booleans are {@code v != 0}). */
    static void writeDouble(DType dtype, MemorySegment d, long off, double v) {
        if (dtype == DType.FLOAT64) {
            d.set(ValueLayout.JAVA_DOUBLE_UNALIGNED, off, v);
            return;
        }
        switch (dtype.kind()) {
            case BOOL -> d.set(ValueLayout.JAVA_BYTE, off, (byte) (v != 0 ? 1 : 0));
            case SIGNED, UNSIGNED -> writeInteger(dtype, d, off, dtype.kind() == DType.Kind.UNSIGNED && v >= 0x1p63
                    ? (long) (v - 0x1p63) ^ Long.MIN_VALUE : (long) v);
            case FLOAT -> {
                switch (dtype.itemSize()) {
                    case 2 -> d.set(ValueLayout.JAVA_SHORT_UNALIGNED, off, Float.floatToFloat16((float) v));
                    case 4 -> d.set(ValueLayout.JAVA_FLOAT_UNALIGNED, off, (float) v);
                    default -> d.set(ValueLayout.JAVA_DOUBLE_UNALIGNED, off, v);
                }
            }
            case BFLOAT -> d.set(ValueLayout.JAVA_SHORT_UNALIGNED, off, toBfloat16((float) v));
            case COMPLEX -> writeComplex(dtype, d, off, v, 0);
            case CUSTOM -> throw customAccess(dtype);
        }
    }

    /** Writes a long: integers keep the low bits, floats round to nearest, booleans are {@code v != 0}. */
    static void writeLong(DType dtype, MemorySegment d, long off, long v) {
        switch (dtype.kind()) {
            case BOOL -> d.set(ValueLayout.JAVA_BYTE, off, (byte) (v != 0 ? 1 : 0));
            case SIGNED, UNSIGNED -> writeInteger(dtype, d, off, v);
            case FLOAT, BFLOAT, COMPLEX -> writeDouble(dtype, d, off, v);
            case CUSTOM -> throw customAccess(dtype);
        }
    }

    /** Writes the low {@code itemSize} bytes of an integer. */
    static void writeInteger(DType dtype, MemorySegment d, long off, long v) {
        switch (dtype.itemSize()) {
            case 1 -> d.set(ValueLayout.JAVA_BYTE, off, (byte) v);
            case 2 -> d.set(ValueLayout.JAVA_SHORT_UNALIGNED, off, (short) v);
            case 4 -> d.set(ValueLayout.JAVA_INT_UNALIGNED, off, (int) v);
            default -> d.set(ValueLayout.JAVA_LONG_UNALIGNED, off, v);
        }
    }

    /** Writes a complex element; the dtype is complex64 or complex128. */
    static void writeComplex(DType dtype, MemorySegment d, long off, double re, double im) {
        if (dtype.itemSize() == 8) {
            d.set(ValueLayout.JAVA_FLOAT_UNALIGNED, off, (float) re);
            d.set(ValueLayout.JAVA_FLOAT_UNALIGNED, off + 4, (float) im);
        } else {
            d.set(ValueLayout.JAVA_DOUBLE_UNALIGNED, off, re);
            d.set(ValueLayout.JAVA_DOUBLE_UNALIGNED, off + 8, im);
        }
    }

    /**
     * Writes {@code re + im·j} to any element: complex dtypes take both parts, real dtypes the real
     * part when the imaginary part is 0 and refuse otherwise.
     */
    static void writeAsComplex(DType dtype, MemorySegment d, long off, double re, double im) {
        if (dtype.kind() == DType.Kind.COMPLEX) {
            writeComplex(dtype, d, off, re, im);
        } else if (im == 0) {
            writeDouble(dtype, d, off, re);
        } else {
            throw new IllegalArgumentException("imaginary: " + im + " (expected: 0 for real dtype " + dtype
                    + ")");
        }
    }

    /** Rounds a float to bfloat16 (round to nearest, ties to even; NaN stays NaN). */
    static short toBfloat16(float f) {
        int bits = Float.floatToRawIntBits(f);
        if (Float.isNaN(f)) {
            return (short) ((bits >>> 16) | 0x0040);
        }
        int rounding = 0x7FFF + ((bits >>> 16) & 1);
        return (short) ((bits + rounding) >>> 16);
    }

    /** The refusal of element access to a custom dtype, whose bytes only its owner can interpret. */
    static UnsupportedOperationException customAccess(DType dtype) {
        return new UnsupportedOperationException("dtype " + dtype + " is a custom dtype (format " + dtype.format()
                + "): read and write its bytes through segment()");
    }
}
