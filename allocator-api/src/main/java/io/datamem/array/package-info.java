/**
 * Arrays over handler-allocated native memory: {@link io.datamem.array.NDArray} and its element
 * types, {@link io.datamem.array.DType}; {@link io.datamem.array.Parallel}, parallel loops that keep
 * the caller's handler.
 *
 * <p>Every owning array captures {@link io.datamem.DataMem#current()} at creation and frees
 * through it. Memory is exposed only as bounds- and lifetime-checked
 * {@link java.lang.foreign.MemorySegment}s.
 *
 * <p>Null policy: no method accepts or returns null unless its documentation says so. Threading:
 * arrays may be read and written from several threads; {@code DType} and {@code Slice} are
 * immutable.
 */
package io.datamem.array;
