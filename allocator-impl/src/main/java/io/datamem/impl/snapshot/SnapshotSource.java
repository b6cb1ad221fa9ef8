package io.datamem.impl.snapshot;

import io.datamem.DataMemAllocator;

/**
 * A layer of a handler's stack that can describe itself in a {@link MemorySnapshot}: the pool, the
 * statistics, tracking and limiting adaptors, the huge-page and NUMA allocators implement it. An
 * allocator of your own may too; layers that do not are listed by type only
 * ({@link LayerSnapshot.Other}).
 *
 * <p>A snapshot must be cheap and must not slow the layer's allocations: read the layer's
 * structures under the locks and atomics it already has, and add nothing to its fast paths. What
 * each layer promises about a snapshot taken while other threads allocate is stated by its
 * record in {@link LayerSnapshot}, and summed up in {@link MemorySnapshot}.
 */
public interface SnapshotSource {

    /**
     * Describes this layer now.
     *
     * @return the layer's section of a snapshot
     */
    LayerSnapshot snapshot();

    /**
     * The allocator below this one for a layer that is not an {@link io.datamem.impl.AllocatorAdaptor}
     * but draws its memory from another allocator (a pool's upstream): the snapshot walks on into it.
     *
     * @return the allocator the snapshot describes next, or null (the default) if none
     */
    default DataMemAllocator snapshotUpstream() {
        return null;
    }
}
