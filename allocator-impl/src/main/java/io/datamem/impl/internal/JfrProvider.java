package io.datamem.impl.internal;

import io.datamem.DataMemAllocator;
import io.datamem.impl.JfrEventAdaptor;
import io.datamem.spi.Availability;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;

/** Provides {@code jfr}: JDK Flight Recorder events for every operation. */
public final class JfrProvider extends AdaptorProvider {

    /** Creates the provider (called by {@link java.util.ServiceLoader}). */
    public JfrProvider() {
        super("jfr", "jfr");
    }

    @Override
    public Availability availability() {
        return OptionalModules.JFR.missing().map(Availability::unavailable).orElse(Availability.AVAILABLE);
    }

    @Override
    public DataMemAllocator createAdaptor(ProviderTerm term, DataMemAllocator upstream, ProviderContext context) {
        if (!term.text().equals("jfr")) {
            throw malformed(term, context, "jfr, without arguments");
        }
        return new JfrEventAdaptor(upstream, context.handlerName());
    }
}
