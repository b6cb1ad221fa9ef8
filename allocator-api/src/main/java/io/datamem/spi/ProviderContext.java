package io.datamem.spi;

import io.datamem.DataMemAllocator;

/**
 * What a provider may use while it builds an allocator: the name of the handler being built, and
 * the resolution of nested handler names (the {@code aligned64} of {@code pool(aligned64)}).
 */
public interface ProviderContext {

    /**
     * The full name of the handler being built.
     *
     * @return for example {@code pool(aligned64)+stats}
     */
    String handlerName();

    /**
     * Builds a fresh allocator for a nested handler name, through the same providers.
     *
     * @param handlerName a handler name, for example {@code numa:local} or {@code aligned64+stats}
     * @return a new allocator (not shared with any cached handler)
     * @throws IllegalArgumentException if the name is malformed or unknown
     * @throws IllegalStateException    if a provider it needs is unavailable here
     */
    DataMemAllocator resolveAllocator(String handlerName);
}
