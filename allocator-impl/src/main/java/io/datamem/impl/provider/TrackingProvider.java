package io.datamem.impl.provider;

import io.datamem.DataMemAllocator;
import io.datamem.impl.internal.adaptor.TrackingAdaptorImpl;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;

import java.util.Locale;
import java.util.function.UnaryOperator;

/**
 * Provides {@code tracking} and {@code tracking=off|sampled|full}, with the option
 * {@code sample=N} (one stack trace in about N allocations, 128 by default), which implies
 * {@code sampled}: {@code tracking:sampled,sample=16}.
 */
public final class TrackingProvider extends AdaptorProvider {

    private static final String EXPECTED = "tracking, or tracking=off, tracking=sampled or tracking=full;"
            + " sample=N (N >= 1) only with sampled, as in tracking:sampled,sample=16";

    /** Creates the provider (called by {@link java.util.ServiceLoader}). */
    public TrackingProvider() {
        super("tracking", "tracking", "tracking=off|sampled|full", "tracking:sampled,sample=N");
    }

    @Override
    UnaryOperator<DataMemAllocator> parse(ProviderTerm term, ProviderContext context) {
        if (term.text().equals("tracking")) {
            return TrackingAdaptorImpl::of;
        }
        if (term.nested() != null) {
            throw malformed(term, context, EXPECTED);
        }
        TrackingAdaptorImpl.StackTraces level = null;
        int sample = 0;
        for (ProviderTerm.Option o : options(term, context, "tracking", EXPECTED)) {
            if (o.key().equals("sample") && o.hasValue() && sample == 0) {
                sample = sampleInterval(o.value());
                if (sample < 1) {
                    throw malformed(term, context, EXPECTED);
                }
            } else if (!o.hasValue() && level == null) {
                try {
                    level = TrackingAdaptorImpl.StackTraces.parse(o.key());
                } catch (IllegalArgumentException e) {
                    throw malformed(term, context, EXPECTED);
                }
            } else {
                throw malformed(term, context, EXPECTED);
            }
        }
        if (sample != 0 && level != null && level != TrackingAdaptorImpl.StackTraces.SAMPLED) {
            throw term.refused(context.handlerName(), "sample=" + sample + " with "
                    + level.name().toLowerCase(Locale.ROOT) + ", which samples nothing", "sample=N only with sampled");
        }
        // no level and no sample=: the builder's default (-Ddatamem.tracking.stackTraces, else sampled)
        TrackingAdaptorImpl.StackTraces chosen = sample != 0 ? TrackingAdaptorImpl.StackTraces.SAMPLED : level;
        int interval = sample != 0 ? sample : TrackingAdaptorImpl.DEFAULT_SAMPLE_INTERVAL;
        return upstream -> {
            TrackingAdaptorImpl.Builder b = TrackingAdaptorImpl.builder(upstream).sampleInterval(interval);
            return (chosen == null ? b : b.stackTraces(chosen)).build();
        };
    }

    /** A positive decimal count, or 0 if the text is not one. */
    private static int sampleInterval(String text) {
        try {
            return Math.max(Integer.parseInt(text.strip()), 0);
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
