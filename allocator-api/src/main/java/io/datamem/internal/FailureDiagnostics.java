package io.datamem.internal;

import java.nio.file.Path;
import java.util.Objects;

/**
 * A service that describes a handler's memory when an allocation through it fails: the hook by
 * which {@code io.datamem.AllocationRefusal.failure} adds a short summary, and the name of a
 * snapshot file, to the {@code AllocationException} it builds.
 *
 * <p>The core knows nothing of pools, trackers or limits: it finds this service with
 * {@link java.util.ServiceLoader} (the first provider found is used) and asks it once per failure,
 * on the failing thread, before the exception is thrown. allocator-impl provides one (the handler's
 * layers described as in a memory snapshot); without a provider, exceptions carry no summary. It is
 * a hook between datamem's own modules, not API: this package is exported only to them.
 *
 * <p>The type parameters keep this package free of the core's types, as in {@link HandlerRegistry}:
 * the core asks through {@code FailureDiagnostics<DataMemHandler, AllocationException>}.
 *
 * <p>An implementation must be thread-safe, must not allocate through the failing handler, and
 * should be quick: the caller waits for it. What it throws is caught and reported in the summary
 * instead of replacing the failure.
 *
 * @param <H> the handler type ({@code io.datamem.DataMemHandler})
 * @param <E> the exception type ({@code io.datamem.AllocationException})
 */
public interface FailureDiagnostics<H, E> {

    /**
     * Describes the memory of a handler whose allocation just failed.
     *
     * @param handler the handler the allocation went through
     * @param failure the exception about to be thrown; its summary is still empty
     * @return what to attach to the exception, or null to attach nothing
     */
    Report diagnose(H handler, E failure);

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
