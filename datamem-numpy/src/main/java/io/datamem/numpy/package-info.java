/**
 * NEP 49 handlers across the C boundary, both ways. {@link io.datamem.numpy.PyDataMem#export}
 * gives a datamem handler to C as NumPy's {@code PyDataMem_Handler} (an
 * {@link io.datamem.numpy.ExportedHandler}, for {@code PyDataMem_SetHandler}), and
 * {@link io.datamem.numpy.PyDataMem#importHandler} makes a datamem handler of a native one.
 *
 * <p>Null policy: no method accepts or returns null. Threading: every type is thread-safe or
 * immutable; exported functions may be called from any native thread.
 */
package io.datamem.numpy;
