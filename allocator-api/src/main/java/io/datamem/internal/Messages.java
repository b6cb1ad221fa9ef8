package io.datamem.internal;

/**
 * How error messages quote what a user wrote (a handler name, a term, an option), so that a
 * message stays short whatever the input. Internal.
 */
public final class Messages {

    /**
     * The most characters of user input a message quotes: enough for any handler name (at most 127
     * UTF-8 bytes), short enough to keep a message on a line or two.
     */
    public static final int MAX_QUOTED_CHARS = 128;

    private Messages() {
    }

    /**
     * User input in single quotes, cut to its first {@value #MAX_QUOTED_CHARS} characters when
     * longer: {@code 'aligned64'}, or {@code 'xxxx…' (1000000 characters)}.
     *
     * @param input what the user wrote; null is quoted as {@code null}
     * @return the quotation
     */
    public static String quote(CharSequence input) {
        if (input == null) {
            return "null";
        }
        int n = input.length();
        if (n <= MAX_QUOTED_CHARS) {
            return "'" + input + "'";
        }
        int end = MAX_QUOTED_CHARS;
        if (Character.isHighSurrogate(input.charAt(end - 1))) {
            end--; // never split a surrogate pair
        }
        return "'" + input.subSequence(0, end) + "…' (" + n + " characters)";
    }
}
