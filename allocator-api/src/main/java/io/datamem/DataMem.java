package io.datamem;

import io.datamem.internal.HandlerRegistry;
import io.datamem.internal.LiveHandlers;
import io.datamem.internal.Messages;
import io.datamem.internal.Registries;

import java.lang.foreign.Arena;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinWorkerThread;
import java.util.concurrent.ThreadFactory;

/**
 * Which handler allocates: NEP 49's {@code PyDataMem_GetHandler}/{@code PyDataMem_SetHandler}
 * mapped onto Java.
 *
 * <p>{@link #current()} is the handler the next array will be created with: the one bound by the
 * innermost enclosing {@link #callWith callWith}/{@link #runWith runWith} on this thread (a
 * {@link ScopedValue} binding, restored when the block exits), else the process default. The
 * process default is the handler named by the system property {@code datamem.handler} or the
 * environment variable {@code DATAMEM_HANDLER} (the property wins), else {@link #builtinDefault()};
 * {@link #setDefaultHandler} replaces it.
 *
 * <p>A scoped binding is seen by the thread that bound it and by what that thread hands it to
 * explicitly. A thread started inside the block, a task handed to an executor, a virtual thread and
 * the worker threads of a parallel stream (the common {@link ForkJoinPool}) do not see it: arrays
 * they create come from the process default. Hand the binding over with
 * {@link #propagate(Runnable)}, {@link #propagateCall(Callable)} or {@link #propagating(Executor)}
 * (one task at a time), with threads that run bound ({@link #threadFactory},
 * {@link #newVirtualThreadPerTaskExecutor}), or, for parallel streams and fork/join code, with a
 * pool whose workers run bound ({@link #newForkJoinPool}):
 *
 * <pre>{@code
 * try (ForkJoinPool pool = DataMem.newForkJoinPool(aligned64, 8)) {
 *     List<NDArray> out = pool.submit(() -> inputs.parallelStream().map(f).toList()).join();
 * }
 * }</pre>
 *
 * <p>{@link io.datamem.array.Parallel} runs loops over index ranges and rows in parallel with the
 * caller's binding.
 *
 * <p>All methods are thread-safe.
 */
public final class DataMem {

    /** The system property that names the process default handler. */
    public static final String HANDLER_PROPERTY = "datamem.handler";

    /** The environment variable that names the process default handler (the property wins). */
    public static final String HANDLER_ENV = "DATAMEM_HANDLER";

    private static final ScopedValue<DataMemHandler> CURRENT = ScopedValue.newInstance();

    private static final DataMemHandler BUILTIN = new DataMemHandler("default_allocator", 1, LibcAllocator.INSTANCE);

    static {
        Registries.start(BUILTIN);   // the registry takes the built-in handler from there
    }

    // The process default; null until first needed, then resolved from the configuration.
    private static volatile DataMemHandler processDefault;

    private DataMem() {
    }

    /**
     * The handler that allocates now on this thread: the innermost scoped binding, else the process
     * default.
     *
     * @return the current handler, never null
     * @throws IllegalStateException if nothing is bound and the configured process default
     *                               ({@value #HANDLER_PROPERTY} / {@value #HANDLER_ENV}) names an
     *                               unknown or unavailable handler
     */
    public static DataMemHandler current() {
        if (CURRENT.isBound()) {
            return CURRENT.get();   // the process default is not consulted (nor resolved) under a binding
        }
        DataMemHandler d = processDefault;
        return d != null ? d : defaultHandler();
    }

    /**
     * The built-in default handler, {@code default_allocator}: the C library's allocator, version 1.
     * It is a singleton.
     *
     * @return the built-in default handler
     */
    public static DataMemHandler builtinDefault() {
        return BUILTIN;
    }

