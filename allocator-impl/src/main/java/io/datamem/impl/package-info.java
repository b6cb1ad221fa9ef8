/**
 * CPU allocators and adaptors. Leaves: {@link io.datamem.impl.cpu.SystemAllocator},
 * {@link io.datamem.impl.cpu.AlignedAllocator}. Adaptors ({@link io.datamem.impl.AllocatorAdaptor}):
 * {@link io.datamem.impl.adaptor.StatisticsAdaptor}, {@link io.datamem.impl.adaptor.TrackingAdaptor},
 * {@link io.datamem.impl.adaptor.LimitingAdaptor}, {@link io.datamem.impl.adaptor.GuardAdaptor},
 * {@link io.datamem.impl.adaptor.LoggingAdaptor} (read and replayed by {@link io.datamem.impl.adaptor.AllocationLog}),
 * {@link io.datamem.impl.adaptor.FailureInjectingAdaptor}, {@link io.datamem.impl.adaptor.JfrEventAdaptor}; stacks of
 * them are built and searched with {@link io.datamem.impl.AllocatorStack}.
 * Placement: {@link io.datamem.impl.placement.HugePageAllocator} (with {@link io.datamem.impl.placement.HugePages}, what
 * the machine offers) and {@link io.datamem.impl.placement.NumaAllocator} (with
 * {@link io.datamem.impl.placement.NumaTopology}, {@link io.datamem.impl.placement.NumaPolicy},
 * {@link io.datamem.impl.placement.NumaTarget} and {@link io.datamem.impl.placement.NumaPlacement}). Pooling:
 * {@link io.datamem.impl.pool.PoolingAllocator}.
 *
 * <p>Allocators are leaves; adaptors wrap an upstream allocator given first to their constructor,
 * forward {@code free} with exactly the size they were given, and leave their accounting unchanged
 * when the upstream fails. Null policy: no method accepts or returns null unless documented.
 * Threading: every allocator and adaptor here is thread-safe.
 */
package io.datamem.impl;
