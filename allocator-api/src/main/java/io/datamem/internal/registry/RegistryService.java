package io.datamem.internal.registry;

import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.internal.HandlerRegistry;
import io.datamem.spi.DataMemProvider;

import java.util.List;

/**
 * The {@link HandlerRegistry} service that the core package loads: {@link ProviderRegistry}
 * behind the interface the core can name.
 */
public final class RegistryService implements HandlerRegistry<DataMemHandler, DataMemProvider> {

    /** The instance {@link java.util.ServiceLoader} makes. */
    public RegistryService() {
    }

    @Override
    public DataMemHandler handler(String name) {
        return ProviderRegistry.handler(name);
    }

    @Override
    public DataMemHandler create(String name) {
        return ProviderRegistry.create(name);
    }

    @Override
    public List<DataMemProvider> providers() {
        return ProviderRegistry.providers();
    }

    @Override
    public void validateAdaptors(String handlerName, String adaptors) {
        ProviderRegistry.validateAdaptors(handlerName, adaptors);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <A> A wrap(String handlerName, String adaptors, A upstream) {
        return (A) ProviderRegistry.wrap(handlerName, adaptors, (DataMemAllocator) upstream);
    }

    @Override
    public String describe() {
        return ProviderRegistry.describe();
    }
}
