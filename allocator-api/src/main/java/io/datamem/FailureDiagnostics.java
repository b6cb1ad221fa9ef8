package io.datamem;

import java.nio.file.Path;
import java.util.Objects;

/**
 * A service that describes a handler's memory when an allocation through it fails: the hook by
 * which {@link AllocationRefusal#failure} adds a short summary, and the name of a snapshot file, to
 * the {@link AllocationException} it builds.
 *
 * <p>The core knows nothing of pools, trackers or limits: it finds this service with
 * {@link java.util.ServiceLoader} (the first provider found is used) and asks it once per failure,
 * on the failing thread, before the exception is thrown. allocator-impl provides one (the handler's
 * layers described as in a memory snapshot); without a provider, exceptions carry no summary.
 *
 * <p>An implementation must be thread-safe, must not allocate through the failing handler, and
 * should be quick: the caller waits for it. What it throws is caught and reported in the summary
 * instead of replacing the failure.
 */
public interface FailureDiagnostics {

    /**
     * Describes the memory of a handler whose allocation just failed.
     *
     * @param handler the handler the allocation went through
     * @param failure the exception about to be thrown; its {@link AllocationException#summary()
     *                summary} is still empty
     * @return what to attach to the exception, or null to attach nothing
     */
    Report diagnose(DataMemHandler handler, AllocationException failure);

    /**
     * What a diagnosis attaches to a failure.
     *
     * @param summary      a few lines on the handler's memory (bytes live, free runs, the largest
     *                     consumers), without a trailing line break; empty for none
     * @param snapshotFile the file a full snapshot was written to, or null if none was written
     */
    record Report(String summary, Path snapshotFile) {

        /**
         * Validates the summary.
         *
         * @throws NullPointerException if {@code summary} is null
         */
        public Report {
            Objects.requireNonNull(summary, "summary");
            summary = summary.stripTrailing();
        }
    }
}
