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

    // readDouble, readLong, writeDouble and writeLong are each one method with no call on a path
    // that returns (JDK accessors and intrinsics aside; and bfloat16 and complex elements written
    // through writeDouble or writeLong, which are rare), under the JIT's hot inlining size (325
    // bytes of bytecode; javap -c shows them). The JIT does not inline a helper at a call site it
    // thinks rare, however small: a loop over float64 arrays in a program that also read int32
    // arrays elsewhere kept such a call, and a call makes every field load of the loop reload each
    // time (a 256 x 256 matrix multiply after mixed use took 10 times the same loop over
    // double[][]; docs/decisions.md, "Every element path inlines"). So writeDouble and writeLong
    // spell out the same stores, on purpose.

    private static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED;
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED;
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED;
    private static final ValueLayout.OfByte I8 = ValueLayout.JAVA_BYTE;
    /** Kinds up to this ordinal (bool, signed, unsigned) are integers. */
    private static final int LAST_INTEGER_KIND = DType.Kind.UNSIGNED.ordinal();

    /** Reads a real element as a double: booleans as 0 or 1, unsigned integers as their value. */
    static double readDouble(DType t, MemorySegment d, long off) {
        if (t == DType.FLOAT64) {
            return d.get(F64, off);
        }
        DType.Kind k = t.kind();
        int size = t.itemSize();
        if (k.ordinal() <= LAST_INTEGER_KIND) {
            long v = size == 4 ? d.get(I32, off) : size == 8 ? d.get(I64, off)
                    : size == 2 ? d.get(I16, off) : d.get(I8, off);
            if (k == DType.Kind.SIGNED) {
                return v;
            }
            if (k == DType.Kind.BOOL) {
                return v != 0 ? 1 : 0;
            }
            if (size < 8) {
                return v & (-1L >>> (64 - 8 * size));
            }
            return v >= 0 ? v : (double) (v >>> 1) * 2.0 + (v & 1);
        }
        if (k == DType.Kind.FLOAT) {
            return size == 4 ? d.get(F32, off) : size == 2 ? Float.float16ToFloat(d.get(I16, off)) : d.get(F64, off);
        }
        if (k == DType.Kind.BFLOAT) {
            return Float.intBitsToFloat((d.get(I16, off) & 0xFFFF) << 16);
        }
        throw notReal(t);
    }

    /** Why a complex or custom element has no real value. */
    private static UnsupportedOperationException notReal(DType t) {
        return t.kind() == DType.Kind.COMPLEX ? new UnsupportedOperationException("dtype " + t
                + " is complex: read it with getComplex") : customAccess(t);
    }

    /** Reads a real element as a long: floats truncate toward zero, uint64 gives its bits. */
    static long readLong(DType t, MemorySegment d, long off) {
        DType.Kind k = t.kind();
        int size = t.itemSize();
        if (k.ordinal() <= LAST_INTEGER_KIND) {
            long v = size == 8 ? d.get(I64, off) : size == 4 ? d.get(I32, off)
                    : size == 2 ? d.get(I16, off) : d.get(I8, off);
            if (k == DType.Kind.SIGNED) {
                return v;
            }
            if (k == DType.Kind.BOOL) {
                return v != 0 ? 1 : 0;
            }
            return size < 8 ? v & (-1L >>> (64 - 8 * size)) : v;
        }
        if (k == DType.Kind.FLOAT) {
            return size == 8 ? (long) d.get(F64, off) : size == 4 ? (long) d.get(F32, off)
                    : (long) Float.float16ToFloat(d.get(I16, off));
        }
        if (k == DType.Kind.BFLOAT) {
            return (long) Float.intBitsToFloat((d.get(I16, off) & 0xFFFF) << 16);
        }
        throw notReal(t);
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
    static void writeDouble(DType t, MemorySegment d, long off, double v) {
        if (t == DType.FLOAT64) {
            d.set(F64, off, v);
            return;
        }
        DType.Kind k = t.kind();
        int size = t.itemSize();
        long bits;   // what the integer stores below write: integers, and 16-bit floats' bits
        if (k.ordinal() <= LAST_INTEGER_KIND) {
            // a C cast; uint64 takes values from 2^63 up
            bits = k == DType.Kind.BOOL ? (v != 0 ? 1 : 0)
                    : k == DType.Kind.UNSIGNED && v >= 0x1p63 ? (long) (v - 0x1p63) ^ Long.MIN_VALUE : (long) v;
        } else if (k == DType.Kind.BFLOAT) {
            bits = toBfloat16((float) v);   // a call, as for complex: both are rare through setDouble
        } else if (k == DType.Kind.FLOAT && size == 2) {
            bits = Float.floatToFloat16((float) v);
        } else if (k == DType.Kind.FLOAT) {
            if (size == 4) {
                d.set(F32, off, (float) v);
            } else {
                d.set(F64, off, v);
            }
            return;
        } else if (k == DType.Kind.COMPLEX) {
            writeComplex(t, d, off, v, 0);
            return;
        } else {
            throw customAccess(t);
        }
        if (size == 8) {
            d.set(I64, off, bits);
        } else if (size == 4) {
            d.set(I32, off, (int) bits);
        } else if (size == 2) {
            d.set(I16, off, (short) bits);
        } else {
            d.set(I8, off, (byte) bits);
        }
    }

    /** Writes a long: integers keep the low bits, floats round to nearest, booleans are {@code v != 0}. */
    static void writeLong(DType t, MemorySegment d, long off, long v) {
        DType.Kind k = t.kind();
        int size = t.itemSize();
        long bits;   // what the integer stores below write: integers, and 16-bit floats' bits
        if (k.ordinal() <= LAST_INTEGER_KIND) {
            bits = k == DType.Kind.BOOL ? (v != 0 ? 1 : 0) : v;
        } else if (k == DType.Kind.BFLOAT) {
            bits = toBfloat16((float) v);
        } else if (k == DType.Kind.FLOAT && size == 2) {
            bits = Float.floatToFloat16((float) v);
        } else if (k == DType.Kind.FLOAT) {
            if (size == 4) {
                d.set(F32, off, (float) v);
            } else {
                d.set(F64, off, (double) v);
            }
            return;
        } else if (k == DType.Kind.COMPLEX) {
            writeComplex(t, d, off, v, 0);
            return;
        } else {
            throw customAccess(t);
        }
        if (size == 8) {
            d.set(I64, off, bits);
        } else if (size == 4) {
            d.set(I32, off, (int) bits);
        } else if (size == 2) {
            d.set(I16, off, (short) bits);
        } else {
            d.set(I8, off, (byte) bits);
        }
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
        return f != f ? (short) ((bits >>> 16) | 0x0040) : (short) ((bits + 0x7FFF + ((bits >>> 16) & 1)) >>> 16);
    }

    /** The refusal of element access to a custom dtype, whose bytes only its owner can interpret. */
    static UnsupportedOperationException customAccess(DType dtype) {
        return new UnsupportedOperationException("dtype " + dtype + " is a custom dtype (format " + dtype.format()
                + "): read and write its bytes through segment()");
    }
}
