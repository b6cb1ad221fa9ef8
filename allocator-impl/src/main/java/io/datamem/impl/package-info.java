/**
 * CPU allocators and adaptors. Leaves: {@link io.datamem.impl.SystemAllocator},
 * {@link io.datamem.impl.AlignedAllocator}. Adaptors ({@link io.datamem.impl.AllocatorAdaptor}):
 * {@link io.datamem.impl.StatisticsAdaptor}, {@link io.datamem.impl.TrackingAdaptor},
 * {@link io.datamem.impl.LimitingAdaptor}, {@link io.datamem.impl.GuardAdaptor},
 * {@link io.datamem.impl.LoggingAdaptor} (read and replayed by {@link io.datamem.impl.AllocationLog}),
 * {@link io.datamem.impl.FailureInjectingAdaptor}, {@link io.datamem.impl.JfrEventAdaptor}; stacks of
 * them are built and searched with {@link io.datamem.impl.AllocatorStack}.
 * Placement: {@link io.datamem.impl.HugePageAllocator} (with {@link io.datamem.impl.HugePages}, what
 * the machine offers) and {@link io.datamem.impl.NumaAllocator} (with
 * {@link io.datamem.impl.NumaTopology}, {@link io.datamem.impl.NumaPolicy},
 * {@link io.datamem.impl.NumaTarget} and {@link io.datamem.impl.NumaPlacement}). Pooling:
 * {@link io.datamem.impl.PoolingAllocator}.
 *
 * <p>Allocators are leaves; adaptors wrap an upstream allocator given first to their constructor,
 * forward {@code free} with exactly the size they were given, and leave their accounting unchanged
 * when the upstream fails. Null policy: no method accepts or returns null unless documented.
 * Threading: every allocator and adaptor here is thread-safe.
 */
package io.datamem.impl;
