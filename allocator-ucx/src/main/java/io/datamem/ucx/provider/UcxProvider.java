package io.datamem.ucx.provider;

import io.datamem.DataMemAllocator;
import io.datamem.spi.Availability;
import io.datamem.spi.DataMemProvider;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;
import io.datamem.ucx.UcxAllocator;
import io.datamem.ucx.UcxContext;
import io.datamem.ucx.internal.Ucp;

import java.util.List;

/**
 * Provides the leaf {@code ucx}: memory UCX allocates and registers, on the shared context.
 * {@link UcxAdaptorProvider} provides the adaptor {@code +ucx}.
 */
public final class UcxProvider implements DataMemProvider {

    /** The family of both terms. */
    public static final String FAMILY = "ucx";

    /** Creates the provider (called by {@link java.util.ServiceLoader}). */
    public UcxProvider() {
    }

    @Override
    public String name() {
        return FAMILY;
    }

    @Override
    public Role role() {
        return Role.LEAF;
    }

    @Override
    public List<String> names() {
        return List.of("ucx");
    }

    @Override
    public boolean accepts(ProviderTerm term) {
        return term.family().equals(FAMILY);
    }

    @Override
    public Availability availability() {
        return availabilityHere();
    }

    static Availability availabilityHere() {
        String why = Ucp.failure();
        return why == null ? Availability.AVAILABLE : Availability.unavailable(why);
    }

    @Override
    public void validate(ProviderTerm term, ProviderContext context) {
        checkPlain(term, context);
    }

    static void checkPlain(ProviderTerm term, ProviderContext context) {
        if (!term.text().equals(FAMILY)) {
            throw term.refused(context.handlerName(), "ucx takes no options or upstream", "ucx as a leaf, or"
                    + " LEAF+ucx to register every block of LEAF");
        }
    }

    @Override
    public DataMemAllocator createAllocator(ProviderTerm term, ProviderContext context) {
        checkPlain(term, context);
        Ucp.require();
        return UcxAllocator.of(UcxContext.shared());
    }
}
