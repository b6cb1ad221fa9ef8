package io.datamem.impl.snapshot;

import java.io.IOException;
import java.math.BigDecimal;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The JSON the snapshot schema needs, without a library: a streaming writer that lays out
 * containers on one line or one element per line, and a parser into a tree of {@code Map}
 * (objects, in document order), {@code List}, {@code String}, {@code Long} (integers that fit),
 * {@code BigDecimal} (other numbers), {@code Boolean} and {@code null}.
 */
final class Json {

    private Json() {
    }

    // ---------------------------------------------------------------------------------------------
    // Writing

    /** Writes one document. Not thread-safe. */
    static final class Out {
        private final Appendable out;
        private final Deque<boolean[]> open = new ArrayDeque<>();   // per container: {multiline, first}
        private boolean afterName;

        Out(Appendable out) {
            this.out = out;
        }

        Out beginObject(boolean multiline) throws IOException {
            return begin('{', multiline);
        }

        Out beginArray(boolean multiline) throws IOException {
            return begin('[', multiline);
        }

        private Out begin(char c, boolean multiline) throws IOException {
            separate();
            out.append(c);
            open.push(new boolean[] {multiline, true});
            return this;
        }

        Out end(char c) throws IOException {
            boolean[] top = open.pop();
            if (top[0] && !top[1]) {
                newline(open.size());
            }
            out.append(c);
            if (open.isEmpty()) {
                out.append('\n');
            }
            return this;
        }

        Out name(String name) throws IOException {
            separate();
            string(name);
            out.append(": ");
            afterName = true;
            return this;
        }

        Out value(long v) throws IOException {
            separate();
            out.append(Long.toString(v));
            return this;
        }

        Out value(String v) throws IOException {
            separate();
            string(v);
            return this;
        }

        Out field(String name, long v) throws IOException {
            return name(name).value(v);
        }

        Out field(String name, String v) throws IOException {
            return name(name).value(v);
        }

        /** An address or a bit mask: a string in hexadecimal, {@code "0x..."}. */
        Out hexField(String name, long v) throws IOException {
            return name(name).value("0x" + Long.toHexString(v));
        }

        private void separate() throws IOException {
            if (afterName) {
                afterName = false;
                return;
            }
            boolean[] top = open.peek();
            if (top == null) {
                return;
            }
            if (!top[1]) {
                out.append(',');
                if (!top[0]) {
                    out.append(' ');
                }
            }
            top[1] = false;
            if (top[0]) {
                newline(open.size());
            }
        }

        private void newline(int depth) throws IOException {
            out.append('\n');
            for (int i = 0; i < depth; i++) {
                out.append("  ");
            }
        }

        private void string(String s) throws IOException {
            out.append('"');
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                switch (c) {
                    case '"' -> out.append("\\\"");
                    case '\\' -> out.append("\\\\");
                    case '\n' -> out.append("\\n");
                    case '\r' -> out.append("\\r");
                    case '\t' -> out.append("\\t");
                    case '\b' -> out.append("\\b");
                    case '\f' -> out.append("\\f");
                    default -> {
                        if (c < 0x20 || c == 0x2028 || c == 0x2029) {
                            out.append(String.format("\\u%04x", (int) c));
                        } else {
                            out.append(c);
                        }
                    }
                }
            }
            out.append('"');
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Reading

    /**
     * Parses one JSON value, the whole text.
     *
     * @throws IllegalArgumentException if the text is not one JSON value; the message gives the
     *                                  offset
     */
    static Object parse(CharSequence text) {
        Parser p = new Parser(text);
        p.space();
        Object v = p.value(0);
        p.space();
        if (p.pos != text.length()) {
            throw p.error("text after the JSON value");
        }
        return v;
    }

    private static final class Parser {
        private static final int MAX_DEPTH = 64;
        private final CharSequence s;
        private int pos;

        Parser(CharSequence s) {
            this.s = s;
        }

        Object value(int depth) {
            if (depth > MAX_DEPTH) {
                throw error("nested deeper than " + MAX_DEPTH);
            }
            if (pos >= s.length()) {
                throw error("the text ends where a value was expected");
            }
            char c = s.charAt(pos);
            return switch (c) {
                case '{' -> object(depth);
                case '[' -> array(depth);
                case '"' -> string();
                case 't' -> literal("true", Boolean.TRUE);
                case 'f' -> literal("false", Boolean.FALSE);
                case 'n' -> literal("null", null);
                default -> {
                    if (c == '-' || (c >= '0' && c <= '9')) {
                        yield number();
                    }
                    throw error("unexpected '" + c + "'");
                }
            };
        }

