package io.datamem.impl.os;

import io.datamem.internal.Messages;

import java.util.Locale;

/**
 * Parses byte sizes written in handler names and options: {@code 4096}, {@code 64k}, {@code 16m},
 * {@code 1g}, {@code 2t} (powers of 1024; {@code kb}/{@code kib} and so on, any case). The one
 * parser behind {@code limit=}, {@code pool(...)}'s options and the huge-page threshold.
 */
public final class ByteSizes {

    private ByteSizes() {
    }

    /**
     * Parses a size.
     *
     * @param what     the name of the setting, for the message
     * @param text     the text
     * @param maxBytes the largest value accepted
     * @return bytes
     * @throws IllegalArgumentException if the text is not a size, is negative, or exceeds
     *                                  {@code maxBytes}
     */
    public static long parse(String what, String text, long maxBytes) {
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
            throw new IllegalArgumentException(what + ": " + Messages.quote(text) + " (expected: at most " + maxBytes + " bytes)");
        }
        return value << shift;
    }
}
