/**
 * Shareable memory with IPC handles: the leaf allocator {@code shared}
 * ({@link io.datamem.impl.shared.SharedMemoryAllocator}: each block a sealed memfd mapped shared;
 * {@code pool(shared)} carves small blocks out of such mappings), the handles that let another
 * process map the same bytes zero-copy ({@link io.datamem.impl.shared.IpcHandle},
 * {@link io.datamem.impl.shared.SharedMemory#handleOf}), their transports (an
 * {@link io.datamem.impl.shared.IpcSocket} passing the descriptor with {@code SCM_RIGHTS}, or
 * {@code pidfd_getfd} in {@link io.datamem.impl.shared.SharedMemory#open}), and the importer's
 * cached mappings ({@link io.datamem.impl.shared.ImportedMemory}). Linux only. Lifetime rules and
 * the wire format: {@code docs/ipc.md}.
 *
 * <p>Arguments are non-null unless stated; every class is thread-safe.
 */
package io.datamem.impl.shared;
