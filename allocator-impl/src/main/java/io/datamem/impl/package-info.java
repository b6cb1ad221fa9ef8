/**
 * CPU allocators and adaptors: {@link io.datamem.impl.SystemAllocator},
 * {@link io.datamem.impl.AlignedAllocator}, {@link io.datamem.impl.StatisticsAdaptor}.
 *
 * <p>Allocators are leaves; adaptors wrap an upstream allocator given first to their constructor,
 * forward {@code free} with exactly the size they were given, and leave their accounting unchanged
 * when the upstream fails. Null policy: no method accepts or returns null unless documented.
 * Threading: every allocator and adaptor here is thread-safe.
 */
package io.datamem.impl;
