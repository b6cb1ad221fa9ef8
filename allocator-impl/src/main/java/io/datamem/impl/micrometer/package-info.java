/**
 * Micrometer metrics of datamem handlers: {@link io.datamem.impl.micrometer.DataMemMetrics}, a
 * {@code MeterBinder}, and {@link io.datamem.impl.micrometer.DataMemMeter}, the list of meters.
 *
 * <p>Micrometer ({@code io.micrometer:micrometer-core}) is an optional dependency of
 * {@code allocator-impl}: add it to use this package; nothing outside it loads a Micrometer class.
 * Null policy: no method accepts or returns null. Threading: thread-safe.
 */
package io.datamem.impl.micrometer;
