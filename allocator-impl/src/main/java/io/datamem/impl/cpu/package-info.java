/**
 * The CPU leaf allocators: {@link io.datamem.impl.cpu.SystemAllocator}, the C library's
 * {@code malloc} family as a leaf for composition, and {@link io.datamem.impl.cpu.AlignedAllocator},
 * host memory aligned to a power of two (handler names {@code aligned64}, {@code aligned:N}).
 *
 * <p>Null policy: no method accepts or returns null unless documented. Threading: both allocators
 * are thread-safe.
 */
package io.datamem.impl.cpu;
