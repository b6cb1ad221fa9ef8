/**
 * datamem memory for code bound with JNA, and JNA's memory for datamem, without copying.
 *
 * <pre>{@code
 * try (NDArray x = NDArray.zeros(DType.FLOAT64, 1000);
 *      JnaPointer p = JnaPointer.of(x)) {          // x cannot be closed or resized until p is
 *     myLibrary.scale(p.pointer(), 1000, 2.0);     // a JNA-bound C function works on x in place
 * }
 * NDArray y = JnaArrays.adopt(new Memory(8000), DType.FLOAT64, 1000);   // y.close() frees it
 * }</pre>
 *
 * <p>Arguments are never null (a {@link java.lang.NullPointerException} otherwise). Every method is
 * thread-safe; a {@link io.datamem.jna.JnaPointer} may be closed from any thread.
 */
package io.datamem.jna;
