package io.datamem.impl.provider;

import io.datamem.DataMemAllocator;
import io.datamem.impl.internal.adaptor.LoggingAdaptorImpl;
import io.datamem.internal.Messages;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.function.UnaryOperator;

/** Provides {@code log=FILE}. */
public final class LogProvider extends AdaptorProvider {

    /** Creates the provider (called by {@link java.util.ServiceLoader}). */
    public LogProvider() {
        super("log", "log=FILE");
    }

    /**
     * Reads {@code log=FILE}. The file is opened (created or truncated) only when the returned
     * function runs, after the whole handler name was validated.
     */
    @Override
    UnaryOperator<DataMemAllocator> parse(ProviderTerm term, ProviderContext context) {
        if (!term.text().startsWith("log=") || term.argument().isBlank()) {
            throw malformed(term, context, "log=FILE, for example log=/tmp/datamem.log");
        }
        Path file;
        try {
            file = Path.of(term.argument().strip());
        } catch (InvalidPathException e) {
            throw malformed(term, context, "log=FILE with a valid path: " + e.getReason());
        }
        String handlerName = context.handlerName();
        return upstream -> {
            try {
                return LoggingAdaptorImpl.open(upstream, file);
            } catch (UncheckedIOException e) {
                IOException cause = e.getCause();
                throw new IllegalStateException("handler " + Messages.quote(handlerName) + ": cannot open the "
                        + "allocation log " + Messages.quote(file.toString()) + " (" + cause.getClass().getSimpleName()
                        + (cause.getMessage() == null ? "" : ": " + Messages.quote(cause.getMessage())) + ")", e);
            }
        };
    }
}
