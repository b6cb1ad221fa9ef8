package io.datamem.internal.registry;

import io.datamem.DataMemAllocator;
import io.datamem.array.Workspace;
import io.datamem.spi.DataMemProvider;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;

import java.util.List;

/**
 * Provides {@code workspace(UPSTREAM)} and {@code workspace(UPSTREAM):initial=SIZE,growth=FACTOR}
 * (see {@link Workspace}), where UPSTREAM is any handler name.
 */
public final class WorkspaceProvider implements DataMemProvider {

    /** Creates the provider (called by {@link java.util.ServiceLoader}). */
    public WorkspaceProvider() {
    }

    @Override
    public String name() {
        return "workspace";
    }

    @Override
    public Role role() {
        return Role.LEAF;
    }

    @Override
    public List<String> names() {
        return List.of("workspace(UPSTREAM)", "workspace(UPSTREAM):initial=1m,growth=1.25");
    }

    @Override
    public boolean accepts(ProviderTerm term) {
        return term.family().equals("workspace");
    }

    @Override
    public void validate(ProviderTerm term, ProviderContext context) {
        Workspace.Options.parse(term, context.handlerName());
    }

    @Override
    public DataMemAllocator createAllocator(ProviderTerm term, ProviderContext context) {
        Workspace.Options options = Workspace.Options.parse(term, context.handlerName());
        return Workspace.over(context.handlerName(), context.resolveAllocator(term.nested()), options);
    }
}
