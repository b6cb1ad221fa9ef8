package io.datamem.impl.provider;

import io.datamem.DataMemAllocator;
import io.datamem.impl.internal.adaptor.LimitingAdaptorImpl;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;

import java.util.function.UnaryOperator;

/** Provides {@code limit=BYTES}. */
public final class LimitProvider extends AdaptorProvider {

    /** Creates the provider (called by {@link java.util.ServiceLoader}). */
    public LimitProvider() {
        super("limit", "limit=BYTES (suffix k, m, g, t: powers of 1024)");
    }

    @Override
    UnaryOperator<DataMemAllocator> parse(ProviderTerm term, ProviderContext context) {
        String expected = "limit=BYTES, for example limit=1048576 or limit=64m";
        if (term.argument().isEmpty()) {
            throw malformed(term, context, expected);
        }
        long bytes;
        try {
            bytes = ProviderTerm.byteSize("byte count", term.argument(), Long.MAX_VALUE);
        } catch (IllegalArgumentException e) {
            throw malformed(term, context, expected);
        }
        return upstream -> LimitingAdaptorImpl.of(upstream, bytes);
    }
}
