package io.datamem.impl.internal.cpu;

import io.datamem.DataMemAllocator;
import io.datamem.internal.Messages;
import io.datamem.spi.DataMemProvider;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;

import java.util.List;

/** Provides {@code aligned64} and {@code aligned:N} (also {@code alignedN}). */
public final class AlignedProvider implements DataMemProvider {

    /** Creates the provider (called by {@link java.util.ServiceLoader}). */
    public AlignedProvider() {
    }

    @Override
    public String name() {
        return "aligned";
    }

    @Override
    public Role role() {
        return Role.LEAF;
    }

    @Override
    public List<String> names() {
        return List.of("aligned64", "aligned:N (N a power of two >= 8)");
    }

    @Override
    public boolean accepts(ProviderTerm term) {
        return term.text().startsWith("aligned");
    }

    @Override
    public void validate(ProviderTerm term, ProviderContext context) {
        createAllocator(term, context); // a plain object, nothing allocated
    }

    @Override
    public DataMemAllocator createAllocator(ProviderTerm term, ProviderContext context) {
        String text = term.text();
        String digits = text.startsWith("aligned:") ? text.substring("aligned:".length()) : text.substring("aligned".length());
        long alignment;
        try {
            alignment = Long.parseLong(digits);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("handler name " + Messages.quote(context.handlerName()) + ": "
                    + Messages.quote(text) + " (expected: aligned64 or aligned:N with N a power of two >= 8)");
        }
        return AlignedAllocator.of(alignment);
    }
}
