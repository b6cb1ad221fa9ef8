package io.datamem;

import io.datamem.internal.FailureDiagnostics;

import java.nio.file.Path;
import java.util.Optional;

/**
 * The root of datamem's runtime failures: memory could not be provided. Its message names the
 * handler and the byte count; subclasses say why.
 *
 * <p>When this exception is thrown, nothing was allocated and no accounting changed.
 *
 * <p>A failure built by {@link AllocationRefusal#failure} may also carry a {@link #summary()} of the
 * handler's memory (bytes live, free runs, the largest consumers) and the {@link #snapshotFile()}
 * a full snapshot was written to, from the failure diagnostics service when one is installed (allocator-impl installs one);
 * {@link #getMessage()} then ends with them, after the one-line message.
 */
public class AllocationException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String handlerName;
    private final long byteSize;
    private final long byteAlignment;
    private String summary = "";
    private String snapshotFile;   // a path's text (Path is not serialisable), or null

    /**
     * Creates an exception.
     *
     * @param handlerName   the handler that failed (may be null when no handler is involved)
     * @param byteSize      the size requested, in bytes
     * @param byteAlignment the alignment requested or guaranteed, in bytes (0 if none)
     * @param message       the complete message
     */
    public AllocationException(String handlerName, long byteSize, long byteAlignment, String message) {
        super(message);
        this.handlerName = handlerName;
        this.byteSize = byteSize;
        this.byteAlignment = byteAlignment;
    }

    /**
     * Creates an exception with a cause.
     *
     * @param handlerName   the handler that failed (may be null when no handler is involved)
     * @param byteSize      the size requested, in bytes
     * @param byteAlignment the alignment requested or guaranteed, in bytes (0 if none)
     * @param message       the complete message
     * @param cause         the underlying failure
     */
    public AllocationException(String handlerName, long byteSize, long byteAlignment, String message,
                               Throwable cause) {
        super(message, cause);
        this.handlerName = handlerName;
        this.byteSize = byteSize;
        this.byteAlignment = byteAlignment;
    }

    /**
     * The name of the handler that could not allocate.
     *
     * @return the handler name, or null if no handler was involved
     */
    public String handlerName() {
        return handlerName;
    }

    /**
     * The size that was requested.
     *
     * @return bytes
     */
    public long byteSize() {
        return byteSize;
    }

    /**
     * The alignment that was requested or guaranteed.
     *
     * @return bytes, or 0 if none applies
     */
    public long byteAlignment() {
        return byteAlignment;
    }

    /**
     * A summary of the failing handler's memory when the failure was built: a few lines naming the
     * bytes live, the largest free runs of its pools and its largest consumers.
     *
     * @return the summary, empty when no failure diagnostics service described the failure (allocator-api
     *         alone installs none; allocator-impl does)
     */
    public String summary() {
        return summary;
    }

    /**
     * The file a full memory snapshot was written to when the failure was built.
     *
     * @return the file, or empty when none was written
     */
    public Optional<Path> snapshotFile() {
        return Optional.ofNullable(snapshotFile).map(Path::of);
    }

    /**
     * The one-line message, followed (on new lines) by the {@link #summary()} and the
     * {@link #snapshotFile()} when there are any.
     *
     * @return the message
     */
    @Override
    public String getMessage() {
        String message = super.getMessage();
        if (summary.isEmpty() && snapshotFile == null) {
            return message;
        }
        StringBuilder b = new StringBuilder(message);
        if (!summary.isEmpty()) {
            b.append('\n').append(summary);
        }
        if (snapshotFile != null) {
            b.append("\n  snapshot written to ").append(snapshotFile);
        }
        return b.toString();
    }

    /** Attaches a diagnosis, once, before the exception is thrown (by {@link AllocationRefusal}). */
    void attach(FailureDiagnostics.Report report) {
        this.summary = report.summary();
        this.snapshotFile = report.snapshotFile() == null ? null : report.snapshotFile().toString();
    }
}
