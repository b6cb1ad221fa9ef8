package io.datamem.format;

import io.datamem.array.DType;
import io.datamem.format.FormatString.Custom;
import io.datamem.format.FormatString.Field;
import io.datamem.format.FormatString.Mode;
import io.datamem.format.FormatString.Scalar;
import io.datamem.format.FormatString.Spelling;
import io.datamem.format.FormatString.Struct;
import io.datamem.format.FormatString.Type;

import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The format string parser: one forward pass over {@code [start, end)} of a string, recursing only
 * into {@code T{...}} and {@code buffer$} payloads, at most {@link FormatString#MAX_DEPTH} deep.
 * Every failure is a {@link FormatException} with the position in the whole string.
 */
final class FormatParser {

    private static final Map<String, MemoryLayout> C = Linker.nativeLinker().canonicalLayouts();
    private static final long SHORT = size("short", 2);
    private static final long INT = size("int", 4);
    private static final long LONG = size("long", 8);
    private static final long LONG_LONG = size("long long", 8);
    private static final long SIZE_T = size("size_t", 8);
    private static final long POINTER = size("void*", 8);
    private static final long FLOAT = size("float", 4);
    private static final long DOUBLE = size("double", 8);
    private static final long LONG_DOUBLE = System.getProperty("os.name", "").startsWith("Windows") ? 8 : 16;

    private final String whole;
    private final int start;
    private final int end;
    private final int depth;
    private int pos;
    private Mode mode;

    FormatParser(String whole, int depth) {
        this(whole, 0, whole.length(), depth, Mode.NATIVE);
    }

    private FormatParser(String whole, int start, int end, int depth, Mode initial) {
        this.whole = whole;
        this.start = start;
        this.end = end;
        this.depth = depth;
        this.pos = start;
        this.mode = initial;
    }

    private static long size(String cName, long fallback) {
        MemoryLayout l = C.get(cName);
        return l == null ? fallback : l.byteSize();
    }

    private FormatException error(int at, String reason) {
        return new FormatException(whole, at, reason);
    }

    private char ch(int i) {
        return whole.charAt(i);
    }

    // ---------------------------------------------------------------------------------------------
    // struct module grammar

    FormatString parseStruct() {
        if (pos < end && "@=<>!".indexOf(ch(pos)) >= 0) {
            mode = Mode.of(ch(pos));
            pos++;
        }
        List<Field> fields = new ArrayList<>();
        long size = 0;
        int maxAlign = 1;
        while (pos < end) {
            char c = ch(pos);
            if (isPySpace(c)) {
                pos++;
                continue;
            }
            long num = 1;
            int itemStart = pos;
            if (isDigit(c)) {
                num = digits("total struct size too long (the repeat count overflows)");
                if (pos == end) {
                    throw error(pos, "repeat count given without format specifier");
                }
                c = ch(pos);
            }
            if (c == '\0') {
                throw error(pos, "embedded null character");
            }
            long[] e = structEntry(c, mode);
            if (e == null) {
                throw error(pos, "bad char in struct format: " + describeChar(c) + structHint(c));
            }
            pos++;
            long itemSize = e[0];
            int align = mode.aligned() ? (int) e[1] : 1;
            if (align > 1 && size > 0) {
                long extra = (align - 1) - (size - 1) % align;
                if (extra > Long.MAX_VALUE - size) {
                    throw error(itemStart, "total struct size too long");
                }
                size += extra;
            }
            if (num > (Long.MAX_VALUE - size) / itemSize) {
                throw error(itemStart, "total struct size too long");
            }
            boolean string = c == 's' || c == 'p';
            Scalar type = new Scalar(String.valueOf(c), mode, string ? num : itemSize, align);
            fields.add(new Field(null, size, string || num == 1 ? List.of() : List.of(num), type));
            size += num * itemSize;
            maxAlign = Math.max(maxAlign, align);
        }
        return new FormatString(whole.substring(start, end), fields, size, maxAlign);
    }

    private static String structHint(char c) {
        if (Mode.of(c) != null) {
            return " (the struct module takes a byte-order prefix only as the first character)";
        }
        if (c == 'n' || c == 'N' || c == 'P') {
            return " ('" + c + "' has no standard size: it needs native mode '@')";
        }
        return "";
    }

    /** {size, native alignment}, or null if the struct module has no such character in the mode. */
    private static long[] structEntry(char c, Mode m) {
        if (m.nativeSizes()) {
            return switch (c) {
                case 'x', 'c', 'b', 'B', '?', 's', 'p' -> new long[] {1, 1};
                case 'h', 'H', 'e' -> new long[] {SHORT, SHORT};
                case 'i', 'I' -> new long[] {INT, INT};
                case 'l', 'L' -> new long[] {LONG, LONG};
                case 'q', 'Q' -> new long[] {LONG_LONG, LONG_LONG};
                case 'n', 'N' -> new long[] {SIZE_T, SIZE_T};
                case 'f' -> new long[] {FLOAT, FLOAT};
                case 'd' -> new long[] {DOUBLE, DOUBLE};
                case 'P' -> new long[] {POINTER, POINTER};
                default -> null;
            };
        }
        return switch (c) {
            case 'x', 'c', 'b', 'B', '?', 's', 'p' -> new long[] {1, 1};
            case 'h', 'H', 'e' -> new long[] {2, 2};
            case 'i', 'I', 'l', 'L', 'f' -> new long[] {4, 4};
            case 'q', 'Q', 'd' -> new long[] {8, 8};
            default -> null;
        };
    }

    // ---------------------------------------------------------------------------------------------
    // Buffer protocol grammar

    FormatString parseBuffer() {
        if (!hasItem()) {
            throw error(end, "empty format (expected: at least one item)");
        }
        Body body = parseBody(false, -1);
        return new FormatString(whole.substring(start, end), body.fields, body.size, body.align);
    }

    /** Whether anything but whitespace and mode prefixes follows. */
    private boolean hasItem() {
        for (int i = pos; i < end; i++) {
            char c = ch(i);
            if (!isPySpace(c) && Mode.of(c) == null) {
                return true;
            }
        }
        return false;
    }

    private record Body(List<Field> fields, long size, int align) {
    }

    /** Items up to the end, or up to the '}' closing a struct opened at {@code openedAt}. */
    private Body parseBody(boolean inStruct, int openedAt) {
        List<Field> fields = new ArrayList<>();
        Set<String> names = new HashSet<>();
        long offset = 0;
        int maxAlign = 1;
        while (true) {
            while (pos < end && isPySpace(ch(pos))) {
                pos++;
            }
            if (pos >= end) {
                if (inStruct) {
                    throw error(openedAt, "unterminated struct 'T{' (expected: '}')");
                }
                break;
            }
            char c = ch(pos);
            if (c == '}') {
                if (!inStruct) {
                    throw error(pos, "'}' without a matching 'T{'");
                }
                pos++;
                break;
            }
            Mode m = Mode.of(c);
            if (m != null) {
                mode = m;
                pos++;
                continue;
            }
            int itemStart = pos;
            List<Long> shape = new ArrayList<>();
            if (c == '(') {
                parseShape(shape);
                while (pos < end && Mode.of(ch(pos)) != null) {
                    mode = Mode.of(ch(pos));
                    pos++;
                }
            }
            long count = 1;
            boolean hasCount = false;
            if (pos < end && isDigit(ch(pos))) {
                count = digits("repeat count overflows a long");
                hasCount = true;
            }
            if (pos >= end) {
                throw error(pos, hasCount ? "repeat count given without a type" : "shape given without a type");
            }
            Type type = parseType(count, hasCount, itemStart);
            boolean string = type instanceof Scalar s && FormatString.isStringCode(s.code());
            if (!string && count != 1) {
                shape.add(count);
            }
            String name = null;
            if (pos < end && ch(pos) == ':') {
                name = parseName();
                if (name != null && !names.add(name)) {
                    throw error(itemStart, "duplicate field name '" + name + "'");
                }
            }
            long n = product(shape, itemStart);
            long align = type.alignment();
            long placed = alignUp(offset, align, itemStart);
            long bytes = multiply(n, type.itemSize(), itemStart);
            offset = add(placed, bytes, itemStart);
            maxAlign = (int) Math.max(maxAlign, align);
            fields.add(new Field(name, placed, shape, type));
        }
        return new Body(fields, offset, maxAlign);
    }

    private Type parseType(long count, boolean hasCount, int itemStart) {
        char c = ch(pos);
        int at = pos;
        switch (c) {
            case 'T' -> {
                if (pos + 1 >= end || ch(pos + 1) != '{') {
                    throw error(pos, "'T' must be followed by '{' to open a struct");
                }
                if (depth + 1 > FormatString.MAX_DEPTH) {
                    throw error(pos, "structs nested deeper than " + FormatString.MAX_DEPTH + " levels");
                }
                pos += 2;
                FormatParser inner = new FormatParser(whole, pos, end, depth + 1, mode);
                Body body = inner.parseBody(true, at);
                pos = inner.pos;
                mode = inner.mode;
                long size = alignUp(body.size, body.align, at);
                return new Struct(body.fields, size, body.align);
            }
            case '[' -> {
                return parseCustom();
            }
            case 'Z' -> {
                if (pos + 1 >= end) {
                    throw error(pos, "'Z' (complex) must be followed by e, f, d or g");
                }
                char k = ch(pos + 1);
                if ("efdg".indexOf(k) < 0) {
                    throw error(pos + 1, "'Z' (complex) must be followed by e, f, d or g, not " + describeChar(k));
                }
                long[] e = extendedEntry(k, at);
                pos += 2;
                return new Scalar("Z" + k, mode, 2 * e[0], mode.aligned() ? (int) e[1] : 1);
            }
            case 'O' -> throw error(pos, "'O' (Python object pointers) is not supported: the objects exist only"
                    + " inside a Python interpreter");
            case '&' -> throw error(pos, "'&' (pointer to an item) is not supported");
            case 't' -> throw error(pos, "'t' (bit fields) is not supported");
            case 'X' -> throw error(pos, "'X{}' (function pointers) is not supported");
            default -> {
                long[] e = extendedEntry(c, at);
                if (e == null) {
                    throw error(pos, "unknown type character " + describeChar(c));
                }
                pos++;
                int align = mode.aligned() ? (int) e[1] : 1;
                if (FormatString.isStringCode(String.valueOf(c))) {
                    return new Scalar(String.valueOf(c), mode, multiply(count, e[0], itemStart), align);
                }
                return new Scalar(String.valueOf(c), mode, e[0], align);
            }
        }
    }

    /** The struct characters plus g, w, u, in the current mode; rejects ones without a standard size. */
    private long[] extendedEntry(char c, int at) {
        long[] e = structEntry(c, mode);
        if (e != null) {
            return e;
        }
        if (mode.nativeSizes()) {
            return switch (c) {
                case 'g' -> new long[] {LONG_DOUBLE, LONG_DOUBLE};
                case 'w' -> new long[] {4, 4};
                case 'u' -> new long[] {2, 2};
                default -> null;
            };
        }
        return switch (c) {
            case 'w' -> new long[] {4, 4};
            case 'u' -> new long[] {2, 2};
            case 'n', 'N', 'P', 'g' -> throw error(at, "'" + c + "' has no standard size: it needs native mode '@'"
                    + " or '^', but mode '" + mode.prefix() + "' is in effect");
            default -> null;
        };
    }

    private void parseShape(List<Long> shape) {
        int open = pos;
        pos++;
        while (true) {
            while (pos < end && ch(pos) == ' ') {
                pos++;
            }
            if (pos >= end) {
                throw error(open, "unterminated shape '(' (expected: ')')");
            }
            if (!isDigit(ch(pos))) {
                throw error(pos, "expected a dimension (a non-negative integer) in the shape, found "
                        + describeChar(ch(pos)));
            }
            if (shape.size() == FormatString.MAX_SHAPE_DIMS) {
                throw error(pos, "shape with more than " + FormatString.MAX_SHAPE_DIMS + " dimensions");
            }
            shape.add(digits("shape dimension overflows a long"));
            while (pos < end && ch(pos) == ' ') {
                pos++;
            }
            if (pos >= end) {
                throw error(open, "unterminated shape '(' (expected: ')')");
            }
            char c = ch(pos);
            pos++;
            if (c == ')') {
                return;
            }
            if (c != ',') {
                throw error(pos - 1, "expected ',' or ')' in the shape, found " + describeChar(c));
            }
        }
    }

    /** At ':': the name up to the next ':'; null for an empty name. */
    private String parseName() {
        int open = pos;
        pos++;
        int close = pos;
        while (close < end && ch(close) != ':') {
            char c = ch(close);
            if (c < 0x20 || c > 0x7E) {
                throw error(close, "field name contains " + describeChar(c) + " (expected: printable ASCII)");
            }
            close++;
        }
        if (close >= end) {
            throw error(open, "unterminated field name ':' (expected: a closing ':')");
        }
        String name = whole.substring(pos, close);
        pos = close + 1;
        return name.isEmpty() ? null : name;
    }

    // ---------------------------------------------------------------------------------------------
    // Custom dtypes

    private record Spellings(List<Spelling> list, List<Integer> payloadStarts, int close) {
    }

    /** At '[': the spellings, syntax only; pos is left after ']'. */
    private Spellings readSpellings() {
        int open = pos;
        List<Spelling> list = new ArrayList<>();
        List<Integer> payloadStarts = new ArrayList<>();
        int i = pos + 1;
        int altStart = i;
        int dollar = -1;
        while (true) {
            if (i >= end) {
                throw error(open, "unterminated custom dtype '[' (expected: ']')");
            }
            char c = ch(i);
            if (c == ']' || c == ';') {
                if (dollar < 0) {
                    throw error(altStart, "custom dtype spelling '" + whole.substring(altStart, i)
                            + "' has no '$' after its identifier");
                }
                list.add(new Spelling(whole.substring(altStart, dollar), whole.substring(dollar + 1, i)));
                payloadStarts.add(dollar + 1);
                if (c == ']') {
                    pos = i + 1;
                    return new Spellings(list, payloadStarts, i);
                }
                altStart = i + 1;
                dollar = -1;
            } else if (c == '$') {
                if (dollar >= 0) {
                    throw error(i, "'$' in a custom dtype payload (expected: printable ASCII without ']', ';'"
                            + " and '$')");
                }
                if (i == altStart) {
                    throw error(i, "custom dtype spelling with an empty identifier before '$'");
                }
                dollar = i;
            } else if (c < 0x20 || c > 0x7E) {
                throw error(i, "custom dtype contains " + describeChar(c) + " (expected: printable ASCII)");
            }
            i++;
        }
    }

    FormatString parseSpellingsOnly() {
        if (pos >= end || ch(pos) != '[') {
            throw error(pos, "expected '[' opening a custom dtype");
        }
        Spellings sp = readSpellings();
        if (pos != end) {
            throw error(pos, "unexpected text after the custom dtype");
        }
        Custom c = new Custom(sp.list, 0, Mode.NATIVE, null, null, 1, 1);
        return new FormatString(whole.substring(start, end), List.of(new Field(null, 0, List.of(), c)), 1, 1);
    }

    private Type parseCustom() {
        int open = pos;
        Spellings sp = readSpellings();
        List<String> notUnderstood = new ArrayList<>();
        for (int k = 0; k < sp.list.size(); k++) {
            Spelling s = sp.list.get(k);
            int payloadStart = sp.payloadStarts.get(k);
            int payloadEnd = payloadStart + s.payload().length();
            switch (s.id()) {
                case "struct" -> {
                    FormatString layout = new FormatParser(whole, payloadStart, payloadEnd, depth + 1, Mode.NATIVE)
                            .parseStruct();
                    return new Custom(sp.list, k, mode, null, layout, layout.itemSize(),
                            mode.aligned() ? layout.alignment() : 1);
                }
                case "buffer" -> {
                    if (depth + 1 > FormatString.MAX_DEPTH) {
                        throw error(open, "buffer$ payloads nested deeper than " + FormatString.MAX_DEPTH + " levels");
                    }
                    int bracket = s.payload().indexOf('[');
                    if (bracket >= 0) {
                        throw error(payloadStart + bracket, "a buffer$ payload must not use the custom dtype syntax"
                                + " '['");
                    }
                    FormatParser inner = new FormatParser(whole, payloadStart, payloadEnd, depth + 1, mode);
                    if (!inner.hasItem()) {
                        throw error(payloadStart, "empty buffer$ payload (expected: a buffer format)");
                    }
                    Body body = inner.parseBody(false, -1);
                    long size = alignUp(body.size, body.align, open);
                    FormatString layout = new FormatString(s.payload(), body.fields, size, body.align);
                    return new Custom(sp.list, k, mode, null, layout, size, body.align);
                }
                default -> {
                    Optional<DType> d = CustomDTypes.lookup(s.id(), s.payload());
                    if (d.isPresent()) {
                        DType t = d.get();
                        return new Custom(sp.list, k, mode, t, null, t.itemSize(), mode.aligned() ? t.alignment() : 1);
                    }
                    notUnderstood.add(s.toString());
                }
            }
        }
        throw error(open, "unknown custom dtype: no spelling understood of " + String.join(", ", notUnderstood)
                + " (unknown id" + (notUnderstood.size() > 1 ? "s " : " ") + String.join(", ",
                notUnderstood.stream().map(x -> "'" + x.substring(0, x.indexOf('$')) + "'").toList())
                + "; registered ids: " + CustomDTypes.ids() + ", reserved: struct, buffer)");
    }

    // ---------------------------------------------------------------------------------------------
    // Arithmetic and characters

    /** Reads digits at pos into a long; overflow is an error at the first digit. */
    private long digits(String overflowReason) {
        int first = pos;
        long n = 0;
        while (pos < end && isDigit(ch(pos))) {
            int d = ch(pos) - '0';
            if (n > (Long.MAX_VALUE - d) / 10) {
                throw error(first, overflowReason);
            }
            n = n * 10 + d;
            pos++;
        }
        return n;
    }

    private long product(List<Long> shape, int at) {
        long n = 1;
        for (long d : shape) {
            n = multiply(n, d, at);
        }
        return n;
    }

    private long multiply(long a, long b, int at) {
        long hi = Math.multiplyHigh(a, b);
        long lo = a * b;
        if (hi != 0 || lo < 0) {
            throw error(at, "itemsize overflows a long (more than 2^63-1 bytes)");
        }
        return lo;
    }

    private long add(long a, long b, int at) {
        long r = a + b;
        if (r < 0) {
            throw error(at, "itemsize overflows a long (more than 2^63-1 bytes)");
        }
        return r;
    }

    private long alignUp(long offset, long align, int at) {
        if (align <= 1 || offset % align == 0) {
            return offset;
        }
        return add(offset, align - offset % align, at);
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    /** CPython's Py_ISSPACE on ASCII. */
    private static boolean isPySpace(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == 0x0b || c == 0x0c;
    }

    private static String describeChar(char c) {
        return c >= 0x20 && c < 0x7F ? "'" + c + "'" : String.format("U+%04X", (int) c);
    }
}
