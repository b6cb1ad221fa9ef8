/**
 * Not exported: the service that registers the memory-snapshot MBean
 * ({@link io.datamem.impl.snapshot.MemorySnapshots}) when the JVM builds its first handler
 * ({@code io.datamem.internal.HandlerWatcher}, which allocator-api calls). It imports
 * {@code impl.snapshot} only.
 */
package io.datamem.impl.jmx;
