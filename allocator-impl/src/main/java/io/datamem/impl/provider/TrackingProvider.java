package io.datamem.impl.provider;

import io.datamem.DataMemAllocator;
import io.datamem.impl.internal.adaptor.TrackingAdaptorImpl;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;

import java.util.function.UnaryOperator;

/** Provides {@code tracking} and {@code tracking=off|sampled|full}. */
public final class TrackingProvider extends AdaptorProvider {

    /** Creates the provider (called by {@link java.util.ServiceLoader}). */
    public TrackingProvider() {
        super("tracking", "tracking", "tracking=off|sampled|full");
    }

    @Override
    UnaryOperator<DataMemAllocator> parse(ProviderTerm term, ProviderContext context) {
        if (term.text().equals("tracking")) {
            return TrackingAdaptorImpl::of;
        }
        TrackingAdaptorImpl.StackTraces level;
        try {
            level = TrackingAdaptorImpl.StackTraces.parse(term.argument());
        } catch (IllegalArgumentException e) {
            throw malformed(term, context, "tracking, or tracking=off, tracking=sampled or tracking=full");
        }
        return upstream -> TrackingAdaptorImpl.builder(upstream).stackTraces(level).build();
    }
}
