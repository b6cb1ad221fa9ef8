package io.datamem.impl.provider;

import io.datamem.DataMemAllocator;
import io.datamem.impl.internal.adaptor.StatisticsAdaptorImpl;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;

import java.util.function.UnaryOperator;

/** Provides the {@code stats} adaptor. */
public final class StatsProvider extends AdaptorProvider {

    /** Creates the provider (called by {@link java.util.ServiceLoader}). */
    public StatsProvider() {
        super("stats", "stats");
    }

    @Override
    UnaryOperator<DataMemAllocator> parse(ProviderTerm term, ProviderContext context) {
        if (!term.text().equals("stats")) {
            throw malformed(term, context, "stats, without arguments");
        }
        return StatisticsAdaptorImpl::of;
    }
}
