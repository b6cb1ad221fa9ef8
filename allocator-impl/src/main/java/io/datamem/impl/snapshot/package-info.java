/**
 * Memory snapshots: what a handler's layers hold at about one instant, as records and as JSON.
 * <ul>
 *   <li>{@link io.datamem.impl.snapshot.MemorySnapshot} takes one ({@code take(handlers...)}),
 *       summarises it, and writes and reads its JSON (schema {@code datamem-snapshot}, version 1,
 *       documented in {@code docs/observability.md});</li>
 *   <li>{@link io.datamem.impl.snapshot.LayerSnapshot} is one layer's section: statistics, tracked
 *       live blocks ({@link io.datamem.impl.snapshot.LiveBlock}), a limit, a pool's size classes,
 *       runs and slabs, the pages of mapped blocks;</li>
 *   <li>{@link io.datamem.impl.snapshot.SnapshotSource} is what a layer implements to describe
 *       itself: the pool, the statistics, tracking and limiting adaptors, the huge-page and NUMA
 *       allocators do;</li>
 *   <li>allocator-impl's {@code io.datamem.internal.FailureDiagnostics} service (not exported) puts a summary into the message of an
 *       allocation failure and, with {@code -Ddatamem.snapshot.onFailure=DIR}, writes the whole
 *       snapshot to a file the message names;</li>
 *   <li>{@link io.datamem.impl.snapshot.MemorySnapshots} takes them from outside the JVM: the MBean
 *       {@code io.datamem:type=MemorySnapshots} ({@link io.datamem.impl.snapshot.MemorySnapshotsMXBean})
 *       over the live handlers, registered with the first handler built unless
 *       {@code -Ddatamem.jmx=false}; {@code datamem snapshot --pid PID} calls it.</li>
 * </ul>
 * Dependency direction: the layers' packages ({@code impl.adaptor}, {@code impl.pool},
 * {@code impl.placement}) implement {@code SnapshotSource}; this package imports none of them, only
 * {@link io.datamem.impl.AllocatorStack} to walk a stack, and allocator-api's
 * {@code io.datamem.internal.LiveHandlers} to find the live handlers.
 *
 * <p>Null policy: no method accepts or returns null unless documented. Threading: the records are
 * immutable; taking a snapshot is thread-safe and runs alongside allocations.
 */
package io.datamem.impl.snapshot;
