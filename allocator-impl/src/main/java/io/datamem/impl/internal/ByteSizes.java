package io.datamem.impl.internal;

import java.util.Locale;

/** Parses byte sizes written in handler names: {@code 4096}, {@code 64k}, {@code 16m}, {@code 1g}. */
public final class ByteSizes {

    private ByteSizes() {
    }

    /**
     * Parses a size with an optional binary suffix k, m, g or t (case-insensitive, optionally
     * followed by {@code b} or {@code ib}).
     *
     * @param what the name of the setting, for the message
     * @param text the text
     * @return bytes
     * @throws IllegalArgumentException if the text is not a non-negative size that fits in a long
     */
    public static long parse(String what, String text) {
        String t = text.strip().toLowerCase(Locale.ROOT);
        if (t.endsWith("ib")) {
            t = t.substring(0, t.length() - 2);
        } else if (t.endsWith("b") && t.length() > 1 && !Character.isDigit(t.charAt(t.length() - 2))) {
            t = t.substring(0, t.length() - 1);
        }
        int shift = 0;
        if (!t.isEmpty()) {
            switch (t.charAt(t.length() - 1)) {
                case 'k' -> shift = 10;
                case 'm' -> shift = 20;
                case 'g' -> shift = 30;
                case 't' -> shift = 40;
                default -> shift = 0;
            }
        }
        String digits = shift == 0 ? t : t.substring(0, t.length() - 1);
        try {
            long value = Long.parseLong(digits);
            if (value < 0 || value > (Long.MAX_VALUE >> shift)) {
                throw new NumberFormatException();
            }
            return value << shift;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(what + ": '" + text
                    + "' (expected: a byte count such as 4096, 64k, 16m or 1g)");
        }
    }
}
