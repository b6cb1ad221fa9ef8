package io.datamem.array;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;

import java.lang.System.Logger.Level;
import java.util.Arrays;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinWorkerThread;

/**
 * The warning, once per process, that an array was allocated through the process default on a
 * worker of the common {@link ForkJoinPool} (a parallel stream's) in a process that binds handlers
 * with {@code DataMem.callWith}/{@code runWith}: the binding did not reach that worker, and arrays
 * of one computation came from two handlers. Logged at {@code WARNING} to the {@value #LOGGER_NAME}
 * {@link System.Logger}; {@code -D}{@value #WARN_PROPERTY}{@code =false} turns it off.
 *
 * <p>And the debug log of which handler each new array was allocated through, on which thread, and whether
 * that handler came from a scoped binding or from the process default: the case where a compute
 * block's handler silently did not reach a worker thread becomes visible.
 *
 * <p>Whether the log is on is decided once, when the first array is created: from the level of the
 * {@value #LOGGER_NAME} {@link System.Logger} then ({@link Level#DEBUG}, which is
 * {@code java.util.logging}'s {@code FINE}). It is a static final flag, so when the log is off the
 * check on the creation path is folded away by the JIT.
 */
final class HandlerTrace {

    /** The logger's name. */
    static final String LOGGER_NAME = "io.datamem.array.handler";

    private static final System.Logger LOG = System.getLogger(LOGGER_NAME);

    /** Whether each array creation is logged. */
    static final boolean ENABLED = LOG.isLoggable(Level.DEBUG);

    /** The system property that turns the warning about unbound common-pool workers off ({@code false}). */
    static final String WARN_PROPERTY = "datamem.warnUnboundWorkers";

    /** Whether the warning may be given (once). */
    static final boolean WARN = !"false".equalsIgnoreCase(System.getProperty(WARN_PROPERTY));

    private static volatile boolean warned;

    /**
     * After an array was allocated through {@code handler} with nothing bound on this thread: warns
     * once if this is a common-pool worker in a process that binds handlers. Costs a type test and a
     * read while it has not warned.
     */
    static void unbound(DataMemHandler handler, DType dtype, long[] shape) {
        if (warned || !(Thread.currentThread() instanceof ForkJoinWorkerThread w)
                || w.getPool() != ForkJoinPool.commonPool() || !io.datamem.internal.Bindings.used()) {
            return;
        }
        warned = true;
        LOG.log(Level.WARNING, "datamem: NDArray[" + dtype + ", shape " + Arrays.toString(shape) + "] was allocated"
                + " through the process default, handler '" + handler.name() + "', on common-pool worker '"
                + w.getName() + "', although this process binds handlers with DataMem.callWith/runWith: a binding"
                + " does not reach parallel-stream workers. Use Parallel.forRange, or run the stream in"
                + " DataMem.newForkJoinPool(handler, n). (Said once; -D" + WARN_PROPERTY + "=false silences it.)");
    }

    private HandlerTrace() {
    }

    /** Logs the creation of an array through {@code handler} ({@code DataMem.current()} at creation). */
    static void created(DataMemHandler handler, DType dtype, long[] shape) {
        Thread thread = Thread.currentThread();
        boolean scoped = DataMem.isScoped();
        StringBuilder m = new StringBuilder("datamem: NDArray[").append(dtype).append(", shape ")
                .append(Arrays.toString(shape)).append("] allocated through handler '").append(handler.name())
                .append("' (").append(scoped ? "scoped binding" : "process default: no handler bound on this thread")
                .append(") on thread '").append(thread.getName()).append('\'');
        if (!scoped && thread instanceof ForkJoinWorkerThread w && w.getPool() == ForkJoinPool.commonPool()) {
            m.append("; a handler bound with DataMem.callWith/runWith does not reach common-pool workers"
                    + " (parallel streams): run them in DataMem.newForkJoinPool(handler, n)");
        }
        LOG.log(Level.DEBUG, m.toString());
    }
}
