package io.datamem.impl.internal;

import io.datamem.DataMemAllocator;
import io.datamem.spi.ProviderTerm;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Reads the options of a handler-name term: {@code family:opt,opt=value,...(nested)}. Internal.
 */
final class TermOptions {

    private TermOptions() {
    }

    /**
     * The comma-separated items after {@code family:} (or {@code family=}), with the nested name
     * removed.
     *
     * @param term   the term
     * @param family its family
     * @return the items, trimmed, none empty
     * @throws IllegalArgumentException if an item is empty
     */
    static List<String> items(ProviderTerm term, String family) {
        String text = term.withoutNested().strip();
        String rest = text.substring(family.length()).strip();
        List<String> items = new ArrayList<>();
        if (rest.isEmpty()) {
            return items;
        }
        if (rest.startsWith(":") || rest.startsWith("=")) {
            rest = rest.substring(1);
        } else {
            throw new IllegalArgumentException("'" + term + "' (expected: " + family + " or " + family + ":OPTIONS)");
        }
        for (String item : rest.split(",", -1)) {
            String t = item.strip();
            if (t.isEmpty()) {
                throw new IllegalArgumentException("'" + term + "' has an empty option (expected: "
                        + family + ":OPTION,OPTION,...)");
            }
            items.add(t);
        }
        return items;
    }

    /**
     * Parses a byte size with an optional binary suffix: {@code 4194304}, {@code 4m}, {@code 512k},
     * {@code 1g}, {@code 1t} (also {@code kb}/{@code kib} and so on).
     *
     * @param name  the option's name, for messages
     * @param value the text
     * @return bytes
     * @throws IllegalArgumentException if malformed or above {@link DataMemAllocator#MAX_BYTE_SIZE}
     */
    static long byteSize(String name, String value) {
        String v = value.strip().toLowerCase(Locale.ROOT);
        for (String suffix : new String[] {"ib", "b"}) {
            if (v.endsWith(suffix) && v.length() > suffix.length()
                    && !Character.isDigit(v.charAt(v.length() - suffix.length() - 1))) {
                v = v.substring(0, v.length() - suffix.length());
                break;
            }
        }
        int shift = 0;
        if (!v.isEmpty()) {
            switch (v.charAt(v.length() - 1)) {
                case 'k' -> shift = 10;
                case 'm' -> shift = 20;
                case 'g' -> shift = 30;
                case 't' -> shift = 40;
                default -> {
                }
            }
        }
        String digits = shift == 0 ? v : v.substring(0, v.length() - 1);
        long n;
        try {
            n = Long.parseLong(digits);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + ": '" + value + "' (expected: bytes, optionally with k, m, g or t)");
        }
        if (n < 0 || n > DataMemAllocator.MAX_BYTE_SIZE >> shift) {
            throw new IllegalArgumentException(name + ": '" + value + "' (expected: >= 0 and <= 2^57 bytes)");
        }
        return n << shift;
    }
}
