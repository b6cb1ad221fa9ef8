package io.datamem.spi;

import io.datamem.internal.Messages;

import java.util.ArrayList;
import java.util.List;
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
