package io.datamem.impl.internal;

import io.datamem.DataMemAllocator;
import io.datamem.impl.LoggingAdaptor;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;

import java.nio.file.Path;

/** Provides {@code log=FILE}. */
public final class LogProvider extends AdaptorProvider {

    /** Creates the provider (called by {@link java.util.ServiceLoader}). */
    public LogProvider() {
        super("log", "log=FILE");
    }

    @Override
    public DataMemAllocator createAdaptor(ProviderTerm term, DataMemAllocator upstream, ProviderContext context) {
        if (!term.text().startsWith("log=") || term.argument().isBlank()) {
            throw malformed(term, context, "log=FILE, for example log=/tmp/datamem.log");
        }
        return LoggingAdaptor.open(upstream, Path.of(term.argument()));
    }
}
