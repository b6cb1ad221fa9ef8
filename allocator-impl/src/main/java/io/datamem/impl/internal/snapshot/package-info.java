/**
 * Not exported: the services allocator-impl gives allocator-api's snapshot hooks. They describe the
 * handlers in a snapshot when an allocation fails ({@link io.datamem.impl.internal.snapshot.FailureSnapshots},
 * for {@code io.datamem.internal.FailureDiagnostics}) and register the memory-snapshot MBean
 * ({@link io.datamem.impl.snapshot.MemorySnapshots}) when the JVM builds its first handler
 * ({@link io.datamem.impl.internal.snapshot.SnapshotMBeanWatcher}, for
 * {@code io.datamem.internal.HandlerWatcher}). They import {@code impl.snapshot} only.
 */
package io.datamem.impl.internal.snapshot;
