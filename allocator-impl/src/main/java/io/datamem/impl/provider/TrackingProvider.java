package io.datamem.impl.provider;

import io.datamem.DataMemAllocator;
import io.datamem.impl.internal.adaptor.TrackingAdaptorImpl;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;

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
        try {
            for (ProviderTerm.Option o : term.options("tracking")) {
                if (o.key().equals("sample") && o.hasValue() && sample == 0) {
                    sample = sampleInterval(o.value());
                } else if (!o.hasValue() && level == null) {
                    level = TrackingAdaptorImpl.StackTraces.parse(o.key());
                } else {
                    throw malformed(term, context, EXPECTED);
                }
            }
        } catch (IllegalArgumentException e) {
            if (e.getMessage() != null && e.getMessage().startsWith("handler name ")) {
                throw e;
            }
            throw malformed(term, context, EXPECTED);
        }
        if (sample != 0 && level != null && level != TrackingAdaptorImpl.StackTraces.SAMPLED) {
            throw term.refused(context.handlerName(), "sample=" + sample + " with " + level.name().toLowerCase(
                    java.util.Locale.ROOT) + ", which samples nothing", "sample=N only with sampled");
        }
        // no level and no sample=: the builder's default (-Ddatamem.tracking.stackTraces, else sampled)
        TrackingAdaptorImpl.StackTraces chosen = sample != 0 ? TrackingAdaptorImpl.StackTraces.SAMPLED : level;
        int interval = sample != 0 ? sample : TrackingAdaptorImpl.DEFAULT_SAMPLE_INTERVAL;
        return upstream -> {
            TrackingAdaptorImpl.Builder b = TrackingAdaptorImpl.builder(upstream).sampleInterval(interval);
            return (chosen == null ? b : b.stackTraces(chosen)).build();
        };
    }

    private static int sampleInterval(String text) {
        int n;
        try {
            n = Integer.parseInt(text.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("sample=" + text);
        }
        if (n < 1) {
            throw new IllegalArgumentException("sample=" + text);
        }
        return n;
    }
}
