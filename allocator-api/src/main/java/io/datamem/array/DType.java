package io.datamem.array;

import java.util.List;
import java.util.Objects;

/**
 * The element type of an array: its size and alignment, and how each interchange protocol names
 * it: the PEP 3118 format string of the buffer protocol, DLPack's {@code (code, bits, lanes)} and
 * NumPy's array-interface {@code typestr}.
 *
 * <p>The built-in dtypes are the constants; {@link #custom} makes others (element access then goes
 * through {@link NDArray#segment()} only).
 *
 * @param name        the name, for example {@code float64}
 * @param kind        the numeric kind, which decides element access
 * @param itemSize    bytes per element, at least 1
 * @param alignment   natural alignment in bytes, a power of two
 * @param format      the PEP 3118 format string (native byte order), for example {@code d}
 * @param dlpackCode  DLPack's {@code DLDataTypeCode}, for example 2 ({@code kDLFloat})
 * @param dlpackBits  DLPack bits per lane
 * @param dlpackLanes DLPack lanes, 1 for scalars
 * @param typestr     NumPy's array-interface typestr, for example {@code <f8}
 */
public record DType(String name, Kind kind, int itemSize, int alignment, String format, int dlpackCode,
                    int dlpackBits, int dlpackLanes, String typestr) {

    /** How elements of a dtype are read and written. */
    public enum Kind {
        /** One byte, 0 or 1. */
        BOOL,
        /** Two's-complement signed integer. */
        SIGNED,
        /** Unsigned integer. */
        UNSIGNED,
        /** IEEE 754 binary floating point (binary16, binary32, binary64). */
        FLOAT,
        /** bfloat16: the upper half of a binary32. */
        BFLOAT,
        /** Two IEEE floats, real then imaginary. */
        COMPLEX,
        /** Anything else: opaque bytes. */
        CUSTOM
    }

    /** DLPack {@code kDLInt}. */
    public static final int DL_INT = 0;
    /** DLPack {@code kDLUInt}. */
    public static final int DL_UINT = 1;
    /** DLPack {@code kDLFloat}. */
    public static final int DL_FLOAT = 2;
    /** DLPack {@code kDLOpaqueHandle}. */
    public static final int DL_OPAQUE_HANDLE = 3;
    /** DLPack {@code kDLBfloat}. */
    public static final int DL_BFLOAT = 4;
    /** DLPack {@code kDLComplex}. */
    public static final int DL_COMPLEX = 5;
    /** DLPack {@code kDLBool}. */
    public static final int DL_BOOL = 6;

    /** {@code bool}: one byte. */
    public static final DType BOOL = new DType("bool", Kind.BOOL, 1, 1, "?", DL_BOOL, 8, 1, "|b1");
    /** {@code int8}. */
    public static final DType INT8 = new DType("int8", Kind.SIGNED, 1, 1, "b", DL_INT, 8, 1, "|i1");
    /** {@code int16}. */
    public static final DType INT16 = new DType("int16", Kind.SIGNED, 2, 2, "h", DL_INT, 16, 1, "<i2");
    /** {@code int32}. */
    public static final DType INT32 = new DType("int32", Kind.SIGNED, 4, 4, "i", DL_INT, 32, 1, "<i4");
    /** {@code int64}. */
    public static final DType INT64 = new DType("int64", Kind.SIGNED, 8, 8, "q", DL_INT, 64, 1, "<i8");
    /** {@code uint8}. */
    public static final DType UINT8 = new DType("uint8", Kind.UNSIGNED, 1, 1, "B", DL_UINT, 8, 1, "|u1");
    /** {@code uint16}. */
    public static final DType UINT16 = new DType("uint16", Kind.UNSIGNED, 2, 2, "H", DL_UINT, 16, 1, "<u2");
    /** {@code uint32}. */
    public static final DType UINT32 = new DType("uint32", Kind.UNSIGNED, 4, 4, "I", DL_UINT, 32, 1, "<u4");
    /** {@code uint64}. */
    public static final DType UINT64 = new DType("uint64", Kind.UNSIGNED, 8, 8, "Q", DL_UINT, 64, 1, "<u8");
    /** {@code float16}: IEEE binary16. */
    public static final DType FLOAT16 = new DType("float16", Kind.FLOAT, 2, 2, "e", DL_FLOAT, 16, 1, "<f2");
    /**
     * {@code bfloat16}. The buffer protocol has no character for it: its format is the custom dtype
     * {@code [ml_dtypes$bfloat16]}; NumPy (through ml_dtypes) reports typestr {@code <V2}.
     */
    public static final DType BFLOAT16 =
            new DType("bfloat16", Kind.BFLOAT, 2, 2, "[ml_dtypes$bfloat16]", DL_BFLOAT, 16, 1, "<V2");
    /** {@code float32}: IEEE binary32. */
    public static final DType FLOAT32 = new DType("float32", Kind.FLOAT, 4, 4, "f", DL_FLOAT, 32, 1, "<f4");
    /** {@code float64}: IEEE binary64. */
    public static final DType FLOAT64 = new DType("float64", Kind.FLOAT, 8, 8, "d", DL_FLOAT, 64, 1, "<f8");
    /** {@code complex64}: two float32. */
    public static final DType COMPLEX64 = new DType("complex64", Kind.COMPLEX, 8, 4, "Zf", DL_COMPLEX, 64, 1, "<c8");
    /** {@code complex128}: two float64. */
    public static final DType COMPLEX128 =
            new DType("complex128", Kind.COMPLEX, 16, 8, "Zd", DL_COMPLEX, 128, 1, "<c16");

    private static final List<DType> BUILTIN = List.of(BOOL, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32,
            UINT64, FLOAT16, BFLOAT16, FLOAT32, FLOAT64, COMPLEX64, COMPLEX128);

    /**
     * Validates the components.
     *
     * @throws NullPointerException     if a reference component is null
     * @throws IllegalArgumentException if {@code name}, {@code format} or {@code typestr} is blank,
     *                                  {@code itemSize} is below 1, {@code alignment} is not a power
     *                                  of two, a DLPack field is out of its C type's range, or
     *                                  {@code dlpackBits * dlpackLanes} is not {@code itemSize * 8}
     *                                  for a dtype whose kind is not {@link Kind#CUSTOM}
     */
    public DType {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(format, "format");
        Objects.requireNonNull(typestr, "typestr");
        if (name.isBlank() || format.isBlank() || typestr.isBlank()) {
            throw new IllegalArgumentException("dtype '" + name + "': name, format and typestr must not be blank");
        }
        if (itemSize < 1) {
            throw new IllegalArgumentException("itemSize: " + itemSize + " (expected: >= 1)");
        }
        if (alignment < 1 || Integer.bitCount(alignment) != 1) {
            throw new IllegalArgumentException("alignment: " + alignment + " (expected: a power of two)");
        }
        if (dlpackCode < 0 || dlpackCode > 255 || dlpackBits < 1 || dlpackBits > 255 || dlpackLanes < 1
                || dlpackLanes > 65535) {
            throw new IllegalArgumentException("dtype '" + name + "': DLPack (code " + dlpackCode + ", bits "
                    + dlpackBits + ", lanes " + dlpackLanes + ") (expected: code and bits in uint8, lanes in uint16)");
        }
        if (kind != Kind.CUSTOM && (long) dlpackBits * dlpackLanes != itemSize * 8L) {
            throw new IllegalArgumentException("dtype '" + name + "': DLPack bits x lanes " + dlpackBits + " x "
                    + dlpackLanes + " (expected: itemSize * 8 = " + itemSize * 8 + ")");
        }
    }

    /**
     * A custom dtype, reached as bytes only.
     *
     * @param name      the name
     * @param itemSize  bytes per element
     * @param alignment natural alignment
     * @param format    its PEP 3118 format, typically a custom spelling such as {@code [mylib$coords]}
     * @param dlpackCode  the DLPack type code (for example {@link #DL_OPAQUE_HANDLE})
     * @param dlpackBits  the DLPack bits
     * @param dlpackLanes the DLPack lanes
     * @param typestr   its NumPy typestr, for example {@code |V16}
     * @return the dtype
     * @throws NullPointerException     if a reference argument is null
     * @throws IllegalArgumentException if an argument is out of range (see the constructor)
     */
    public static DType custom(String name, int itemSize, int alignment, String format, int dlpackCode,
                               int dlpackBits, int dlpackLanes, String typestr) {
        return new DType(name, Kind.CUSTOM, itemSize, alignment, format, dlpackCode, dlpackBits, dlpackLanes,
                typestr);
    }

    /**
     * The built-in dtypes.
     *
     * @return bool, int8-64, uint8-64, float16, bfloat16, float32, float64, complex64, complex128
     */
    public static List<DType> builtins() {
        return BUILTIN;
    }

    /**
     * The built-in dtype with a name.
     *
     * @param name for example {@code float32}
     * @return the dtype
     * @throws IllegalArgumentException if no built-in dtype has that name
     */
    public static DType of(String name) {
        for (DType d : BUILTIN) {
            if (d.name.equals(name)) {
                return d;
            }
        }
        throw new IllegalArgumentException("dtype: '" + name + "' (expected: one of "
                + BUILTIN.stream().map(DType::name).toList() + ")");
    }

    /**
     * The built-in dtype with a DLPack {@code (code, bits, lanes)}.
     *
     * @param code  the type code
     * @param bits  bits per lane
     * @param lanes lanes
     * @return the dtype
     * @throws IllegalArgumentException if no built-in dtype matches
     */
    public static DType ofDlpack(int code, int bits, int lanes) {
        for (DType d : BUILTIN) {
            if (d.dlpackCode == code && d.dlpackBits == bits && d.dlpackLanes == lanes) {
                return d;
            }
        }
        throw new IllegalArgumentException("DLPack dtype (code " + code + ", bits " + bits + ", lanes " + lanes
                + ") has no datamem dtype");
    }

    @Override
    public String toString() {
        return name;
    }
}
