package io.datamem.impl;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The resident set size of this process, from {@code /proc/self/status} (Linux). Public: the tests
 * of {@code cpu} and {@code adaptor} use it.
 */
public final class Rss {

    private Rss() {
    }

    /** Whether this system reports it. */
    public static boolean available() {
        return Files.isReadable(Path.of("/proc/self/status"));
    }

    /** The resident bytes now. */
    public static long bytes() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    String[] f = line.substring(6).trim().split("\\s+");
                    return Long.parseLong(f[0]) * 1024;   // kB
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        throw new IllegalStateException("no VmRSS in /proc/self/status");
    }
}
