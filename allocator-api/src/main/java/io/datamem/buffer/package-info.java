/**
 * The buffer protocol with the extended buffer protocol draft's device extension: request
 * {@link io.datamem.buffer.BufferFlags}, {@link io.datamem.buffer.BufferExporter} (implemented by
 * {@link io.datamem.array.NDArray}), {@link io.datamem.buffer.BufferView} and its native
 * {@code Py_buffer} form, {@link io.datamem.buffer.BufferRequest} (CPython's request rules, for any
 * exporter), and the device information of device memory ({@link io.datamem.buffer.DeviceInfo}).
 * Format strings are read and written by {@code io.datamem.format}, which this package does not
 * depend on: a view carries its format as a string.
 *
 * <p>Null policy: no method accepts or returns null unless its documentation says so (the
 * {@code Py_buffer} fields that CPython leaves NULL are null in Java). Threading: everything here
 * is immutable or thread-safe, apart from the builders ({@code BufferView.Builder},
 * {@code BufferRequest}), made for one request on one thread; a view may be released from any
 * thread.
 */
package io.datamem.buffer;