    /**
     * The process default: what unbound threads allocate with.
     *
     * @return the process default handler
     * @throws IllegalStateException if it was never set and the configured name
     *                               ({@value #HANDLER_PROPERTY} / {@value #HANDLER_ENV}) is unknown
     *                               or unavailable; the message lists the available names
     */
    public static DataMemHandler defaultHandler() {
        DataMemHandler d = processDefault;
        if (d != null) {
            return d;
        }
        synchronized (DataMem.class) {
            if (processDefault == null) {
                processDefault = configuredDefault();
            }
            return processDefault;
        }
    }

    private static DataMemHandler configuredDefault() {
        String source = HANDLER_PROPERTY;
        String name = System.getProperty(HANDLER_PROPERTY);
        if (name == null || name.isBlank()) {
            source = HANDLER_ENV;
            name = System.getenv(HANDLER_ENV);
        }
        if (name == null || name.isBlank()) {
            return BUILTIN;
        }
        try {
            return registry().handler(name);
        } catch (IllegalArgumentException | IllegalStateException e) {
            throw new IllegalStateException("the default handler named by " + source + "=" + Messages.quote(name)
                    + " cannot be used: " + e.getMessage(), e);
        }
    }

    /**
     * Replaces the process default, as {@code PyDataMem_SetHandler} does. Scoped bindings in force
     * are not affected.
     *
     * @param handler the new default, or null to reset to {@link #builtinDefault()}
     * @return the previous process default; null if it had never been resolved and the configured
     *         name could not be
     */
    public static DataMemHandler setDefaultHandler(DataMemHandler handler) {
        DataMemHandler next = handler == null ? BUILTIN : handler;
        if (next != BUILTIN) {
            LiveHandlers.record(next);   // a live snapshot can describe it
        }
        synchronized (DataMem.class) {
            DataMemHandler previous = processDefault;
            if (previous == null) {
                try {
                    previous = configuredDefault();
                } catch (IllegalStateException e) {
                    previous = null;
                }
            }
            processDefault = next;
            return previous;
        }
    }

    /**
     * Runs an operation with a handler bound on this thread, and returns its result. The binding is
     * undone when the operation returns or throws.
     *
     * @param handler the handler arrays created inside allocate with
     * @param op      the operation
     * @param <R>     the result type
     * @param <X>     the exception the operation may throw
     * @return the operation's result
     * @throws X                    what the operation throws
     * @throws NullPointerException if {@code handler} or {@code op} is null
     */
    public static <R, X extends Throwable> R callWith(DataMemHandler handler, ScopedValue.CallableOp<R, X> op)
            throws X {
        Objects.requireNonNull(handler, "handler");
        Objects.requireNonNull(op, "op");
        io.datamem.internal.Bindings.mark();
        return ScopedValue.where(CURRENT, handler).call(op);
    }

    /**
     * Runs an operation with a handler bound on this thread. The binding is undone when the
     * operation returns or throws.
     *
     * @param handler the handler arrays created inside allocate with
     * @param op      the operation
     * @throws NullPointerException if {@code handler} or {@code op} is null
     */
    public static void runWith(DataMemHandler handler, Runnable op) {
        Objects.requireNonNull(handler, "handler");
        Objects.requireNonNull(op, "op");
        io.datamem.internal.Bindings.mark();
        ScopedValue.where(CURRENT, handler).run(op);
    }

    /**
     * Whether a scoped handler is bound on this thread.
     *
     * @return true inside {@link #callWith}/{@link #runWith}
     */
    public static boolean isScoped() {
        return CURRENT.isBound();
    }

    /**
     * Wraps a task so that it runs with the handler bound here and now, on whatever thread runs it.
     * If nothing is bound here, the task runs with no binding (so it sees the process default in
     * force when it runs).
     *
     * @param task the task
     * @return a task that binds the captured handler around {@code task}
     * @throws NullPointerException if {@code task} is null
     */
    public static Runnable propagate(Runnable task) {
        Objects.requireNonNull(task, "task");
        if (!CURRENT.isBound()) {
            return task;
        }
        DataMemHandler captured = CURRENT.get();
        return () -> ScopedValue.where(CURRENT, captured).run(task);
    }

