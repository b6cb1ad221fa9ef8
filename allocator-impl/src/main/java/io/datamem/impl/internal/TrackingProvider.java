package io.datamem.impl.internal;

import io.datamem.DataMemAllocator;
import io.datamem.impl.TrackingAdaptor;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;

/** Provides {@code tracking} and {@code tracking=off|sampled|full}. */
public final class TrackingProvider extends AdaptorProvider {

    /** Creates the provider (called by {@link java.util.ServiceLoader}). */
    public TrackingProvider() {
        super("tracking", "tracking", "tracking=off|sampled|full");
    }

    @Override
    public DataMemAllocator createAdaptor(ProviderTerm term, DataMemAllocator upstream, ProviderContext context) {
        String level = term.argument();
        if (term.text().equals("tracking")) {
            return new TrackingAdaptor(upstream);
        }
        try {
            return TrackingAdaptor.builder(upstream).stackTraces(TrackingAdaptor.StackTraces.parse(level)).build();
        } catch (IllegalArgumentException e) {
            throw malformed(term, context, "tracking, or tracking=off, tracking=sampled or tracking=full");
        }
    }
}
