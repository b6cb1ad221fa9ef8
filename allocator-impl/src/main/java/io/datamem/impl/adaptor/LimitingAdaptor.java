package io.datamem.impl.adaptor;

import io.datamem.AllocationRefusal;
import io.datamem.impl.AllocatorAdaptor;
import io.datamem.impl.snapshot.LayerSnapshot;
import io.datamem.impl.snapshot.SnapshotSource;

/**
 * Caps the bytes in use through an upstream allocator. A request that would take them past the cap
 * is refused: it returns {@code NULL} without calling the upstream, leaves the accounting unchanged,
 * and notes the refusal with {@link AllocationRefusal#limitExceeded} so that arrays and arenas throw
 * a {@link io.datamem.LimitExceededException} naming the cap, the bytes in use and the request.
 *
 * <p>The bytes are reserved before the upstream is called and released if it returns {@code NULL},
 * so concurrent requests never overshoot the cap together. Sizes are those callers pass
 * ({@code free(ptr, n)} releases {@code n}); a {@code realloc} reserves only its growth and releases
 * its shrinkage once it succeeded. For a refused {@code realloc} the request named is the new size
 * and the bytes in use exclude the block being resized.
 *
 * <p>The bytes in use never go negative, so the arithmetic holds for every cap up to
 * {@link Long#MAX_VALUE}: a {@code free} naming more bytes than are in use cannot be of a block
 * that came through this adaptor with that size, and is refused with an
 * {@link IllegalArgumentException} before the upstream is called (a {@code realloc}'s shrinkage
 * releases at most the bytes in use). A {@code free} or {@code realloc} the upstream refuses with an
 * exception changes nothing, except a {@link GuardViolationException} whose
 * {@link GuardViolationException#blockReleased()} is true: the guard below freed the block, so its
 * bytes are released. Thread-safe.
 *
 * <p>Built by the handler term {@code limit=BYTES} (for example
 * {@code AllocatorStack.on(upstream).with("limit=1g")}) and found with
 * {@code AllocatorStack.find(handler, LimitingAdaptor.class)}.
 */
public interface LimitingAdaptor extends AllocatorAdaptor, SnapshotSource {

    /**
     * The cap, the bytes in use (reserved) now and the requests refused for the cap so far: the
     * one read-out of this layer, the same section a {@link io.datamem.impl.snapshot.MemorySnapshot}
     * holds for it. The three figures are read one after the other, not at one instant.
     *
     * @return the layer's figures
     */
    @Override
    LayerSnapshot.Limit snapshot();
}
