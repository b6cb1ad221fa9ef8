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

    // Every method on the paths of readDouble, readLong, writeDouble and writeLong is at most 35
    // bytes of bytecode, the size the JIT inlines even at a call site it thinks cold. A loop over
    // float64 arrays in a program that also reads int32 arrays elsewhere sees the int32 branch as
    // possible but cold: a helper too big to inline there left a call in the loop, and a call makes
    // every field load of the loop reload each time (a 256 x 256 matrix multiply took 90 ms instead of
    // 11; docs/decisions.md, "Every element path inlines"). javap -c shows the sizes.

    private static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED;
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED;
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED;
    private static final ValueLayout.OfByte I8 = ValueLayout.JAVA_BYTE;
    private static final int LAST_INTEGER_KIND = DType.Kind.UNSIGNED.ordinal();

    /** Reads a real element as a double: booleans as 0 or 1, unsigned integers as their value. */
    static double readDouble(DType dtype, MemorySegment d, long off) {
        return dtype == DType.FLOAT64 ? d.get(F64, off) : otherAsDouble(dtype, d, off);
    }

    private static double otherAsDouble(DType t, MemorySegment d, long off) {
        return isInteger(t) ? integerAsDouble(t, d, off) : floatAsDouble(t, d, off);
    }

    private static double integerAsDouble(DType t, MemorySegment d, long off) {
        return t.kind() == DType.Kind.UNSIGNED ? unsignedToDouble(readUnsigned(t, d, off)) : readSignedOrBool(t, d, off);
    }

    private static long readSignedOrBool(DType t, MemorySegment d, long off) {
        return t.kind() == DType.Kind.BOOL ? readBool(d, off) : readSigned(t, d, off);
    }

    private static long readBool(MemorySegment d, long off) {
        return d.get(I8, off) != 0 ? 1 : 0;
    }

    private static boolean isInteger(DType t) {
        return t.kind().ordinal() <= LAST_INTEGER_KIND;
    }

    private static double unsignedToDouble(long v) {
        return v >= 0 ? v : (double) (v >>> 1) * 2.0 + (v & 1);
    }

    private static double floatAsDouble(DType t, MemorySegment d, long off) {
        return t.kind() == DType.Kind.FLOAT ? ieeeAsDouble(t.itemSize(), d, off) : bfloatAsDouble(t, d, off);
    }

    private static double ieeeAsDouble(int size, MemorySegment d, long off) {
        return size == 8 ? d.get(F64, off) : narrowIeeeAsDouble(size, d, off);
    }

    private static double narrowIeeeAsDouble(int size, MemorySegment d, long off) {
        return size == 4 ? d.get(F32, off) : Float.float16ToFloat(d.get(I16, off));
    }

    private static double bfloatAsDouble(DType t, MemorySegment d, long off) {
        if (t.kind() != DType.Kind.BFLOAT) {
            throw notReal(t);
        }
        return bfloat16ToFloat(d.get(I16, off));
    }

    private static float bfloat16ToFloat(short bits) {
        return Float.intBitsToFloat((bits & 0xFFFF) << 16);
    }

    /** Why a complex or custom element has no real value. */
    private static UnsupportedOperationException notReal(DType t) {
        return t.kind() == DType.Kind.COMPLEX ? new UnsupportedOperationException("dtype " + t
                + " is complex: read it with getComplex") : customAccess(t);
    }

    /** Reads a real element as a long: floats truncate toward zero, uint64 gives its bits. */
    static long readLong(DType dtype, MemorySegment d, long off) {
        return isInteger(dtype) ? integerAsLong(dtype, d, off) : (long) floatAsDouble(dtype, d, off);
    }

    private static long integerAsLong(DType t, MemorySegment d, long off) {
        return t.kind() == DType.Kind.UNSIGNED ? readUnsigned(t, d, off) : readSignedOrBool(t, d, off);
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
        int size = dtype.itemSize();
        return size >= 4 ? signedWide(size, d, off) : signedNarrow(size, d, off);
    }

    private static long signedWide(int size, MemorySegment d, long off) {
        return size == 4 ? d.get(I32, off) : d.get(I64, off);
    }

    private static long signedNarrow(int size, MemorySegment d, long off) {
        return size == 2 ? d.get(I16, off) : d.get(I8, off);
    }

    /** An unsigned integer element, zero-extended (uint64: its bits). */
    static long readUnsigned(DType dtype, MemorySegment d, long off) {
        int size = dtype.itemSize();
        return size >= 4 ? unsignedWide(size, d, off) : unsignedNarrow(size, d, off);
    }

    private static long unsignedWide(int size, MemorySegment d, long off) {
        return size == 4 ? d.get(I32, off) & 0xFFFF_FFFFL : d.get(I64, off);
    }

    private static long unsignedNarrow(int size, MemorySegment d, long off) {
        return size == 2 ? readU16(d, off) : d.get(I8, off) & 0xFFL;
    }

    private static long readU16(MemorySegment d, long off) {
        return d.get(I16, off) & 0xFFFFL;
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
            d.set(F64, off, v);
        } else {
            writeOtherDouble(dtype, d, off, v);
        }
    }

    private static void writeOtherDouble(DType t, MemorySegment d, long off, double v) {
        if (isInteger(t)) {
            writeIntegerFromDouble(t, d, off, v);
        } else {
            writeFloat(t, d, off, v);
        }
    }

    private static void writeIntegerFromDouble(DType t, MemorySegment d, long off, double v) {
        if (t.kind() == DType.Kind.BOOL) {
            writeBool(d, off, v);
        } else {
            writeInteger(t, d, off, doubleToInteger(t, v));
        }
    }

    private static void writeBool(MemorySegment d, long off, double value) {
        d.set(I8, off, (byte) (value != 0 ? 1 : 0));
    }

    /** A C cast of {@code v} to the integer dtype {@code t}: uint64 takes values from 2^63 up. */
    private static long doubleToInteger(DType t, double v) {
        return t.kind() == DType.Kind.UNSIGNED && v >= 0x1p63 ? (long) (v - 0x1p63) ^ Long.MIN_VALUE : (long) v;
    }

    private static void writeIntegerFromLong(DType t, MemorySegment d, long off, long v) {
        if (t.kind() == DType.Kind.BOOL) {
            writeBool(d, off, v);   // as a double: 0 only for 0
        } else {
            writeInteger(t, d, off, v);
        }
    }

    private static void writeFloat(DType t, MemorySegment d, long off, double v) {
        if (t.kind() == DType.Kind.FLOAT) {
            writeIeee(t.itemSize(), d, off, v);
        } else {
            writeBfloatOrComplex(t, d, off, v);
        }
    }

    private static void writeIeee(int size, MemorySegment d, long off, double v) {
        if (size == 8) {
            d.set(F64, off, v);
        } else {
            writeNarrowIeee(size, d, off, v);
        }
    }

    private static void writeNarrowIeee(int size, MemorySegment d, long off, double v) {
        if (size == 4) {
            d.set(F32, off, (float) v);
        } else {
            writeHalf(d, off, v);
        }
    }

    private static void writeHalf(MemorySegment d, long off, double v) {
        d.set(I16, off, Float.floatToFloat16((float) v));
    }

    private static void writeBfloatOrComplex(DType t, MemorySegment d, long off, double v) {
        if (t.kind() == DType.Kind.BFLOAT) {
            writeBfloat(d, off, v);
        } else {
            writeComplexOrRefuse(t, d, off, v);
        }
    }

    private static void writeBfloat(MemorySegment d, long off, double v) {
        d.set(I16, off, toBfloat16((float) v));
    }

    private static void writeComplexOrRefuse(DType t, MemorySegment d, long off, double v) {
        if (t.kind() != DType.Kind.COMPLEX) {
            throw customAccess(t);
        }
        writeComplex(t, d, off, v, 0);
    }

    /** Writes a long: integers keep the low bits, floats round to nearest, booleans are {@code v != 0}. */
    static void writeLong(DType dtype, MemorySegment d, long off, long v) {
        if (isInteger(dtype)) {
            writeIntegerFromLong(dtype, d, off, v);
        } else {
            writeFloat(dtype, d, off, v);
        }
    }

    /** Writes the low {@code itemSize} bytes of an integer. */
    static void writeInteger(DType dtype, MemorySegment d, long off, long v) {
        int size = dtype.itemSize();
        if (size >= 4) {
            writeWide(size, d, off, v);
        } else {
            writeNarrow(size, d, off, v);
        }
    }

    private static void writeWide(int size, MemorySegment d, long off, long v) {
        if (size == 4) {
            d.set(I32, off, (int) v);
        } else {
            d.set(I64, off, v);
        }
    }

    private static void writeNarrow(int size, MemorySegment d, long off, long v) {
        if (size == 2) {
            writeI16(d, off, v);
        } else {
            d.set(I8, off, (byte) v);
        }
    }

    private static void writeI16(MemorySegment d, long off, long v) {
        d.set(I16, off, (short) v);
    }

    /** Writes a complex element; the dtype is complex64 or complex128. */
    static void writeComplex(DType dtype, MemorySegment d, long off, double re, double im) {
        if (dtype.itemSize() == 8) {
            writeComplex64(d, off, re, im);
        } else {
            writeComplex128(d, off, re, im);
        }
    }

    private static void writeComplex64(MemorySegment d, long off, double re, double im) {
        d.set(F32, off, (float) re);
        d.set(F32, off + 4, (float) im);
    }

    private static void writeComplex128(MemorySegment d, long off, double re, double im) {
        d.set(F64, off, re);
        d.set(F64, off + 8, im);
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
        return Float.isNaN(f) ? (short) ((bits >>> 16) | 0x0040) : roundToBfloat16(bits);
    }

    private static short roundToBfloat16(int bits) {
        return (short) ((bits + 0x7FFF + ((bits >>> 16) & 1)) >>> 16);
    }

    /** The refusal of element access to a custom dtype, whose bytes only its owner can interpret. */
    static UnsupportedOperationException customAccess(DType dtype) {
        return new UnsupportedOperationException("dtype " + dtype + " is a custom dtype (format " + dtype.format()
                + "): read and write its bytes through segment()");
    }
}
