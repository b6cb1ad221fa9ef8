package io.datamem.impl.provider;

import io.datamem.DataMemAllocator;
import io.datamem.impl.internal.adaptor.GuardAdaptorImpl;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;

import java.util.function.UnaryOperator;

/** Provides {@code guard} (throws on a violation) and {@code guard=record} (records only). */
public final class GuardProvider extends AdaptorProvider {

    /** Creates the provider (called by {@link java.util.ServiceLoader}). */
    public GuardProvider() {
        super("guard", "guard", "guard=record");
    }

    @Override
    UnaryOperator<DataMemAllocator> parse(ProviderTerm term, ProviderContext context) {
        return switch (term.text()) {
            case "guard", "guard=throw" -> GuardAdaptorImpl::of;
            case "guard=record" -> upstream -> GuardAdaptorImpl.builder(upstream)
                    .onViolation(GuardAdaptorImpl.OnViolation.RECORD).build();
            default -> throw malformed(term, context, "guard or guard=record");
        };
    }
}
