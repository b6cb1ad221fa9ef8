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
     * Checks adaptor terms as the terms after a handler name's leaf, without building anything.
     *
     * @param handlerName the name of the handler being built, for messages
     * @param adaptors    adaptor terms joined with {@code +}
     * @throws IllegalArgumentException if a term is malformed, unknown or not an adaptor
     * @throws IllegalStateException    if a provider it needs is unavailable here
     */
    void validateAdaptors(String handlerName, String adaptors);

    /**
     * Wraps an allocator in the adaptors that terms name, as the terms after a handler name's leaf
     * would ({@code AllocatorStack} builds stacks with it).
     *
     * @param handlerName the name of the handler being built
     * @param adaptors    adaptor terms joined with {@code +}
     * @param upstream    the allocator to wrap (a {@code DataMemAllocator})
     * @param <A>         the allocator type
     * @return the outermost adaptor
     * @throws IllegalArgumentException if a term is malformed, unknown or not an adaptor
     * @throws IllegalStateException    if a provider it needs is unavailable, or an adaptor cannot
     *                                  be made here
     * @throws ClassCastException       if {@code upstream} is not a {@code DataMemAllocator}
     */
    <A> A wrap(String handlerName, String adaptors, A upstream);

    /**
     * Every name form the providers accept, with availability, in one line.
     *
     * @return the description
     */
    String describe();
}
