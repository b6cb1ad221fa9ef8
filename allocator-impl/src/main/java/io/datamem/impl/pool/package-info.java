/**
 * {@link io.datamem.impl.pool.PoolingAllocator}, what a pool of size classes in front of any
 * allocator tells and does once built (handler name {@code pool(UPSTREAM)}, options
 * {@code :max=SIZE,slab=SIZE,retain=SIZE}): its statistics, size classes, trim and close. Its
 * figures, in {@link io.datamem.impl.pool.PoolingAllocator#statistics()} and in memory snapshots, are
 * a {@link io.datamem.impl.snapshot.LayerSnapshot.Pool}.
 *
 * <p>Null policy: no method accepts or returns null unless documented. Threading: the pool is
 * thread-safe.
 */
package io.datamem.impl.pool;
