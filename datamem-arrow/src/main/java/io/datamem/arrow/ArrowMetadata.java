package io.datamem.arrow;

import io.datamem.buffer.BufferException;

import java.io.ByteArrayOutputStream;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;

/**
 * The C Data Interface's {@code metadata} encoding (an int32 count, then for each pair an int32
 * length and the key's bytes, an int32 length and the value's bytes, all in native byte order),
 * C strings, and the little JSON {@code arrow.fixed_shape_tensor} puts in its metadata.
 */
final class ArrowMetadata {

    /** At most this many pairs, and this many bytes in a key or value, are read from a producer. */
    static final int MAX_PAIRS = 1024;
    static final int MAX_BYTES = 1 << 20;
    /** Format strings and names are read up to this many bytes. */
    static final int MAX_STRING = 4096;

    private ArrowMetadata() {
    }

    static byte[] encode(Map<String, String> pairs) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteBuffer b = ByteBuffer.allocate(4).order(ByteOrder.nativeOrder());
        out.writeBytes(b.putInt(0, pairs.size()).array());
        for (Map.Entry<String, String> e : pairs.entrySet()) {
            for (String s : List.of(e.getKey(), e.getValue())) {
                byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
                out.writeBytes(b.putInt(0, bytes.length).array());
                out.writeBytes(bytes);
            }
        }
        return out.toByteArray();
    }

    /** Reads a producer's metadata; NULL is no metadata. */
    static Map<String, String> decode(long address) {
        Map<String, String> pairs = new LinkedHashMap<>();
        if (address == 0) {
            return pairs;
        }
        MemorySegment m = MemorySegment.ofAddress(address).reinterpret(Long.MAX_VALUE - address);
        int n = m.get(JAVA_INT_UNALIGNED, 0);
        if (n < 0 || n > MAX_PAIRS) {
            throw new BufferException("Arrow metadata with " + n + " pairs (expected: 0.." + MAX_PAIRS + ")");
        }
        long at = 4;
        for (int i = 0; i < n; i++) {
            String[] kv = new String[2];
            for (int j = 0; j < 2; j++) {
                int len = m.get(JAVA_INT_UNALIGNED, at);
                if (len < 0 || len > MAX_BYTES) {
                    throw new BufferException("Arrow metadata pair " + i + ": a " + (j == 0 ? "key" : "value")
                            + " of " + len + " bytes (expected: 0.." + MAX_BYTES + ")");
                }
                byte[] bytes = m.asSlice(at + 4, len).toArray(JAVA_BYTE);
                kv[j] = new String(bytes, StandardCharsets.UTF_8);
                at += 4 + len;
            }
            pairs.put(kv[0], kv[1]);
        }
        return pairs;
    }

    /** A NUL-terminated string of at most {@link #MAX_STRING} bytes; null for NULL. */
    static String cString(long address, String what) {
        if (address == 0) {
            return null;
        }
        MemorySegment m = MemorySegment.ofAddress(address).reinterpret(MAX_STRING);
        for (int i = 0; i < MAX_STRING; i++) {
            if (m.get(JAVA_BYTE, i) == 0) {
                return new String(m.asSlice(0, i).toArray(JAVA_BYTE), StandardCharsets.UTF_8);
            }
        }
        throw new BufferException(what + " has no NUL within " + MAX_STRING + " bytes");
    }

    // ---------------------------------------------------------------------------------------------
    // JSON: objects, arrays, strings, numbers, true, false, null

    static String tensorJson(long[] shape) {
        StringBuilder s = new StringBuilder("{\"shape\":[");
        for (int i = 0; i < shape.length; i++) {
            s.append(i == 0 ? "" : ",").append(shape[i]);
        }
        return s.append("]}").toString();
    }

    /** Parses a JSON document; objects become maps, arrays lists, numbers longs or doubles. */
    static Object parseJson(String text) {
        Json p = new Json(text);
        p.space();
        Object v = p.value(0);
        p.space();
        if (p.at != text.length()) {
            throw p.error("text after the value");
        }
        return v;
    }

    /** The integers of a JSON array, or null when absent. */
    static long[] longs(Object value, String what) {
        if (value == null) {
            return null;
        }
        if (!(value instanceof List<?> list)) {
            throw new BufferException(what + ": " + value + " (expected: an array of integers)");
        }
        long[] out = new long[list.size()];
        for (int i = 0; i < out.length; i++) {
            if (!(list.get(i) instanceof Long l)) {
                throw new BufferException(what + ": element " + i + " is " + list.get(i) + " (expected: an integer)");
            }
            out[i] = l;
        }
        return out;
    }

    private static final class Json {
        private final String s;
        private int at;

        Json(String s) {
            this.s = s;
        }

        BufferException error(String why) {
            return new BufferException("arrow.fixed_shape_tensor metadata is not JSON (" + why + " at " + at + "): "
                    + (s.length() > 200 ? s.substring(0, 200) + "..." : s));
        }

        void space() {
            while (at < s.length() && Character.isWhitespace(s.charAt(at))) {
                at++;
            }
        }

        Object value(int depth) {
            if (depth > 32) {
                throw error("nesting deeper than 32");
            }
            space();
            if (at >= s.length()) {
                throw error("end of text");
            }
            char c = s.charAt(at);
            switch (c) {
                case '{' -> {
                    at++;
                    Map<String, Object> map = new LinkedHashMap<>();
                    space();
                    if (peek('}')) {
                        return map;
                    }
                    do {
                        space();
                        String key = string();
                        space();
                        expect(':');
                        map.put(key, value(depth + 1));
                        space();
                    } while (peek(','));
                    expect('}');
                    return map;
                }
                case '[' -> {
                    at++;
                    List<Object> list = new ArrayList<>();
                    space();
                    if (peek(']')) {
                        return list;
                    }
                    do {
                        list.add(value(depth + 1));
                        space();
                    } while (peek(','));
                    expect(']');
                    return list;
                }
                case '"' -> {
                    return string();
                }
                default -> {
                    if (s.startsWith("true", at)) {
                        at += 4;
                        return Boolean.TRUE;
                    }
                    if (s.startsWith("false", at)) {
                        at += 5;
                        return Boolean.FALSE;
                    }
                    if (s.startsWith("null", at)) {
                        at += 4;
                        return null;
                    }
                    return number();
                }
            }
        }

        private boolean peek(char c) {
            if (at < s.length() && s.charAt(at) == c) {
                at++;
                return true;
            }
            return false;
        }

        private void expect(char c) {
            if (!peek(c)) {
                throw error("expected '" + c + "'");
            }
        }

        private String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            while (at < s.length()) {
                char c = s.charAt(at++);
                if (c == '"') {
                    return b.toString();
                }
                if (c == '\\') {
                    if (at >= s.length()) {
                        break;
                    }
                    char e = s.charAt(at++);
                    switch (e) {
                        case 'n' -> b.append('\n');
                        case 't' -> b.append('\t');
                        case 'r' -> b.append('\r');
                        case 'b' -> b.append('\b');
                        case 'f' -> b.append('\f');
                        case 'u' -> {
                            if (at + 4 > s.length()) {
                                throw error("short \\u escape");
                            }
                            try {
                                b.append((char) Integer.parseInt(s.substring(at, at + 4), 16));
                            } catch (NumberFormatException x) {
                                throw error("bad \\u escape");
                            }
                            at += 4;
                        }
                        default -> b.append(e);
                    }
                } else {
                    b.append(c);
                }
            }
            throw error("unterminated string");
        }

        private Object number() {
            int start = at;
            while (at < s.length() && "+-0123456789.eE".indexOf(s.charAt(at)) >= 0) {
                at++;
            }
            String t = s.substring(start, at);
            if (t.isEmpty()) {
                throw error("unexpected '" + s.charAt(start) + "'");
            }
            try {
                return t.matches("-?\\d+") ? (Object) Long.parseLong(t) : (Object) Double.parseDouble(t);
            } catch (NumberFormatException e) {
                throw error("bad number " + t);
            }
        }
    }
}
