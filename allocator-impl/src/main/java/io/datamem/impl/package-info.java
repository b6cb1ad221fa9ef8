/**
 * CPU allocators and adaptors: {@link io.datamem.impl.SystemAllocator},
 * {@link io.datamem.impl.AlignedAllocator}, {@link io.datamem.impl.StatisticsAdaptor}.
 * Placement: {@link io.datamem.impl.HugePageAllocator} (with {@link io.datamem.impl.HugePages}, what
 * the machine offers) and {@link io.datamem.impl.NumaAllocator} (with
 * {@link io.datamem.impl.NumaTopology}, {@link io.datamem.impl.NumaPolicy},
 * {@link io.datamem.impl.NumaTarget} and {@link io.datamem.impl.NumaPlacement}).
 *
 * <p>Allocators are leaves; adaptors wrap an upstream allocator given first to their constructor,
 * forward {@code free} with exactly the size they were given, and leave their accounting unchanged
 * when the upstream fails. Null policy: no method accepts or returns null unless documented.
 * Threading: every allocator and adaptor here is thread-safe.
 */
package io.datamem.impl;