    /**
     * Wraps a task that returns a value so that it runs with the handler bound here and now, as
     * {@link #propagate(Runnable)} does. (A different name, so that a lambda is never ambiguous
     * between the two.)
     *
     * @param task the task
     * @param <V>  the result type
     * @return a task that binds the captured handler around {@code task}
     * @throws NullPointerException if {@code task} is null
     */
    public static <V> Callable<V> propagateCall(Callable<V> task) {
        Objects.requireNonNull(task, "task");
        if (!CURRENT.isBound()) {
            return task;
        }
        DataMemHandler captured = CURRENT.get();
        return () -> ScopedValue.where(CURRENT, captured).call(task::call);
    }

    /**
     * An executor that runs each task with the handler bound at the moment the task was submitted.
     *
     * @param executor the executor that runs the tasks
     * @return the propagating executor
     * @throws NullPointerException if {@code executor} is null
     */
    public static Executor propagating(Executor executor) {
        Objects.requireNonNull(executor, "executor");
        return task -> executor.execute(propagate(task));
    }

    /**
     * A thread factory whose threads run with a handler bound: every array created on them, by
     * the task they were made for and by anything it calls, comes from {@code handler} unless an
     * inner {@link #callWith}/{@link #runWith} binds another. For executors that make their own
     * threads: {@code Executors.newFixedThreadPool(n, DataMem.threadFactory(h,
     * Executors.defaultThreadFactory()))}, or virtual threads with
     * {@code Thread.ofVirtual().factory()}.
     *
     * @param handler the handler the threads run with
     * @param base    the factory that makes the threads (their kind, name, daemon status)
     * @return the binding factory; it returns null where {@code base} does (it refuses a thread)
     * @throws NullPointerException if {@code handler} or {@code base} is null
     */
    public static ThreadFactory threadFactory(DataMemHandler handler, ThreadFactory base) {
        Objects.requireNonNull(handler, "handler");
        Objects.requireNonNull(base, "base");
        return task -> base.newThread(() -> ScopedValue.where(CURRENT, handler).run(task));
    }

    /**
     * An executor that runs each task on a new virtual thread with a handler bound, as
     * {@link Executors#newVirtualThreadPerTaskExecutor()} does without one. Close it (it is
     * {@link AutoCloseable}) to wait for the tasks.
     *
     * @param handler the handler the tasks run with
     * @return a new executor
     * @throws NullPointerException if {@code handler} is null
     */
    public static ExecutorService newVirtualThreadPerTaskExecutor(DataMemHandler handler) {
        return Executors.newThreadPerTaskExecutor(threadFactory(handler, Thread.ofVirtual().factory()));
    }

    /**
     * A factory of fork/join worker threads that run with a handler bound, for building a
     * {@link ForkJoinPool} configured otherwise as you need. Each thread binds the handler around
     * its whole life ({@link ForkJoinWorkerThread#run()}), so every task it runs, the tasks of a
     * parallel stream started in the pool among them, creates its arrays through {@code handler}.
     *
     * @param handler the handler the workers run with
     * @return the factory
     * @throws NullPointerException if {@code handler} is null
     * @see #newForkJoinPool(DataMemHandler, int)
     */
    public static ForkJoinPool.ForkJoinWorkerThreadFactory forkJoinWorkerThreadFactory(DataMemHandler handler) {
        Objects.requireNonNull(handler, "handler");
        return pool -> new BoundWorkerThread(pool, handler);
    }

