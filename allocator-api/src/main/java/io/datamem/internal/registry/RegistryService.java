package io.datamem.internal.registry;

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
    public String describe() {
        return ProviderRegistry.describe();
    }
}
