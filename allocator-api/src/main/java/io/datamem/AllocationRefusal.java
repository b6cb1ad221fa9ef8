package io.datamem;

import io.datamem.internal.FailureDiagnostics;

import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;

/**
 * How an allocator that returns {@code NULL} because of a policy, not exhaustion, tells the code
 * that turns {@code NULL} into an exception why it refused.
 *
 * <p>Allocators return {@link java.lang.foreign.MemorySegment#NULL} whenever they cannot provide
 * memory, as the C functions do. A limiting adaptor that refuses a request because it would take
 * the bytes in use past its cap calls {@link #limitExceeded(long, long, long)} on the refusing
 * thread just before returning {@code NULL}; the array and arena code then throws a
 * {@link LimitExceededException} naming the cap, the bytes in use and the request instead of an
 * {@link OutOfNativeMemoryException}. The note is per thread, so adaptors between the limit and
 * the caller need not know about it.
 *
 * <p>Code that allocates through a handler and reports failures itself does the same as the arrays:
 * {@link #clear()} before the call, {@link #failure} when it returned {@code NULL}. The cost when no
 * allocator ever refused is one read of a static field.
 *
 * <p>{@link #failure} also asks the failure diagnostics service, when one is installed
 * (allocator-impl provides one), to describe the handler's memory; the exception then carries its
 * {@linkplain AllocationException#summary() summary} and names the snapshot file it wrote.
 */
public final class AllocationRefusal {

    private static final ThreadLocal<Note> NOTE = ThreadLocal.withInitial(Note::new);
    private static volatile boolean everNoted;

    private AllocationRefusal() {
    }

    /** The pending refusal of one thread. */
    private static final class Note {
        boolean pending;
        long byteSize;
        long limitBytes;
        long inUseBytes;
    }

    /**
     * Records, for the calling thread, that the allocation it is serving is refused by a byte limit.
     * Call it just before returning {@code NULL}.
     *
     * @param byteSize   the size of the refused request, as the limit saw it
     * @param limitBytes the cap
     * @param inUseBytes the bytes in use under the cap when the request came
     */
    public static void limitExceeded(long byteSize, long limitBytes, long inUseBytes) {
        Note n = NOTE.get();
        n.pending = true;
        n.byteSize = byteSize;
        n.limitBytes = limitBytes;
        n.inUseBytes = inUseBytes;
        everNoted = true;
    }

    /**
     * Forgets any refusal recorded on the calling thread: call it before an allocation whose
     * {@code NULL} result will be turned into an exception with {@link #failure}.
     */
    public static void clear() {
        if (everNoted) {
            NOTE.get().pending = false;
        }
    }

    /**
     * The exception for an allocation through {@code handler} that returned {@code NULL}: a
     * {@link LimitExceededException} if a limit refused it on this thread since the last
     * {@link #clear()}, otherwise an {@link OutOfNativeMemoryException}. Consumes the recorded
     * refusal. The exception carries the failure diagnostics service's description of the handler's
     * memory, when a service is installed (allocator-impl installs one).
     *
     * @param handler   the handler the allocation went through
     * @param byteSize  the size requested
     * @param operation {@code "malloc"}, {@code "calloc"} or {@code "realloc"}
     * @return the exception to throw
     * @throws NullPointerException if {@code handler} or {@code operation} is null
     */
    public static AllocationException failure(DataMemHandler handler, long byteSize, String operation) {
        return failure(handler, byteSize, handler.traits().byteAlignment(), operation);
    }

    /**
     * As {@link #failure(DataMemHandler, long, String)}, naming an alignment other than the
     * handler's (an arena asked for a larger one, say).
     *
     * @param handler       the handler the allocation went through
     * @param byteSize      the size requested
     * @param byteAlignment the alignment requested
     * @param operation     {@code "malloc"}, {@code "calloc"} or {@code "realloc"}
     * @return the exception to throw
     * @throws NullPointerException if {@code handler} or {@code operation} is null
     */
    public static AllocationException failure(DataMemHandler handler, long byteSize, long byteAlignment,
                                              String operation) {
        java.util.Objects.requireNonNull(operation, "operation");
        long alignment = byteAlignment;
        AllocationException e = null;
        if (everNoted) {
            Note n = NOTE.get();
            if (n.pending) {
                n.pending = false;
                e = new LimitExceededException(handler.name(), n.byteSize, alignment, n.limitBytes, n.inUseBytes);
            }
        }
        if (e == null) {
            e = new OutOfNativeMemoryException(handler.name(), byteSize, alignment, operation);
        }
        diagnose(handler, e);
        return e;
    }

    /** Set while this thread diagnoses a failure: a failure inside the diagnosis is not diagnosed again. */
    private static final ThreadLocal<Boolean> DIAGNOSING = new ThreadLocal<>();

    private static void diagnose(DataMemHandler handler, AllocationException e) {
        FailureDiagnostics<DataMemHandler, AllocationException> service = Diagnostics.SERVICE;
        if (service == null || DIAGNOSING.get() != null) {
            return;
        }
        DIAGNOSING.set(Boolean.TRUE);
        try {
            FailureDiagnostics.Report report = service.diagnose(handler, e);
            if (report != null) {
                e.attach(report);
            }
        } catch (RuntimeException failed) {
            e.attach(new FailureDiagnostics.Report("  (no diagnosis: " + service.getClass().getName() + " failed: "
                    + failed + ")", null));
        } finally {
            DIAGNOSING.remove();
        }
    }

    /** The diagnostics service, found on first use; null if none is installed or it cannot be loaded. */
    private static final class Diagnostics {
        static final FailureDiagnostics<DataMemHandler, AllocationException> SERVICE = load();

        @SuppressWarnings("unchecked")
        private static FailureDiagnostics<DataMemHandler, AllocationException> load() {
            try {
                return ServiceLoader.load(FailureDiagnostics.class, FailureDiagnostics.class.getClassLoader())
                        .findFirst().orElse(null);
            } catch (ServiceConfigurationError e) {
                System.getLogger(AllocationRefusal.class.getName()).log(System.Logger.Level.WARNING,
                        "datamem: the failure diagnostics service cannot be loaded; allocation failures carry no"
                                + " summary: " + e.getMessage(), e);
                return null;
            }
        }
    }
}
