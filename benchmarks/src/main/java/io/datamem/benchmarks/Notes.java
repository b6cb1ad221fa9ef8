package io.datamem.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Facts a benchmark observed that JMH does not record (which pages backed a block, for instance),
 * appended as {@code key<TAB>value} lines to the file named by {@value #PROPERTY}, for the report.
 */
public final class Notes {

    /** The system property naming the notes file. */
    public static final String PROPERTY = "datamem.bench.notes";

    private Notes() {
    }

    /**
     * Records a fact (nothing if no notes file is named).
     *
     * @param key   what it is about
     * @param value the fact, one line
     * @throws UncheckedIOException if the file cannot be written
     */
    public static synchronized void record(String key, String value) {
        String file = System.getProperty(PROPERTY);
        if (file == null) {
            return;
        }
        try {
            Files.writeString(Path.of(file), key + "\t" + value.replace('\n', ' ') + "\n", StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
