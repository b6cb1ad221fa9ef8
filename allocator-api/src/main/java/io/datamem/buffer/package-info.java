/**
 * The buffer protocol with the extended buffer protocol draft's device extension: request
 * {@link io.datamem.buffer.BufferFlags}, {@link io.datamem.buffer.BufferExporter} (implemented by
 * {@link io.datamem.array.NDArray}), {@link io.datamem.buffer.BufferView} and its native
 * {@code Py_buffer} form, {@link io.datamem.buffer.BufferRequest} (CPython's request rules, for any
 * exporter), and PEP 3118 format strings with custom dtypes
 * ({@link io.datamem.buffer.FormatString}, {@link io.datamem.buffer.CustomDTypes}).
 *
 * <p>Null policy: no method accepts or returns null unless its documentation says so (the
 * {@code Py_buffer} fields that CPython leaves NULL are null in Java). Threading: everything here
 * is immutable or thread-safe, apart from the builders ({@code BufferView.Builder},
 * {@code BufferRequest}), made for one request on one thread; a view may be released from any
 * thread.
 */
package io.datamem.buffer;
