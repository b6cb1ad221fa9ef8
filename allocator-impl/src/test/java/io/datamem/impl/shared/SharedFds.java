package io.datamem.impl.shared;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/** Counts this process's datamem memfds: open descriptors and mapped ranges. */
final class SharedFds {

    private SharedFds() {
    }

    /** Open descriptors of this process that are datamem memfds. */
    static long descriptors() {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.filter(fd -> {
                try {
                    return Files.readSymbolicLink(fd).toString().startsWith("/memfd:" + Mapping.NAME_PREFIX);
                } catch (IOException e) {
                    return false;   // the descriptor of the listing itself, closed meanwhile
                }
            }).count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Lines of /proc/self/maps that map a datamem memfd. */
    static long mappings() {
        try {
            return Files.readAllLines(Path.of("/proc/self/maps")).stream()
                    .filter(line -> line.contains("/memfd:" + Mapping.NAME_PREFIX)).count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Both counts, for before/after comparisons. */
    record Snapshot(long descriptors, long mappings) {
        static Snapshot take() {
            return new Snapshot(SharedFds.descriptors(), SharedFds.mappings());
        }
    }
}
