package io.datamem.array;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinTask;
import java.util.concurrent.RecursiveAction;
import java.util.function.LongConsumer;
import java.util.function.ObjLongConsumer;

/**
 * Parallel loops that keep the caller's handler: every index runs with the handler bound on the
 * calling thread when the loop started, on whichever thread runs it, so arrays the loop body
 * creates come from the same handler as arrays created just before the loop.
 *
 * <pre>{@code
 * DataMem.runWith(aligned64, () -> {
 *     Parallel.forRange(0, n, i -> results[(int) i] = NDArray.zeros(DType.FLOAT64, 1024)); // aligned64
 *     Parallel.forEachRow(matrix, (row, i) -> row.fill(i));
 * });
 * }</pre>
 *
 * <p>The loops hand arrays over too: an array belongs to the thread that created it until it is
 * {@linkplain NDArray#share() shared}, so before the loop starts they share every array the loop
 * body captures (the arrays a lambda uses directly, and those in an {@code NDArray[]} it uses), and
 * {@code forEachRow} the array it walks; arrays the body creates are shared as they are created, so
 * that the calling thread can use them after the loop. Arrays the body reaches any other way (a
 * field of an object it captures, say) must be shared by the caller first; a worker touching one
 * that is not gets {@link WrongThreadException} saying so.
 *
 * <p>The loops are fork/join tasks. Called from a worker of a {@link ForkJoinPool}, they run in that
 * pool; called from any other thread, in the common pool, with the calling thread taking part. The
 * range is split into about four chunks per worker; each chunk binds the captured handler around its
 * indices. If nothing is bound on the calling thread, the chunks bind nothing either (they then see
 * the process default, or the binding of a pool from {@link DataMem#newForkJoinPool}).
 *
 * <p>If the body throws for some index, the loop ends by throwing it (as a fork/join task does: an
 * exception raised on another thread may be rethrown as a copy of the same type whose cause is the
 * original); some other indices may have run, others not.
 *
 * <p>All methods are thread-safe.
 */
public final class Parallel {

    private Parallel() {
    }

    /**
     * Runs {@code body} for every index in {@code [startInclusive, endExclusive)}, in parallel, each
     * with the handler bound on the calling thread now (if any).
     *
     * @param startInclusive the first index
     * @param endExclusive   one past the last index
     * @param body           what to do for one index; it must be safe to call from several threads
     * @throws NullPointerException     if {@code body} is null
     * @throws IllegalArgumentException if {@code endExclusive < startInclusive}
     * @throws RuntimeException         what {@code body} threw, or a copy of it
     * @throws Error                    what {@code body} threw, or a copy of it
     */
    public static void forRange(long startInclusive, long endExclusive, LongConsumer body) {
        Objects.requireNonNull(body, "body");
        if (endExclusive < startInclusive) {
            throw new IllegalArgumentException("endExclusive: " + endExclusive + " (expected: >= startInclusive "
                    + startInclusive + ")");
        }
        long n = endExclusive - startInclusive;   // may overflow a long for extreme ranges: see below
        if (n == 0) {
            return;
        }
        if (n < 0) {
            throw new IllegalArgumentException("range [" + startInclusive + ", " + endExclusive
                    + ") (expected: at most " + Long.MAX_VALUE + " indices)");
        }
        ForkJoinPool pool = ForkJoinTask.getPool();
        int parallelism = pool != null ? pool.getParallelism() : ForkJoinPool.getCommonPoolParallelism();
        long chunk = Math.max(1, n / (4L * Math.max(1, parallelism)));
        DataMemHandler handler = DataMem.isScoped() ? DataMem.current() : null;
        shareCaptured(body);
        new RangeTask(startInclusive, endExclusive, chunk, handler, body).invoke();
    }

    /** Bound while a loop's body runs: the arrays it creates are shared at once (see {@link NDArray#share()}). */
    private static final ScopedValue<Boolean> SHARE_NEW = ScopedValue.newInstance();

