/**
 * The Apache Arrow C Data Interface and C Device Data Interface for datamem arrays: export an
 * {@link io.datamem.array.NDArray} as an {@code ArrowSchema} and an {@code ArrowArray} (or
 * {@code ArrowDeviceArray}) that any Arrow implementation reads without copying, and import such
 * structs as arrays. See {@link io.datamem.arrow.ArrowCData}.
 *
 * <p>Arguments are never null (a {@link java.lang.NullPointerException} otherwise). Every method is
 * thread-safe; the release callbacks of exported structs may be called from any thread, native
 * threads included.
 */
package io.datamem.arrow;
