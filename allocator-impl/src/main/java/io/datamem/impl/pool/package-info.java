/**
 * {@link io.datamem.impl.pool.PoolingAllocator}, a pool of size classes in front of any allocator
 * (handler name {@code pool(UPSTREAM)}).
 *
 * <p>Null policy: no method accepts or returns null unless documented. Threading: the pool is
 * thread-safe.
 */
package io.datamem.impl.pool;