    /** The fields of a lambda class that may hold arrays its body uses. */
    private static final ClassValue<Field[]> CAPTURES = new ClassValue<>() {
        @Override
        protected Field[] computeValue(Class<?> type) {
            List<Field> fields = new ArrayList<>();
            for (Field f : type.getDeclaredFields()) {
                Class<?> t = f.getType();
                if (!Modifier.isStatic(f.getModifiers()) && (t == NDArray.class || t == NDArray[].class
                        || t == Object.class) && f.trySetAccessible()) {
                    fields.add(f);
                }
            }
            return fields.toArray(new Field[0]);
        }
    };

    /** Whether arrays created now are to be shared: inside a loop body of this class. */
    static boolean sharesNewArrays() {
        return SHARE_NEW.isBound();
    }

    /**
     * Shares the arrays {@code body} captures: the values of its fields that are arrays or array
     * arrays (a lambda's captured variables are its fields). A body whose fields cannot be read (a
     * class in a module not open to datamem) shares nothing; its workers then say what to share.
     */
    private static void shareCaptured(Object body) {
        for (Field f : CAPTURES.get(body.getClass())) {
            Object v;
            try {
                v = f.get(body);
            } catch (IllegalAccessException e) {
                continue;
            }
            if (v instanceof NDArray a) {
                shareIfOpen(a);
            } else if (v instanceof NDArray[] arrays) {
                for (NDArray a : arrays) {
                    if (a != null) {
                        shareIfOpen(a);
                    }
                }
            }
        }
    }

    private static void shareIfOpen(NDArray a) {
        if (!a.isClosed() && !a.isShared() && !a.memory.isStrict() && !a.memory.isDevice()) {
            a.share();
        }
    }

    /**
     * Runs {@code body} for every index along an array's first axis, in parallel, with the view
     * {@code array.select(0, i)} (one axis fewer) and the index, each with the handler bound on the
     * calling thread now (if any). Rows share the array's memory; the body may write them.
     *
     * @param array the array; at least one axis
     * @param body  what to do for one row: {@code (row, index)}; it must be safe to call from several
     *              threads
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if the array has no axis (it is 0-d)
     * @throws IllegalStateException    if the array is closed (or closed while the loop runs)
     * @throws RuntimeException         what {@code body} threw, or a copy of it
     * @throws Error                    what {@code body} threw, or a copy of it
     */
    public static void forEachRow(NDArray array, ObjLongConsumer<NDArray> body) {
        Objects.requireNonNull(array, "array");
        Objects.requireNonNull(body, "body");
        if (array.ndim() == 0) {
            throw new IllegalArgumentException("array: " + array + " (expected: at least one axis)");
        }
        if (array.isClosed()) {
            throw new IllegalStateException(array + " is closed");
        }
        shareIfOpen(array);
        shareCaptured(body);
        forRange(0, array.shape()[0], i -> body.accept(array.select(0, i), i));
    }

    /** Splits a range in halves until a chunk is small enough, then runs it with the handler bound. */
    private static final class RangeTask extends RecursiveAction {
        private static final long serialVersionUID = 1L;

        private final long start;
        private final long end;
        private final long chunk;
        private final transient DataMemHandler handler;
        private final transient LongConsumer body;

        RangeTask(long start, long end, long chunk, DataMemHandler handler, LongConsumer body) {
            this.start = start;
            this.end = end;
            this.chunk = chunk;
            this.handler = handler;
            this.body = body;
        }

        @Override
        protected void compute() {
            long n = end - start;
            if (n <= chunk) {
                if (handler == null) {
                    ScopedValue.where(SHARE_NEW, Boolean.TRUE).run(this::loop);
                } else {
                    ScopedValue.where(SHARE_NEW, Boolean.TRUE).run(() -> DataMem.runWith(handler, this::loop));
                }
                return;
            }
            long mid = start + n / 2;
            invokeAll(new RangeTask(start, mid, chunk, handler, body), new RangeTask(mid, end, chunk, handler, body));
        }

        private void loop() {
            for (long i = start; i < end; i++) {
                body.accept(i);
            }
        }
    }
}
