package io.datamem.impl.internal;

import io.datamem.DataMemAllocator;
import io.datamem.impl.GuardAdaptor;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;

/** Provides {@code guard} (throws on a violation) and {@code guard=record} (records only). */
public final class GuardProvider extends AdaptorProvider {

    /** Creates the provider (called by {@link java.util.ServiceLoader}). */
    public GuardProvider() {
        super("guard", "guard", "guard=record");
    }

    @Override
    public DataMemAllocator createAdaptor(ProviderTerm term, DataMemAllocator upstream, ProviderContext context) {
        return switch (term.text()) {
            case "guard", "guard=throw" -> new GuardAdaptor(upstream);
            case "guard=record" -> GuardAdaptor.builder(upstream).onViolation(GuardAdaptor.OnViolation.RECORD).build();
            default -> throw malformed(term, context, "guard or guard=record");
        };
    }
}
