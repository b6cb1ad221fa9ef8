package io.datamem.ucx.provider;

import io.datamem.DataMemAllocator;
import io.datamem.spi.Availability;
import io.datamem.spi.DataMemProvider;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;
import io.datamem.ucx.UcxContext;
import io.datamem.ucx.internal.Ucp;
import io.datamem.ucx.UcxRegisteringAdaptor;

import java.util.List;

/** Provides the adaptor {@code +ucx}: every block of the upstream registered with the shared context. */
public final class UcxAdaptorProvider implements DataMemProvider {

    /** Creates the provider (called by {@link java.util.ServiceLoader}). */
    public UcxAdaptorProvider() {
    }

    @Override
    public String name() {
        return UcxProvider.FAMILY;
    }

    @Override
    public Role role() {
        return Role.ADAPTOR;
    }

    @Override
    public List<String> names() {
        return List.of("ucx");
    }

    @Override
    public boolean accepts(ProviderTerm term) {
        return term.family().equals(UcxProvider.FAMILY);
    }

    @Override
    public Availability availability() {
        return UcxProvider.availabilityHere();
    }

    @Override
    public void validate(ProviderTerm term, ProviderContext context) {
        UcxProvider.checkPlain(term, context);
    }

    @Override
    public DataMemAllocator createAdaptor(ProviderTerm term, DataMemAllocator upstream, ProviderContext context) {
        UcxProvider.checkPlain(term, context);
        Ucp.require();
        return UcxRegisteringAdaptor.of(upstream, UcxContext.shared());
    }
}
