package io.datamem.impl.internal.pool;

import io.datamem.DataMemAllocator;
import io.datamem.spi.DataMemProvider;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;

import java.util.List;

/**
 * Provides {@code pool(UPSTREAM)} and {@code pool(UPSTREAM):max=SIZE,slab=SIZE,retain=SIZE}, where
 * UPSTREAM is any handler name.
 */
public final class PoolProvider implements DataMemProvider {

    /** Creates the provider (called by {@link java.util.ServiceLoader}). */
    public PoolProvider() {
    }

    @Override
    public String name() {
        return "pool";
    }

    @Override
    public Role role() {
        return Role.LEAF;
    }

    @Override
    public List<String> names() {
        return List.of("pool(UPSTREAM)", "pool(UPSTREAM):max=16m,slab=64k,retain=1g");
    }

    @Override
    public boolean accepts(ProviderTerm term) {
        return term.family().equals("pool");
    }

    @Override
    public void validate(ProviderTerm term, ProviderContext context) {
        options(term, context);
    }

    @Override
    public DataMemAllocator createAllocator(ProviderTerm term, ProviderContext context) {
        PoolOptions options = options(term, context);
        return PoolingAllocatorImpl.of(context.resolveAllocator(term.nested()), options);
    }

    private static PoolOptions options(ProviderTerm term, ProviderContext context) {
        return PoolOptions.parse(term, context.handlerName());
    }
}