    /**
     * A fork/join pool whose worker threads run with a handler bound. A parallel stream started by
     * a task of this pool runs in this pool, so each of its arrays comes from {@code handler}:
     *
     * <pre>{@code
     * try (ForkJoinPool pool = DataMem.newForkJoinPool(DataMem.current(), 8)) {
     *     List<NDArray> out = pool.submit(() -> inputs.parallelStream().map(f).toList()).join();
     * }
     * }</pre>
     *
     * <p>A parallel stream started on any other thread runs on the common pool, whose workers see
     * only the process default. Threads the pool adds to compensate for blocked workers are bound
     * too. Close the pool when done, or keep one per handler for the life of the program.
     *
     * @param handler     the handler the workers run with
     * @param parallelism the target number of worker threads
     * @return a new pool (asynchronous mode off, no uncaught-exception handler)
     * @throws NullPointerException     if {@code handler} is null
     * @throws IllegalArgumentException if {@code parallelism} is not positive or above the pool's
     *                                  limit (32767)
     */
    public static ForkJoinPool newForkJoinPool(DataMemHandler handler, int parallelism) {
        return new ForkJoinPool(parallelism, forkJoinWorkerThreadFactory(handler), null, false);
    }

    /** A fork/join worker that binds a handler around its whole run. */
    private static final class BoundWorkerThread extends ForkJoinWorkerThread {
        private final DataMemHandler handler;

        BoundWorkerThread(ForkJoinPool pool, DataMemHandler handler) {
            super(pool);
            this.handler = handler;
        }

        @Override
        public void run() {
            ScopedValue.where(CURRENT, handler).run(super::run);
        }
    }

    /**
     * Opens a confined arena that allocates through the current handler.
     *
     * @return {@code current().openArena()}
     * @throws UnsupportedOperationException if the current handler's memory is not host-accessible
     * @see DataMemHandler#openArena()
     */
    public static Arena openArena() {
        return current().openArena();
    }

    /**
     * The handler with a name, such as {@code aligned64}, {@code pool(aligned64)+stats} or
     * {@code default_allocator}. Each distinct name is built once and then returned for the life of
     * the process, as NEP 49's handlers are immortal; {@code default_allocator} is
     * {@link #builtinDefault()}.
     *
     * <p>The whole name is checked, every term and option, nested names included, before anything
     * is built: a name that is refused has had no side effect (a {@code log=FILE} is not opened or
     * truncated). Messages quote at most the first 128 characters of the name.
     *
     * @param name the handler name: a leaf provider name, then {@code +adaptor} terms
     * @return the handler
     * @throws NullPointerException     if {@code name} is null
     * @throws IllegalArgumentException if the name is malformed or longer than
     *                                  {@value DataMemHandler#MAX_NAME_BYTES} UTF-8 bytes; or if no
     *                                  provider on the class path or module path accepts a term: the
     *                                  message names the artifact to add when the family is one of
     *                                  datamem's ({@code aligned64} needs
     *                                  {@code io.datamem:allocator-impl}), else suggests the closest
     *                                  spellings and lists the families available
     * @throws IllegalStateException    if a provider it needs is unavailable here, or the handler
     *                                  cannot be made here (explicit huge pages with none reserved,
     *                                  a log file that cannot be opened); the message says why and
     *                                  what to do
     */
    public static DataMemHandler handler(String name) {
        return registry().handler(name);
    }

    /**
     * A new handler with a name, not cached: adaptors in it start with fresh state. As
     * {@link #handler(String)} otherwise ({@code default_allocator} is still the singleton), with
     * the same checks before anything is built.
     *
     * @param name the handler name
     * @return a new handler
     * @throws NullPointerException     if {@code name} is null
     * @throws IllegalArgumentException if the name is malformed, too long, or no provider accepts a
     *                                  term, as for {@link #handler(String)}
     * @throws IllegalStateException    if a provider it needs is unavailable here, or the handler
     *                                  cannot be made here, as for {@link #handler(String)}
     */
    public static DataMemHandler createHandler(String name) {
        return registry().create(name);
    }

    /**
     * Every handler-name form the providers accept, with availability, in one line.
     *
     * @return a description for messages and listings
     */
    public static String describeProviders() {
        return registry().describe();
    }

    /** The provider registry, which resolves names; it sits above this package (see {@link Registries}). */
    private static HandlerRegistry<DataMemHandler, ?> registry() {
        return Registries.registry();
    }
}
