package io.datamem.impl.internal.cpu;

import io.datamem.DataMemAllocator;
import io.datamem.impl.os.LinuxMemory;
import io.datamem.impl.shared.SharedMemoryAllocator;
import io.datamem.internal.Messages;
import io.datamem.spi.Availability;
import io.datamem.spi.DataMemProvider;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;

import java.util.List;

/**
 * Provides {@code shared}: a {@link SharedMemoryAllocator} (and so {@code pool(shared)}). Lives,
 * as every provider of this module does, in the feature's package that is not exported; it is
 * public only for {@link java.util.ServiceLoader}.
 */
public final class SharedProvider implements DataMemProvider {

    /** Creates the provider (called by {@link java.util.ServiceLoader}). */
    public SharedProvider() {
    }

    @Override
    public String name() {
        return "shared";
    }

    @Override
    public Role role() {
        return Role.LEAF;
    }

    @Override
    public List<String> names() {
        return List.of("shared");
    }

    @Override
    public boolean accepts(ProviderTerm term) {
        return term.family().equals("shared");
    }

    @Override
    public Availability availability() {
        return LinuxMemory.supported() ? Availability.AVAILABLE   // what Posix.supported() says
                : Availability.unavailable("shared memory (memfd_create) needs Linux; this is "
                + System.getProperty("os.name"));
    }

    @Override
    public void validate(ProviderTerm term, ProviderContext context) {
        if (!term.text().strip().equals("shared")) {
            throw new IllegalArgumentException("handler name " + Messages.quote(context.handlerName()) + ": "
                    + Messages.quote(term.text()) + " (expected: shared, which takes no options)");
        }
    }

    @Override
    public DataMemAllocator createAllocator(ProviderTerm term, ProviderContext context) {
        validate(term, context);
        return SharedMemoryAllocator.of();
    }
}
