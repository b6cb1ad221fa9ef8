package io.datamem.format;

/**
 * A malformed or unsupported format string. The message and {@link #position()} say where.
 */
public class FormatException extends IllegalArgumentException {

    private static final int MAX_QUOTED = 120;

    private final String format;
    private final int position;

    /**
     * Creates the exception.
     *
     * @param format   the whole format string
     * @param position the index of the offending character (the length of the string for a
     *                 premature end)
     * @param reason   what is wrong there
     */
    public FormatException(String format, int position, String reason) {
        super("format " + quote(format) + " at position " + position + ": " + reason);
        this.format = format;
        this.position = position;
    }

    /**
     * The format string.
     *
     * @return the string that failed
     */
    public String format() {
        return format;
    }

    /**
     * Where the error is.
     *
     * @return an index into {@link #format()}, from 0 to its length
     */
    public int position() {
        return position;
    }

    private static String quote(String format) {
        String s = format.length() <= MAX_QUOTED ? format : format.substring(0, MAX_QUOTED) + "...";
        StringBuilder b = new StringBuilder("'");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c >= 0x20 && c < 0x7F) {
                b.append(c);
            } else {
                b.append(String.format("\\u%04x", (int) c));
            }
        }
        return b.append('\'').toString();
    }
}
