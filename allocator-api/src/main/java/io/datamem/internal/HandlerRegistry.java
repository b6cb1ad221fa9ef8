package io.datamem.internal;

import java.util.List;

/**
 * The provider registry as {@code io.datamem.DataMem} and {@code io.datamem.spi} see it: handler
 * names resolved to handlers, and the providers found. The registry
 * ({@code io.datamem.internal.registry}) sits above the SPI it loads; the core package below it
 * reaches it through this interface, found by {@link java.util.ServiceLoader} (see
 * {@link Registries}), so that the core depends on nothing above it. The type parameters keep
 * this package free of datamem's types: {@code H} is {@code DataMemHandler}, {@code P}
 * {@code DataMemProvider}.
 *
 * @param <H> the handler type
 * @param <P> the provider type
 */
public interface HandlerRegistry<H, P> {

    /**
     * The handler with a name, cached: {@code io.datamem.DataMem.handler(String)}.
     *
     * @param name the handler name
     * @return the handler
     * @throws IllegalArgumentException if the name is malformed, too long or unknown
     * @throws IllegalStateException    if a provider it needs is unavailable or the handler cannot
     *                                  be made here
     */
    H handler(String name);

    /**
     * A new handler with a name: {@code io.datamem.DataMem.createHandler(String)}.
     *
     * @param name the handler name
     * @return the handler
     * @throws IllegalArgumentException if the name is malformed, too long or unknown
     * @throws IllegalStateException    if a provider it needs is unavailable or the handler cannot
     *                                  be made here
     */
    H create(String name);

    /**
     * The providers found, the built-in one first.
     *
     * @return the providers
     * @throws java.util.ServiceConfigurationError if a provider cannot be instantiated
     */
    List<P> providers();

    /**
     * Every name form the providers accept, with availability, in one line.
     *
     * @return the description
     */
    String describe();
}
