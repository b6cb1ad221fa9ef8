package io.datamem.array;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;

import java.lang.System.Logger.Level;
import java.util.Arrays;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinWorkerThread;

/**
 * The debug log of which handler each new array was allocated through, on which thread, and whether
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
