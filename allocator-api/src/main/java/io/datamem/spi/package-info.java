/**
 * The service-provider interface through which backends offer handlers by name.
 *
 * <p>A handler name is {@code LEAF} or {@code LEAF+ADAPTOR+ADAPTOR...}; a leaf may nest a whole
 * handler name in parentheses ({@code pool(aligned64)}). {@link io.datamem.spi.DataMemProvider}s
 * are discovered with {@link java.util.ServiceLoader}.
 *
 * <p>Null policy: no method accepts or returns null unless its documentation says so. Threading:
 * providers and {@link io.datamem.spi.ProviderTerm}s are immutable and thread-safe.
 */
package io.datamem.spi;
