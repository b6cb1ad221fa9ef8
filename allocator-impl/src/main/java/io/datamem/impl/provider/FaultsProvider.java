package io.datamem.impl.provider;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.impl.internal.adaptor.FailureInjectingAdaptorImpl;
import io.datamem.internal.Messages;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;

import java.util.function.UnaryOperator;

/** Provides {@code faults=nth:N}, {@code faults=every:N}, {@code faults=random:P[:SEED]}. */
public final class FaultsProvider extends AdaptorProvider {

    /** Creates the provider (called by {@link java.util.ServiceLoader}). */
    public FaultsProvider() {
        super("faults", "faults=nth:N|every:N|random:P[:SEED]");
    }

    @Override
    UnaryOperator<DataMemAllocator> parse(ProviderTerm term, ProviderContext context) {
        if (!term.text().startsWith("faults=")) {
            throw malformed(term, context, "faults=nth:N, faults=every:N or faults=random:P[:SEED]");
        }
        String spec = term.argument();
        try {
            FailureInjectingAdaptorImpl.of(DataMem.builtinDefault().allocator(), spec); // a plain object: checks the spec
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("handler name " + Messages.quote(context.handlerName()) + ": "
                    + e.getMessage(), e);
        }
        return upstream -> FailureInjectingAdaptorImpl.of(upstream, spec);
    }
}
