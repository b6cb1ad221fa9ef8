package io.datamem.array;

/**
 * Teaches the JIT, once per process, that {@link ArrayElements#access()} meets every kind of live
 * memory: unshared (its owner goes through {@link ArrayMemory#ALL}, another thread through a dead
 * segment) and shared (every thread goes through the shared segment).
 *
 * <p>Why: the JIT compiles that test from its profile, which all arrays of the process share. A
 * program that first used only shared arrays (a parallel loop shares what it captures) leaves a
 * profile in which the unshared side never ran; the JIT then compiles a loop with that side left
 * out, as a check before the loop, and the first unshared array through the loop fails the check.
 * The JIT recompiles that loop without hoisting any check out of it, for good: a dot product after
 * such a history took 2.1-2.4 ms instead of 0.5 (docs/decisions.md, "Both kinds of memory in the
 * accessors' profile"). With both sides in the profile from the start, the JIT keeps both and
 * picks per loop entry.
 */
final class AccessProfile {

    /** Calls of {@code access()} on each kind: enough to be counted once the profile exists. */
    private static final int CALLS = 20_000;

    private AccessProfile() {
    }

    /**
     * Runs {@code access()} in turn on unshared memory of this thread, unshared memory of another
     * thread and shared memory; no memory is read or written. (Without the second, the owner
     * comparison's failing side is left out of a loop run by workers on shared memory, and the
     * loop's check of it failed there: a parallel dot product at 7-8 ms instead of 0.5 in 2 of 3
     * JVMs.)
     */
    static void prime() {
        long[] shape = {1};
        long[] strides = {Double.BYTES};
        NDArray unshared = new NDArray(ArrayMemory.forProfile(Thread.currentThread()), DType.FLOAT64, true, 0, shape,
                strides);
        NDArray othersUnshared = new NDArray(ArrayMemory.forProfile(Thread.ofPlatform().unstarted(() -> { })),
                DType.FLOAT64, true, 0, shape, strides);
        NDArray shared = new NDArray(ArrayMemory.forProfile(null), DType.FLOAT64, true, 0, shape, strides);
        int all = 0;
        for (int i = 0; i < CALLS; i++) {
            all += unshared.access() == ArrayMemory.ALL ? 1 : 0;
            all += othersUnshared.access() == ArrayMemory.ALL ? 1 : 0;
            all += shared.access() == ArrayMemory.ALL ? 1 : 0;
        }
        if (all != CALLS) {
            throw new AssertionError("access() chose ALL " + all + " times in " + 3 * CALLS + " calls");
        }
    }
}
