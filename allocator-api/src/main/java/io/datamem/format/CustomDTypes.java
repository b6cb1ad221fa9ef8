package io.datamem.format;

import io.datamem.array.DType;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * The registry of custom dtypes that format strings name with the custom dtype draft's syntax
 * {@code [id$payload]}, and that DLPack names with type codes beyond the built-in dtypes'.
 *
 * <p>Registered from the start: {@link DType#BFLOAT16} as {@code [ml_dtypes$bfloat16]} and the
 * eight float8 formats of DLPack 1.1 and ml_dtypes as {@code [ml_dtypes$float8_...]}, and its
 * float6 and float4 formats as {@code [ml_dtypes$float6_e2m3fn]}, {@code [ml_dtypes$float6_e3m2fn]}
 * and {@code [ml_dtypes$float4_e2m1fn]}: sub-byte types held one element per byte, in the low
 * bits (as ml_dtypes stores them), which DLPack calls padded
 * ({@code DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED}). The
 * identifier {@code ml_dtypes} is the PyPI package that defines these types for NumPy, as the
 * draft asks identifiers to be. Further dtypes can be {@linkplain #register(DType) registered}: the
 * format of a registrable dtype is a custom spelling, each of whose alternatives (other than the
 * reserved {@code struct$} and {@code buffer$}) then resolves to it.
 *
 * <p>Thread-safe.
 */
public final class CustomDTypes {

    /** The identifier of ml_dtypes' types. */
    public static final String ML_DTYPES = "ml_dtypes";

    /** {@code float8_e3m4} (DLPack {@code kDLFloat8_e3m4} = 7). */
    public static final DType FLOAT8_E3M4 = float8("float8_e3m4", 7);
    /** {@code float8_e4m3} (DLPack {@code kDLFloat8_e4m3} = 8). */
    public static final DType FLOAT8_E4M3 = float8("float8_e4m3", 8);
    /** {@code float8_e4m3b11fnuz} (DLPack {@code kDLFloat8_e4m3b11fnuz} = 9). */
    public static final DType FLOAT8_E4M3B11FNUZ = float8("float8_e4m3b11fnuz", 9);
    /** {@code float8_e4m3fn} (DLPack {@code kDLFloat8_e4m3fn} = 10). */
    public static final DType FLOAT8_E4M3FN = float8("float8_e4m3fn", 10);
    /** {@code float8_e4m3fnuz} (DLPack {@code kDLFloat8_e4m3fnuz} = 11). */
    public static final DType FLOAT8_E4M3FNUZ = float8("float8_e4m3fnuz", 11);
    /** {@code float8_e5m2} (DLPack {@code kDLFloat8_e5m2} = 12). */
    public static final DType FLOAT8_E5M2 = float8("float8_e5m2", 12);
    /** {@code float8_e5m2fnuz} (DLPack {@code kDLFloat8_e5m2fnuz} = 13). */
    public static final DType FLOAT8_E5M2FNUZ = float8("float8_e5m2fnuz", 13);
    /** {@code float8_e8m0fnu} (DLPack {@code kDLFloat8_e8m0fnu} = 14). */
    public static final DType FLOAT8_E8M0FNU = float8("float8_e8m0fnu", 14);

    /** {@code float6_e2m3fn} (DLPack {@code kDLFloat6_e2m3fn} = 15, 6 bits, one per byte). */
    public static final DType FLOAT6_E2M3FN = subByte("float6_e2m3fn", 15, 6);
    /** {@code float6_e3m2fn} (DLPack {@code kDLFloat6_e3m2fn} = 16, 6 bits, one per byte). */
    public static final DType FLOAT6_E3M2FN = subByte("float6_e3m2fn", 16, 6);
    /** {@code float4_e2m1fn} (DLPack {@code kDLFloat4_e2m1fn} = 17, 4 bits, one per byte). */
    public static final DType FLOAT4_E2M1FN = subByte("float4_e2m1fn", 17, 4);

    private static final List<DType> SUB_BYTE = List.of(FLOAT6_E2M3FN, FLOAT6_E3M2FN, FLOAT4_E2M1FN);

    private static final List<DType> FLOAT8 = List.of(FLOAT8_E3M4, FLOAT8_E4M3, FLOAT8_E4M3B11FNUZ, FLOAT8_E4M3FN,
            FLOAT8_E4M3FNUZ, FLOAT8_E5M2, FLOAT8_E5M2FNUZ, FLOAT8_E8M0FNU);

    private static final Map<String, DType> BY_SPELLING = new LinkedHashMap<>();
    private static final List<DType> REGISTERED = new ArrayList<>();

    static {
        add(DType.BFLOAT16);
        for (DType d : FLOAT8) {
            add(d);
        }
        for (DType d : SUB_BYTE) {
            add(d);
        }
    }

    private CustomDTypes() {
    }

    private static DType float8(String name, int dlpackCode) {
        return DType.custom(name, 1, 1, "[" + ML_DTYPES + "$" + name + "]", dlpackCode, 8, 1, "|V1");
    }

    private static DType subByte(String name, int dlpackCode, int bits) {
        return DType.custom(name, 1, 1, "[" + ML_DTYPES + "$" + name + "]", dlpackCode, bits, 1, "|V1");
    }

    /**
     * The sub-byte dtypes: float6 and float4, each element in the low bits of a byte of its own
     * (DLPack bits 6 or 4, lanes 1, item size 1).
     *
     * @return float6_e2m3fn, float6_e3m2fn, float4_e2m1fn
     */
    public static List<DType> subByte() {
        return SUB_BYTE;
    }

    /**
     * The eight float8 dtypes.
     *
     * @return e3m4, e4m3, e4m3b11fnuz, e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, e8m0fnu
     */
    public static List<DType> float8() {
        return FLOAT8;
    }

    /**
     * Registers a custom dtype: every spelling of its format (except {@code struct$} and
     * {@code buffer$} alternatives) will resolve to it, and its DLPack type will import as it.
     *
     * @param dtype a dtype whose format is a custom spelling such as {@code [mylib$coords]} or
     *              {@code [mylib$coords;buffer$T{d:x:d:y:}]}
     * @throws NullPointerException     if {@code dtype} is null
     * @throws IllegalArgumentException if its format is not a custom spelling, a spelling is
     *                                  registered to another dtype, or its DLPack
     *                                  {@code (code, bits, lanes)} is a built-in dtype's or another
     *                                  registered dtype's (except the opaque-handle code 3)
     */
    public static synchronized void register(DType dtype) {
        Objects.requireNonNull(dtype, "dtype");
        List<FormatString.Spelling> spellings = spellingsOf(dtype.format());
        for (FormatString.Spelling s : spellings) {
            DType other = BY_SPELLING.get(s.toString());
            if (other != null && !other.equals(dtype)) {
                throw new IllegalArgumentException("dtype " + dtype + ": spelling " + s + " is registered to " + other);
            }
        }
        if (dtype.dlpackCode() != DType.DL_OPAQUE_HANDLE) {
            for (DType d : DType.builtins()) {
                if (sameDlpack(d, dtype)) {
                    throw new IllegalArgumentException("dtype " + dtype + ": DLPack (" + dtype.dlpackCode() + ", "
                            + dtype.dlpackBits() + ", " + dtype.dlpackLanes() + ") is built-in dtype " + d + "'s");
                }
            }
            for (DType d : REGISTERED) {
                if (sameDlpack(d, dtype) && !d.equals(dtype)) {
                    throw new IllegalArgumentException("dtype " + dtype + ": DLPack (" + dtype.dlpackCode() + ", "
                            + dtype.dlpackBits() + ", " + dtype.dlpackLanes() + ") is registered to " + d);
                }
            }
        }
        add(dtype);
    }

    private static boolean sameDlpack(DType a, DType b) {
        return a.dlpackCode() == b.dlpackCode() && a.dlpackBits() == b.dlpackBits()
                && a.dlpackLanes() == b.dlpackLanes();
    }

    private static void add(DType dtype) {
        for (FormatString.Spelling s : spellingsOf(dtype.format())) {
            BY_SPELLING.put(s.toString(), dtype);
        }
        if (!REGISTERED.contains(dtype)) {
            REGISTERED.add(dtype);
        }
    }

    private static List<FormatString.Spelling> spellingsOf(String format) {
        FormatString f;
        try {
            f = FormatString.parseSpellings(format);
        } catch (FormatException e) {
            throw new IllegalArgumentException("format: '" + format + "' (expected: a custom dtype spelling"
                    + " [id$payload], or several separated by ';')", e);
        }
        List<FormatString.Spelling> out = new ArrayList<>();
        for (FormatString.Spelling s : ((FormatString.Custom) f.fields().getFirst().type()).spellings()) {
            if (!s.isReserved()) {
                out.add(s);
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("format: '" + format + "' has only reserved struct$/buffer$ spellings");
        }
        return out;
    }

    /**
     * The dtype registered for a spelling.
     *
     * @param id      the identifier before {@code $}
     * @param payload the text after it
     * @return the dtype, or empty if none is registered
     * @throws NullPointerException if an argument is null
     */
    public static synchronized Optional<DType> lookup(String id, String payload) {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(payload, "payload");
        return Optional.ofNullable(BY_SPELLING.get(id + "$" + payload));
    }

    /**
     * The registered dtype with a DLPack type (the opaque-handle code 3 never matches: its meaning
     * is private to the two sides).
     *
     * @param code  the type code
     * @param bits  bits per lane
     * @param lanes lanes
     * @return the dtype, or empty
     */
    public static synchronized Optional<DType> ofDlpack(int code, int bits, int lanes) {
        if (code == DType.DL_OPAQUE_HANDLE) {
            return Optional.empty();
        }
        for (DType d : REGISTERED) {
            if (d.dlpackCode() == code && d.dlpackBits() == bits && d.dlpackLanes() == lanes) {
                return Optional.of(d);
            }
        }
        return Optional.empty();
    }

    /**
     * Every registered dtype, in registration order.
     *
     * @return an immutable snapshot
     */
    public static synchronized List<DType> registered() {
        return List.copyOf(REGISTERED);
    }

    /**
     * The identifiers with at least one registered spelling.
     *
     * @return a sorted, immutable snapshot, for example {@code [ml_dtypes]}
     */
    public static synchronized Set<String> ids() {
        Set<String> ids = new TreeSet<>();
        for (String spelling : BY_SPELLING.keySet()) {
            ids.add(spelling.substring(0, spelling.indexOf('$')));
        }
        return Collections.unmodifiableSet(ids);
    }
}