        private Map<String, Object> object(int depth) {
            pos++;
            Map<String, Object> map = new LinkedHashMap<>();
            space();
            if (peek() == '}') {
                pos++;
                return map;
            }
            while (true) {
                space();
                if (peek() != '"') {
                    throw error("expected a field name in quotes");
                }
                String name = string();
                space();
                expect(':');
                space();
                if (map.containsKey(name)) {
                    throw error("field '" + name + "' given twice");
                }
                map.put(name, value(depth + 1));
                space();
                char c = next();
                if (c == '}') {
                    return map;
                }
                if (c != ',') {
                    pos--;
                    throw error("expected ',' or '}'");
                }
            }
        }

        private List<Object> array(int depth) {
            pos++;
            List<Object> list = new ArrayList<>();
            space();
            if (peek() == ']') {
                pos++;
                return list;
            }
            while (true) {
                space();
                list.add(value(depth + 1));
                space();
                char c = next();
                if (c == ']') {
                    return list;
                }
                if (c != ',') {
                    pos--;
                    throw error("expected ',' or ']'");
                }
            }
        }

        private String string() {
            pos++;   // the opening quote
            StringBuilder b = new StringBuilder();
            while (true) {
                if (pos >= s.length()) {
                    throw error("a string is not closed");
                }
                char c = s.charAt(pos++);
                if (c == '"') {
                    return b.toString();
                }
                if (c < 0x20) {
                    pos--;
                    throw error("a control character in a string");
                }
                if (c != '\\') {
                    b.append(c);
                    continue;
                }
                char e = next();
                switch (e) {
                    case '"', '\\', '/' -> b.append(e);
                    case 'b' -> b.append('\b');
                    case 'f' -> b.append('\f');
                    case 'n' -> b.append('\n');
                    case 'r' -> b.append('\r');
                    case 't' -> b.append('\t');
                    case 'u' -> {
                        if (pos + 4 > s.length()) {
                            throw error("a \\u escape is cut short");
                        }
                        try {
                            b.append((char) Integer.parseInt(s.subSequence(pos, pos + 4).toString(), 16));
                        } catch (NumberFormatException x) {
                            throw error("a \\u escape is not hexadecimal");
                        }
                        pos += 4;
                    }
                    default -> {
                        pos--;
                        throw error("unknown escape '\\" + e + "'");
                    }
                }
            }
        }

        private Object number() {
            int start = pos;
            if (peek() == '-') {
                pos++;
            }
            digits();
            boolean integral = true;
            if (peek() == '.') {
                integral = false;
                pos++;
                digits();
            }
            if (peek() == 'e' || peek() == 'E') {
                integral = false;
                pos++;
                if (peek() == '+' || peek() == '-') {
                    pos++;
                }
                digits();
            }
            String text = s.subSequence(start, pos).toString();
            if (integral) {
                try {
                    return Long.parseLong(text);
                } catch (NumberFormatException tooLarge) {
                    // below: a number that does not fit a long
                }
            }
            return new BigDecimal(text);
        }

        private void digits() {
            int start = pos;
            while (pos < s.length() && s.charAt(pos) >= '0' && s.charAt(pos) <= '9') {
                pos++;
            }
            if (pos == start) {
                throw error("expected a digit");
            }
        }

        private Object literal(String word, Object v) {
            if (pos + word.length() > s.length() || !s.subSequence(pos, pos + word.length()).toString().equals(word)) {
                throw error("unexpected '" + s.charAt(pos) + "'");
            }
            pos += word.length();
            return v;
        }

        void space() {
            while (pos < s.length()) {
                char c = s.charAt(pos);
                if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
                    return;
                }
                pos++;
            }
        }

        private char peek() {
            return pos < s.length() ? s.charAt(pos) : '\0';
        }

        private char next() {
            if (pos >= s.length()) {
                throw error("the text ends too early");
            }
            return s.charAt(pos++);
        }

        private void expect(char c) {
            if (peek() != c) {
                throw error("expected '" + c + "'");
            }
            pos++;
        }

        IllegalArgumentException error(String what) {
            int line = 1;
            int column = 1;
            for (int i = 0; i < Math.min(pos, s.length()); i++) {
                if (s.charAt(i) == '\n') {
                    line++;
                    column = 1;
                } else {
                    column++;
                }
            }
            return new IllegalArgumentException("not JSON: " + what + " at line " + line + ", column " + column);
        }
    }
}
