package io.datamem.impl.adaptor;

import io.datamem.impl.AllocatorAdaptor;

/**
 * Makes allocations fail on purpose, to test callers' error paths: the {@code N}th allocation only,
 * every {@code N}th, or each with a probability drawn from a seeded sequence. An
 * <em>allocation</em> here is a {@code malloc}, {@code calloc} or {@code realloc} call (a caller
 * mistake, which throws, is not counted); a failed one returns {@code NULL} without calling the
 * upstream, as exhaustion would, and a failed {@code realloc} leaves its block untouched.
 * {@code free} always goes through.
 *
 * <p>Deterministic: the decision for the {@code k}th allocation depends only on {@code k} (and the
 * seed), so a single-threaded program fails at the same calls on every run. Thread-safe.
 *
 * <p>Built by the handler term {@code faults=nth:N}, {@code faults=every:N} or
 * {@code faults=random:P[:SEED]} (for example {@code AllocatorStack.on(upstream).with("faults=nth:3")}) and found with
 * {@code AllocatorStack.find(handler, FailureInjectingAdaptor.class)}.
 */
public interface FailureInjectingAdaptor extends AllocatorAdaptor {

    /**
     * Allocations seen so far (failed or not).
     *
     * @return count
     */
    long attempts();

    /**
     * Allocations made to fail so far.
     *
     * @return count
     */
    long injectedFailures();
}
