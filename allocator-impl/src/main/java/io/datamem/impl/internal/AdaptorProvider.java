package io.datamem.impl.internal;

import io.datamem.spi.DataMemProvider;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;

import java.util.List;

/** The common part of the adaptor providers: a family name and the forms listed. */
abstract class AdaptorProvider implements DataMemProvider {

    private final String family;
    private final List<String> names;

    AdaptorProvider(String family, String... names) {
        this.family = family;
        this.names = List.of(names);
    }

    @Override
    public final String name() {
        return family;
    }

    @Override
    public final Role role() {
        return Role.ADAPTOR;
    }

    @Override
    public final List<String> names() {
        return names;
    }

    @Override
    public final boolean accepts(ProviderTerm term) {
        return term.family().equals(family);
    }

    /** The message for a malformed term. */
    final IllegalArgumentException malformed(ProviderTerm term, ProviderContext context, String expected) {
        return new IllegalArgumentException("handler name '" + context.handlerName() + "': '" + term + "' (expected: "
                + expected + ")");
    }
}
