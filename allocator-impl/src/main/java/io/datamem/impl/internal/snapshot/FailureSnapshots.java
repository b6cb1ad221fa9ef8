package io.datamem.impl.internal.snapshot;

import io.datamem.AllocationException;
import io.datamem.DataMemHandler;
import io.datamem.impl.snapshot.MemorySnapshot;
import io.datamem.internal.FailureDiagnostics;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * allocator-impl's {@link FailureDiagnostics}: when an allocation through a handler fails (out of
 * native memory, or refused by a limit), the exception's message gets a summary of the handler's
 * memory taken from a {@link MemorySnapshot} (the bytes live, each pool's free bytes and largest
 * free run, the largest consumers by allocation site when the handler tracks its blocks), and, when
 * the system property {@value #ON_FAILURE_PROPERTY} names a directory, the whole snapshot is
 * written there as JSON and the message names the file.
 *
 * <pre>
 * java -Ddatamem.snapshot.onFailure=/tmp/snapshots ...
 * </pre>
 *
 * <ul>
 *   <li>{@value #ON_FAILURE_PROPERTY}{@code =DIR}: write a snapshot of the failing handler to
 *       {@code DIR/datamem-snapshot-PID-TIME-N.json} (the directory is created if missing). Off
 *       when unset or empty.</li>
 *   <li>{@value #MAX_FILES_PROPERTY}{@code =N}: write at most {@code N} files in the life of the
 *       process (default {@value #DEFAULT_MAX_FILES}), so that a program failing in a loop does not
 *       fill the disk; later failures say that the cap was reached.</li>
 *   <li>{@value #SUMMARY_PROPERTY}{@code =false}: no summary in messages (and no files).</li>
 * </ul>
 * The properties are read at each failure.
 *
 * <p>{@link java.util.ServiceLoader} creates this class (allocator-impl declares it as the provider
 * of {@link FailureDiagnostics}); there is no need to call it.
 */
public final class FailureSnapshots implements FailureDiagnostics<DataMemHandler, AllocationException> {

    /** The system property naming the directory snapshots are written to on failure. */
    public static final String ON_FAILURE_PROPERTY = "datamem.snapshot.onFailure";

    /** The system property capping the files written on failure in the life of the process. */
    public static final String MAX_FILES_PROPERTY = "datamem.snapshot.onFailure.maxFiles";

    /** The system property that, set to {@code false}, turns summaries (and files) off. */
    public static final String SUMMARY_PROPERTY = "datamem.snapshot.onFailure.summary";

    /** The files written on failure at most, by default. */
    public static final int DEFAULT_MAX_FILES = 16;

    private static final DateTimeFormatter FILE_TIME =
            DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss.SSS'Z'").withZone(ZoneOffset.UTC);
    private static final AtomicInteger FILES = new AtomicInteger();

    /** Creates the service; {@link java.util.ServiceLoader} does. */
    public FailureSnapshots() {
    }

    /**
     * Describes the failing handler from a snapshot of it, and writes the snapshot when
     * {@value #ON_FAILURE_PROPERTY} says where.
     *
     * @param handler the handler the allocation went through
     * @param failure the exception about to be thrown
     * @return the summary and the file written, or null when {@value #SUMMARY_PROPERTY} is
     *         {@code false}
     * @throws NullPointerException if an argument is null
     */
    @Override
    public Report diagnose(DataMemHandler handler, AllocationException failure) {
        if ("false".equalsIgnoreCase(System.getProperty(SUMMARY_PROPERTY, "").strip())) {
            return null;
        }
        java.util.Objects.requireNonNull(failure, "failure");
        MemorySnapshot snapshot = MemorySnapshot.take(handler);
        String summary = snapshot.summary();
        String dir = System.getProperty(ON_FAILURE_PROPERTY, "").strip();
        if (dir.isEmpty()) {
            return new Report(summary, null);
        }
        int max = maxFiles();
        int n = FILES.incrementAndGet();
        if (n > max) {
            FILES.decrementAndGet();
            return new Report(summary + "\n  snapshot not written: " + max + " written already (" + MAX_FILES_PROPERTY
                    + ")", null);
        }
        Path file = Path.of(dir).resolve("datamem-snapshot-" + ProcessHandle.current().pid() + "-"
                + FILE_TIME.format(snapshot.time()) + "-" + n + ".json");
        try {
            Files.createDirectories(file.getParent());
            snapshot.write(file);
        } catch (IOException | RuntimeException e) {
            FILES.decrementAndGet();
            return new Report(summary + "\n  snapshot not written to " + file + ": " + e, null);
        }
        return new Report(summary, file.toAbsolutePath());
    }

    private static int maxFiles() {
        String p = System.getProperty(MAX_FILES_PROPERTY, "").strip();
        if (p.isEmpty()) {
            return DEFAULT_MAX_FILES;
        }
        try {
            return Math.max(0, Integer.parseInt(p));
        } catch (NumberFormatException e) {
            return DEFAULT_MAX_FILES;
        }
    }
}
