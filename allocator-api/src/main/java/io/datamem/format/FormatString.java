package io.datamem.format;

import io.datamem.array.DType;

import java.nio.ByteOrder;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A parsed PEP 3118 format string: the element type of a buffer, with its item size, alignment and
 * canonical form, and the {@link DType} it stands for when it is a single element of one.
 *
 * <p>{@link #parse(String)} reads the buffer protocol's format language:
 * <ul>
 *   <li>byte-order, size and alignment prefixes {@code @ = < > !} (and NumPy's {@code ^}, native
 *       sizes without alignment), anywhere in the string; each changes the mode of the items
 *       after it, across struct boundaries, as NumPy reads them;</li>
 *   <li>every character of Python's {@code struct} module ({@code x c b B ? h H i I l L q Q n N e
 *       f d s p P}), and the PEP 3118 and NumPy extensions {@code g} (long double), {@code Z}
 *       complex prefixes ({@code Ze Zf Zd Zg}), {@code w} (UCS-4) and {@code u} (UCS-2);
 *       {@code O} (Python objects), {@code &} (pointers), {@code t} (bits) and {@code X{}}
 *       (functions) are recognised and rejected, since nothing outside Python can use them;</li>
 *   <li>repeat counts ({@code 3d}; for {@code s p w u} the count is the length), shape prefixes
 *       {@code (2,3)d} (with a count, {@code (2,3)4d} has shape {@code (2,3,4)}), nested structs
 *       {@code T{...}} and field names {@code :name:};</li>
 *   <li>the custom dtype draft's {@code [id$payload;id$payload]}: printable ASCII without
 *       {@code ] ; $} in identifiers and payloads, alternatives separated by {@code ;} of which
 *       the first one understood is used, the reserved {@code struct$} (a {@code struct} module
 *       format) and {@code buffer$} (a buffer format without the custom syntax), and the
 *       identifiers of {@link CustomDTypes}. An unknown identifier is an error that names it.</li>
 * </ul>
 *
 * <p>Sizes and offsets follow Python's {@code struct} module exactly: under {@code @} (the
 * default) items have native sizes and are aligned to their native alignment, with no padding
 * after the last item ({@code "di"} is 12 bytes, {@code "id"} 16); under {@code = < > !} sizes
 * are standard and nothing is aligned; {@code n N P g Zg} have no standard size. A nested
 * {@code T{...}} is laid out as a C struct: aligned to its most aligned field and padded to a
 * multiple of that alignment ({@code "T{di}"} is 16 bytes). {@link #parseStruct(String)} reads
 * exactly the {@code struct} module's own language, and agrees with {@code struct.calcsize}.
 *
 * <p>{@link #toString()} writes the canonical form back; parsing it gives an equal
 * {@code FormatString}.
 *
 * <p>Parsing is a single forward pass: malformed input throws a {@link FormatException} that
 * names the position, never loops, nests at most {@value #MAX_DEPTH} levels and throws nothing
 * else. Instances are immutable.
 */
public final class FormatString {

    /** The deepest nesting of {@code T{...}} and {@code buffer$} payloads accepted. */
    public static final int MAX_DEPTH = 64;

    /** The most dimensions a shape prefix may have. */
    public static final int MAX_SHAPE_DIMS = 64;

    // The parse tree, package-private (mechanism, not API): FormatParser builds it, CustomDTypes
    // reads spellings from it, and toString, equals, hashCode and dtype() read it.

    /** Byte order, size and alignment modes, named by their prefix characters. */
    enum Mode {
        /** {@code @}: native byte order, native sizes, native alignment (the default). */
        NATIVE('@', true, true),
        /** {@code =}: native byte order, standard sizes, no alignment. */
        NATIVE_STANDARD('=', false, false),
        /** {@code <}: little-endian, standard sizes, no alignment. */
        LITTLE_ENDIAN('<', false, false),
        /** {@code >}: big-endian, standard sizes, no alignment. */
        BIG_ENDIAN('>', false, false),
        /** {@code !}: network order (big-endian), standard sizes, no alignment. */
        NETWORK('!', false, false),
        /** {@code ^}: NumPy's native byte order and sizes without alignment. */
        NATIVE_UNALIGNED('^', true, false);

        private final char prefix;
        private final boolean nativeSizes;
        private final boolean aligned;

        Mode(char prefix, boolean nativeSizes, boolean aligned) {
            this.prefix = prefix;
            this.nativeSizes = nativeSizes;
            this.aligned = aligned;
        }

        /**
         * The prefix character.
         *
         * @return one of {@code @ = < > ! ^}
         */
        char prefix() {
            return prefix;
        }

        /**
         * Whether items have native sizes ({@code l} is a C {@code long}) rather than standard ones.
         *
         * @return true for {@code @} and {@code ^}
         */
        boolean nativeSizes() {
            return nativeSizes;
        }

        /**
         * Whether items are aligned to their native alignment.
         *
         * @return true for {@code @} only
         */
        boolean aligned() {
            return aligned;
        }

        /**
         * The byte order of multi-byte items.
         *
         * @return the platform's order for {@code @ = ^}, little-endian for {@code <}, big-endian
         *         for {@code > !}
         */
        ByteOrder byteOrder() {
            return switch (this) {
                case LITTLE_ENDIAN -> ByteOrder.LITTLE_ENDIAN;
                case BIG_ENDIAN, NETWORK -> ByteOrder.BIG_ENDIAN;
                default -> ByteOrder.nativeOrder();
            };
        }

        /**
         * The mode of a prefix character.
         *
         * @param c a character
         * @return the mode, or null if {@code c} is not a prefix
         */
        static Mode of(char c) {
            return switch (c) {
                case '@' -> NATIVE;
                case '=' -> NATIVE_STANDARD;
                case '<' -> LITTLE_ENDIAN;
                case '>' -> BIG_ENDIAN;
                case '!' -> NETWORK;
                case '^' -> NATIVE_UNALIGNED;
                default -> null;
            };
        }
    }

    /** The type of a field: a struct character, a nested struct or a custom dtype. */
    sealed interface Type permits Scalar, Struct, Custom {
        /**
         * The size of one element of this type.
         *
         * @return bytes
         */
        long itemSize();

        /**
         * The alignment this type needs where it is placed: its native alignment under {@code @},
         * 1 in the unaligned modes; for a struct, its most aligned field's.
         *
         * @return a power of two
         */
        int alignment();
    }

    /**
     * A struct character (or {@code Z} pair): {@code "d"}, {@code "Zf"}, {@code "s"}.
     *
     * @param code      the character(s)
     * @param mode      the mode in effect
     * @param itemSize  the size: for {@code s p w u}, the whole string's
     * @param alignment the alignment in effect (1 unless the mode is aligned)
     */
    record Scalar(String code, Mode mode, long itemSize, int alignment) implements Type {
        /**
         * Validates the components.
         *
         * @throws NullPointerException if {@code code} or {@code mode} is null
         */
        Scalar {
            Objects.requireNonNull(code, "code");
            Objects.requireNonNull(mode, "mode");
        }
    }

    /**
     * A nested struct {@code T{...}}, laid out as a C struct.
     *
     * @param fields    its fields, padding included
     * @param itemSize  its size, padded to a multiple of its alignment
     * @param alignment its most aligned field's alignment (1 when empty)
     */
    record Struct(List<Field> fields, long itemSize, int alignment) implements Type {
        /**
         * Validates the components.
         *
         * @throws NullPointerException if {@code fields} is null
         */
        Struct {
            fields = List.copyOf(fields);
        }
    }

    /**
     * One spelling of a custom dtype: {@code id$payload}.
     *
     * @param id      the identifier, such as {@code ml_dtypes}
     * @param payload the identifier's description of the type, possibly empty
     */
    record Spelling(String id, String payload) {
        /**
         * Validates the components.
         *
         * @throws NullPointerException if an argument is null
         */
        Spelling {
            Objects.requireNonNull(id, "id");
            Objects.requireNonNull(payload, "payload");
        }

        /**
         * Whether the identifier is one the draft reserves: {@code struct} or {@code buffer}.
         *
         * @return true for {@code struct$...} and {@code buffer$...}
         */
        boolean isReserved() {
            return id.equals("struct") || id.equals("buffer");
        }

        @Override
        public String toString() {
            return id + "$" + payload;
        }
    }

    /**
     * A custom dtype {@code [id$payload;...]}, resolved to the first spelling understood.
     *
     * @param spellings every spelling, in order
     * @param chosen    the index of the spelling used
     * @param mode      the mode in effect (byte-order prefixes apply to custom types)
     * @param dtype     the registered dtype it names, or null when a {@code struct$} or
     *                  {@code buffer$} spelling was used
     * @param layout    the parsed {@code struct$}/{@code buffer$} payload, or null
     * @param itemSize  the size of one element
     * @param alignment the alignment in effect
     */
    record Custom(List<Spelling> spellings, int chosen, Mode mode, DType dtype, FormatString layout,
                         long itemSize, int alignment) implements Type {
        /**
         * Validates the components.
         *
         * @throws NullPointerException if {@code spellings} or {@code mode} is null
         */
        Custom {
            spellings = List.copyOf(spellings);
            Objects.requireNonNull(mode, "mode");
        }

        /**
         * The spelling used.
         *
         * @return {@code spellings().get(chosen())}
         */
        Spelling spelling() {
            return spellings.get(chosen);
        }
    }

    /**
     * A field of a struct (the whole format is the outermost struct).
     *
     * @param name   the {@code :name:}, or null
     * @param offset its offset in bytes from the start of the struct
     * @param shape  its dimensions: the shape prefix, then the repeat count when it is not 1 (and
     *               not a string length); empty for one element
     * @param type   its element type
     */
    record Field(String name, long offset, List<Long> shape, Type type) {
        /**
         * Validates the components.
         *
         * @throws NullPointerException if {@code shape} or {@code type} is null
         */
        Field {
            shape = List.copyOf(shape);
            Objects.requireNonNull(type, "type");
        }
    }

    private final String text;
    private final List<Field> fields;
    private final long itemSize;
    private final int alignment;

    FormatString(String text, List<Field> fields, long itemSize, int alignment) {
        this.text = text;
        this.fields = List.copyOf(fields);
        this.itemSize = itemSize;
        this.alignment = alignment;
    }

    /**
     * Parses a buffer-protocol format string (PEP 3118 with NumPy's extensions and custom dtypes).
     *
     * @param format the format, for example {@code "T{<d:x:<d:y:}"} or {@code "[ml_dtypes$bfloat16]"}
     * @return the parsed format
     * @throws NullPointerException if {@code format} is null
     * @throws FormatException      if the format is malformed, uses an unsupported type, names an
     *                              unknown custom dtype, or its size overflows a long; the message
     *                              names the position
     */
    public static FormatString parse(String format) {
        Objects.requireNonNull(format, "format");
        return new FormatParser(format, 0).parseBuffer();
    }

    /**
     * Parses a format of Python's {@code struct} module, exactly as {@code struct} does: an
     * optional prefix {@code @ = < > !} as the first character only, whitespace between items,
     * counts, and the {@code struct} characters alone (no {@code T{}}, {@code Z}, shapes or
     * names). {@link #itemSize()} is {@code struct.calcsize(format)}.
     *
     * @param format the format
     * @return the parsed format
     * @throws NullPointerException if {@code format} is null
     * @throws FormatException      exactly when {@code struct.calcsize} raises {@code struct.error}
     */
    public static FormatString parseStruct(String format) {
        Objects.requireNonNull(format, "format");
        return new FormatParser(format, 0).parseStruct();
    }

    /** Syntax only: a single custom spelling list, not resolved (for the registry). */
    static FormatString parseSpellings(String format) {
        return new FormatParser(format, 0).parseSpellingsOnly();
    }

    /**
     * The format of a dtype.
     *
     * @param dtype the dtype
     * @return {@code parse(dtype.format())}
     * @throws NullPointerException if {@code dtype} is null
     * @throws FormatException      if the dtype's format is malformed or names an unregistered
     *                              custom dtype
     */
    public static FormatString of(DType dtype) {
        return parse(Objects.requireNonNull(dtype, "dtype").format());
    }

    /**
     * The text this was parsed from.
     *
     * @return the original string
     */
    public String text() {
        return text;
    }

    /**
     * The size of one element: {@code struct.calcsize} for {@code struct} formats.
     *
     * @return bytes
     */
    public long itemSize() {
        return itemSize;
    }

    /**
     * The alignment of the most aligned top-level field, 1 when nothing is aligned.
     *
     * @return a power of two
     */
    public int alignment() {
        return alignment;
    }

    /**
     * The top-level fields in order, padding included.
     *
     * @return the fields
     */
    List<Field> fields() {
        return fields;
    }

    /**
     * The datamem dtype this format stands for, when it is a single element of one: {@code "d"}
     * is {@link DType#FLOAT64}, {@code "<i"} {@link DType#INT32}, {@code "Zf"}
     * {@link DType#COMPLEX64}, {@code "[ml_dtypes$bfloat16]"} {@link DType#BFLOAT16}. Byte orders
     * other than the platform's have no dtype (datamem's dtypes are native-order).
     *
     * @return the dtype, or empty for structs, arrays, strings, padding, pointers, long doubles
     *         and non-native byte orders
     */
    public Optional<DType> dtype() {
        if (fields.size() != 1) {
            return Optional.empty();
        }
        Field f = fields.getFirst();
        if (f.name() != null || !f.shape().isEmpty() || f.offset() != 0) {
            return Optional.empty();
        }
        return switch (f.type()) {
            case Scalar s -> scalarDType(s);
            case Custom c -> c.dtype() != null && (c.itemSize() == 1 || c.mode().byteOrder() == ByteOrder.nativeOrder())
                    ? Optional.of(c.dtype()) : Optional.empty();
            case Struct ignored -> Optional.empty();
        };
    }

    private static Optional<DType> scalarDType(Scalar s) {
        if (s.itemSize() > 1 && s.mode().byteOrder() != ByteOrder.nativeOrder()) {
            return Optional.empty();
        }
        boolean nat = s.mode().nativeSizes();
        DType d = switch (s.code()) {
            case "?" -> DType.BOOL;
            case "b" -> DType.INT8;
            case "B" -> DType.UINT8;
            case "h" -> DType.INT16;
            case "H" -> DType.UINT16;
            case "i" -> DType.INT32;
            case "I" -> DType.UINT32;
            case "l" -> s.itemSize() == 8 ? DType.INT64 : DType.INT32;
            case "L" -> s.itemSize() == 8 ? DType.UINT64 : DType.UINT32;
            case "q" -> DType.INT64;
            case "Q" -> DType.UINT64;
            case "n" -> nat && s.itemSize() == 8 ? DType.INT64 : null;
            case "N" -> nat && s.itemSize() == 8 ? DType.UINT64 : null;
            case "e" -> DType.FLOAT16;
            case "f" -> DType.FLOAT32;
            case "d" -> DType.FLOAT64;
            case "Zf" -> DType.COMPLEX64;
            case "Zd" -> DType.COMPLEX128;
            default -> null;
        };
        return Optional.ofNullable(d);
    }

    /**
     * The canonical form: prefixes only where the mode changes, counts and shapes, {@code T{}},
     * names and custom spellings, without whitespace. Parsing it gives an equal object (though
     * its {@link #text()} differs).
     *
     * @return the canonical format string
     */
    @Override
    public String toString() {
        StringBuilder b = new StringBuilder();
        Mode[] current = {Mode.NATIVE};
        write(b, fields, current);
        return b.toString();
    }

    private static void write(StringBuilder b, List<Field> fields, Mode[] current) {
        for (Field f : fields) {
            Type t = f.type();
            Mode m = switch (t) {
                case Scalar s -> s.mode();
                case Custom c -> c.mode();
                case Struct ignored -> null;
            };
            if (m != null && m != current[0]) {
                b.append(m.prefix());
                current[0] = m;
            }
            List<Long> shape = f.shape();
            boolean stringType = t instanceof Scalar s && isStringCode(s.code());
            if (!shape.isEmpty()) {
                if (shape.size() == 1 && shape.getFirst() != 1 && !stringType) {
                    b.append(shape.getFirst());
                } else {
                    b.append('(');
                    for (int i = 0; i < shape.size(); i++) {
                        b.append(i == 0 ? "" : ",").append(shape.get(i));
                    }
                    b.append(')');
                }
            }
            switch (t) {
                case Scalar s -> {
                    if (stringType) {
                        b.append(s.itemSize() / unitSize(s.code()));
                    }
                    b.append(s.code());
                }
                case Struct st -> {
                    b.append("T{");
                    write(b, st.fields(), current);
                    b.append('}');
                }
                case Custom c -> {
                    b.append('[');
                    for (int i = 0; i < c.spellings().size(); i++) {
                        b.append(i == 0 ? "" : ";").append(c.spellings().get(i));
                    }
                    b.append(']');
                }
            }
            if (f.name() != null) {
                b.append(':').append(f.name()).append(':');
            }
        }
    }

    static boolean isStringCode(String code) {
        return code.equals("s") || code.equals("p") || code.equals("w") || code.equals("u");
    }

    static int unitSize(String code) {
        return switch (code) {
            case "w" -> 4;
            case "u" -> 2;
            default -> 1;
        };
    }

    /**
     * Equal formats describe the same layout: the same items (types, modes, names, shapes and
     * offsets, nested structs and custom spellings included), item size and alignment; the original
     * text is ignored, so a format equals its canonical {@link #toString()} parsed again.
     *
     * @param o another object
     * @return whether it is an equal format
     */
    @Override
    public boolean equals(Object o) {
        return o instanceof FormatString f && itemSize == f.itemSize && alignment == f.alignment
                && fields.equals(f.fields);
    }

    /**
     * A hash consistent with {@link #equals(Object)}.
     *
     * @return the hash of the layout
     */
    @Override
    public int hashCode() {
        return Objects.hash(fields, itemSize, alignment);
    }
}
