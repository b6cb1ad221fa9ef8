/**
 * The CPU leaf allocator {@link io.datamem.impl.cpu.AlignedAllocator}: host memory aligned to a
 * power of two (handler names {@code aligned64}, {@code aligned:N}). The C library's {@code malloc}
 * family, as a leaf for composition, is the built-in {@code default_allocator}'s allocator,
 * {@link io.datamem.DataMem#builtinDefault() DataMem.builtinDefault().allocator()}.
 *
 * <p>Null policy: no method accepts or returns null unless documented. Threading: the allocator is
 * thread-safe.
 */
package io.datamem.impl.cpu;
