package io.datamem.impl.internal;

import io.datamem.DataMemAllocator;
import io.datamem.impl.StatisticsAdaptor;
import io.datamem.spi.DataMemProvider;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;

import java.util.List;

/** Provides the {@code stats} adaptor. */
public final class StatsProvider implements DataMemProvider {

    /** Creates the provider (called by {@link java.util.ServiceLoader}). */
    public StatsProvider() {
    }

    @Override
    public String name() {
        return "stats";
    }

    @Override
    public Role role() {
        return Role.ADAPTOR;
    }

    @Override
    public List<String> names() {
        return List.of("stats");
    }

    @Override
    public boolean accepts(ProviderTerm term) {
        return term.family().equals("stats");
    }

    @Override
    public DataMemAllocator createAdaptor(ProviderTerm term, DataMemAllocator upstream, ProviderContext context) {
        if (!term.text().equals("stats")) {
            throw new IllegalArgumentException("handler name '" + context.handlerName() + "': '" + term
                    + "' (expected: stats, without arguments)");
        }
        return new StatisticsAdaptor(upstream);
    }
}
