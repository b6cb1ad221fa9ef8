package io.datamem.impl.internal;

import io.datamem.DataMemAllocator;
import io.datamem.impl.FailureInjectingAdaptor;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;

/** Provides {@code faults=nth:N}, {@code faults=every:N}, {@code faults=random:P[:SEED]}. */
public final class FaultsProvider extends AdaptorProvider {

    /** Creates the provider (called by {@link java.util.ServiceLoader}). */
    public FaultsProvider() {
        super("faults", "faults=nth:N|every:N|random:P[:SEED]");
    }

    @Override
    public DataMemAllocator createAdaptor(ProviderTerm term, DataMemAllocator upstream, ProviderContext context) {
        if (!term.text().startsWith("faults=")) {
            throw malformed(term, context, "faults=nth:N, faults=every:N or faults=random:P[:SEED]");
        }
        try {
            return FailureInjectingAdaptor.of(upstream, term.argument());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("handler name '" + context.handlerName() + "': " + e.getMessage(), e);
        }
    }
}
