package io.datamem.spi;

import io.datamem.internal.Messages;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * One term of a handler name. A handler name is a leaf term followed by adaptor terms, joined with
 * {@code +}: {@code aligned64}, {@code pool(aligned64)+stats}, {@code numa:bind=0+limit=1048576},
 * {@code cuda:registered(numa:local)}.
 *
 * <p>A term is a family name, optionally followed by {@code :}, {@code =} or {@code (} and the rest.
 * Parentheses nest a whole handler name (the upstream of a pool, say); {@code +} inside them belongs
 * to the nested name.
 *
 * @param text the term as written, without surrounding blanks
 */
public record ProviderTerm(String text) {

    /**
     * Validates the term.
     *
     * @throws NullPointerException     if {@code text} is null
     * @throws IllegalArgumentException if the term is blank, or its parentheses do not balance
     */
    public ProviderTerm {
        Objects.requireNonNull(text, "text");
        text = text.strip();
        if (text.isEmpty()) {
            throw new IllegalArgumentException("handler name term: '' (expected: a provider name such as aligned64)");
        }
        int depth = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '(') {
                depth++;
            } else if (c == ')' && --depth < 0) {
                throw new IllegalArgumentException("handler name term: " + Messages.quote(text)
                        + " has an unmatched ')' at " + i);
            }
        }
        if (depth != 0) {
            throw new IllegalArgumentException("handler name term: " + Messages.quote(text) + " has an unclosed '('");
        }
    }

    /**
     * Splits a handler name into its terms at the {@code +} signs outside parentheses.
     *
     * @param handlerName for example {@code pool(aligned64)+stats}
     * @return the terms, leaf first
     * @throws NullPointerException     if {@code handlerName} is null
     * @throws IllegalArgumentException if a term is empty or parentheses do not balance
     */
    public static List<ProviderTerm> split(String handlerName) {
        Objects.requireNonNull(handlerName, "handlerName");
        List<ProviderTerm> terms = new ArrayList<>();
        int depth = 0;
        int start = 0;
        for (int i = 0; i < handlerName.length(); i++) {
            char c = handlerName.charAt(i);
            if (c == '(') {
                depth++;
            } else if (c == ')') {
                depth--;
            } else if (c == '+' && depth == 0) {
                terms.add(termAt(handlerName, start, i));
                start = i + 1;
            }
        }
        terms.add(termAt(handlerName, start, handlerName.length()));
        return List.copyOf(terms);
    }

    private static ProviderTerm termAt(String name, int start, int end) {
        String t = name.substring(start, end).strip();
        if (t.isEmpty()) {
            throw new IllegalArgumentException("handler name: " + Messages.quote(name) + " has an empty term at " + start
                    + " (expected: LEAF or LEAF+ADAPTOR+...)");
        }
        return new ProviderTerm(t);
    }

    /**
     * The family: the text before the first {@code :}, {@code =} or {@code (}.
     *
     * @return for example {@code numa} for {@code numa:bind=0}
     */
    public String family() {
        int i = separatorIndex();
        return i < 0 ? text : text.substring(0, i);
    }

    /**
     * The text after the family and its separator.
     *
     * @return for example {@code bind=0} for {@code numa:bind=0}, {@code aligned64)} is never
     *         returned for {@code pool(aligned64)}: parenthesised terms return the text after the
     *         closing parenthesis (usually empty); empty if the term is only a family
     */
    public String argument() {
        int i = separatorIndex();
        if (i < 0) {
            return "";
        }
        if (text.charAt(i) == '(') {
            int close = closingParenthesis(i);
            String after = text.substring(close + 1);
            return after.startsWith(":") || after.startsWith("=") ? after.substring(1) : after;
        }
        return text.substring(i + 1);
    }

    /**
     * The handler name inside the first top-level parentheses, if any.
     *
     * @return for example {@code numa:local} for {@code cuda:registered(numa:local)}, or null
     */
    public String nested() {
        int open = text.indexOf('(');
        if (open < 0) {
            return null;
        }
        return text.substring(open + 1, closingParenthesis(open)).strip();
    }

    /**
     * The term with its first parenthesised part removed.
     *
     * @return for example {@code cuda:registered} for {@code cuda:registered(numa:local)}
     */
    public String withoutNested() {
        int open = text.indexOf('(');
        if (open < 0) {
            return text;
        }
        return text.substring(0, open) + text.substring(closingParenthesis(open) + 1);
    }

    /**
     * One option of a term: {@code key} alone (a flag, such as {@code strict}) or
     * {@code key=value} (such as {@code threshold=4m}).
     *
     * @param key   the text before the first {@code =}, stripped; never empty
     * @param value the text after it, stripped; empty for a flag
     */
    public record Option(String key, String value) {

        /**
         * Validates the components.
         *
         * @throws NullPointerException     if a component is null
         * @throws IllegalArgumentException if {@code key} is empty
         */
        public Option {
            Objects.requireNonNull(key, "key");
            Objects.requireNonNull(value, "value");
            if (key.isEmpty()) {
                throw new IllegalArgumentException("option key: '' (expected: a name such as threshold)");
            }
        }

        /**
         * Whether the option was written {@code key=value}.
         *
         * @return false for a flag
         */
        public boolean hasValue() {
            return !value.isEmpty();
        }

        @Override
        public String toString() {
            return value.isEmpty() ? key : key + "=" + value;
        }
    }

    /**
     * The options of a term written {@code family:OPTION,OPTION,...} (or with {@code =} after the
     * family), in order, its nested name left out: {@code hugepages:2m,threshold=4m(aligned64)}
     * has the options {@code 2m} and {@code threshold=4m}. Each is a flag or {@code key=value}
     * (split at its first {@code =}). Providers whose argument is not a list of options (a file
     * name, a selector with colons) read {@link #argument()} instead.
     *
     * @param family the family this term was accepted for (the text it starts with), for messages
     * @return the options, in order; empty if the term is the family alone
     * @throws NullPointerException     if {@code family} is null
     * @throws IllegalArgumentException if the term does not start with {@code family}, something
     *                                  other than {@code :} or {@code =} follows the family, or an
     *                                  option is empty: the message quotes the term and says what
     *                                  was expected
     */
    public List<Option> options(String family) {
        Objects.requireNonNull(family, "family");
        String plain = withoutNested().strip();
        if (!plain.startsWith(family)) {
            throw new IllegalArgumentException("'" + text + "' (expected: a term of family " + family + ")");
        }
        String rest = plain.substring(family.length()).strip();
        List<Option> options = new ArrayList<>();
        if (rest.isEmpty()) {
            return options;
        }
        if (rest.startsWith(":") || rest.startsWith("=")) {
            rest = rest.substring(1);
        } else {
            throw new IllegalArgumentException("'" + text + "' (expected: " + family + " or " + family + ":OPTIONS)");
        }
        for (String item : rest.split(",", -1)) {
            String t = item.strip();
            if (t.isEmpty()) {
                throw new IllegalArgumentException("'" + text + "' has an empty option (expected: "
                        + family + ":OPTION,OPTION,...)");
            }
            int eq = t.indexOf('=');
            options.add(eq < 0 ? new Option(t, "") : eq == 0
                    ? badOption(t, family) : new Option(t.substring(0, eq).strip(), t.substring(eq + 1).strip()));
        }
        return options;
    }

    private Option badOption(String item, String family) {
        throw new IllegalArgumentException("'" + text + "' has an option without a name: " + Messages.quote(item)
                + " (expected: " + family + ":OPTION or " + family + ":OPTION=VALUE)");
    }

    /**
     * The exception a provider throws for this term: the message every family gives,
     * {@code handler name 'NAME': 'TERM': WHAT (expected: EXPECTED)}, names and term quoted (and cut
     * at 100 characters).
     *
     * @param handlerName the name of the handler being made
     * @param what        what is wrong with the term
     * @param expected    the forms the family accepts
     * @return the exception, to throw
     * @throws NullPointerException if an argument is null
     */
    public IllegalArgumentException refused(String handlerName, String what, String expected) {
        Objects.requireNonNull(what, "what");
        Objects.requireNonNull(expected, "expected");
        return new IllegalArgumentException("handler name " + Messages.quote(Objects.requireNonNull(handlerName,
                "handlerName")) + ": " + Messages.quote(text) + ": " + what + " (expected: " + expected + ")");
    }

    /**
     * Reads a byte size as handler names write it: a decimal count, optionally followed by
     * {@code k}, {@code m}, {@code g} or {@code t} (powers of 1024; {@code kb}, {@code kib} and so
     * on too, any case): {@code 64k} is 65536.
     *
     * @param what     what the size is, for the message (an option's name)
     * @param text     the text
     * @param maxBytes the largest size accepted
     * @return the size in bytes
     * @throws NullPointerException     if {@code what} or {@code text} is null
     * @throws IllegalArgumentException if the text is not such a size, or the size is above
     *                                  {@code maxBytes}: the message quotes the text
     */
    public static long byteSize(String what, String text, long maxBytes) {
        Objects.requireNonNull(what, "what");
        String t = text.strip().toLowerCase(Locale.ROOT);
        int end = t.length();
        while (end > 0 && Character.isLetter(t.charAt(end - 1))) {
            end--;
        }
        String digits = t.substring(0, end).strip();
        int shift = switch (t.substring(end)) {
            case "", "b" -> 0;
            case "k", "kb", "kib" -> 10;
            case "m", "mb", "mib" -> 20;
            case "g", "gb", "gib" -> 30;
            case "t", "tb", "tib" -> 40;
            default -> -1;
        };
        long value;
        try {
            value = shift < 0 ? -1 : Long.parseLong(digits);
        } catch (NumberFormatException e) {
            value = -1;
        }
        if (value < 0) {
            throw new IllegalArgumentException(what + ": " + Messages.quote(text)
                    + " (expected: bytes, optionally with k, m, g or t, powers of 1024)");
        }
        if (value > (maxBytes >> shift)) {
            throw new IllegalArgumentException(what + ": " + Messages.quote(text) + " (expected: at most " + maxBytes
                    + " bytes)");
        }
        return value << shift;
    }

    private int separatorIndex() {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == ':' || c == '=' || c == '(') {
                return i;
            }
        }
        return -1;
    }

    private int closingParenthesis(int open) {
        int depth = 0;
        for (int i = open; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '(') {
                depth++;
            } else if (c == ')' && --depth == 0) {
                return i;
            }
        }
        throw new IllegalStateException("unbalanced term " + Messages.quote(text)); // the constructor rules this out
    }

    @Override
    public String toString() {
        return text;
    }
}
