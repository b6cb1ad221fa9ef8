package io.datamem.impl.provider;

import io.datamem.DataMemAllocator;
import io.datamem.impl.internal.adaptor.JfrEventAdaptor;
import io.datamem.impl.os.OptionalModules;
import io.datamem.spi.Availability;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;

import java.util.function.UnaryOperator;

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
    UnaryOperator<DataMemAllocator> parse(ProviderTerm term, ProviderContext context) {
        if (!term.text().equals("jfr")) {
            throw malformed(term, context, "jfr, without arguments");
        }
        String handlerName = context.handlerName();
        return upstream -> JfrEventAdaptor.of(upstream, handlerName);
    }
}
