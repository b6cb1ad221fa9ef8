package io.datamem.impl.provider;

import io.datamem.DataMemAllocator;
import io.datamem.impl.pool.PoolingAllocator;
import io.datamem.internal.Messages;
import io.datamem.spi.DataMemProvider;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;
import io.datamem.spi.ProviderTerm.Option;

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
        PoolingAllocator.Options options = options(term, context);
        return PoolingAllocator.of(context.resolveAllocator(term.nested()), options);
    }

    private static PoolingAllocator.Options options(ProviderTerm term, ProviderContext context) {
        String nested = term.nested();
        if (nested == null || nested.isEmpty() || !term.text().startsWith("pool(")) {
            throw new IllegalArgumentException("handler name " + Messages.quote(context.handlerName()) + ": "
                    + Messages.quote(term.text()) + " (expected: pool(UPSTREAM), for example pool(aligned64))");
        }
        PoolingAllocator.Options options = PoolingAllocator.Options.DEFAULTS;
        List<Option> items;
        try {
            items = term.options("pool");
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("handler name " + Messages.quote(context.handlerName()) + ": "
                    + e.getMessage(), e);
        }
        for (Option o : items) {
            String value = o.value();
            options = switch (o.key()) {
                case "max" -> options.withMaxPooledByteSize(ProviderTerm.byteSize("max", value, 1L << 40));
                case "slab" -> options.withSlabByteSize(ProviderTerm.byteSize("slab", value, 1L << 40));
                case "retain" -> options.withMaxRetainedByteSize(ProviderTerm.byteSize("retain", value, 1L << 40));
                default -> throw new IllegalArgumentException("handler name " + Messages.quote(context.handlerName())
                        + ": pool option " + Messages.quote(o.toString())
                        + " (expected: max=SIZE, slab=SIZE or retain=SIZE)");
            };
        }
        return options;
    }
}
