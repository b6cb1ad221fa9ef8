package io.datamem.impl.provider;

import io.datamem.DataMemAllocator;
import io.datamem.impl.internal.adaptor.GuardAdaptorImpl;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;

import java.util.function.UnaryOperator;

/**
 * Provides {@code guard} (throws on a violation), {@code guard=record} (records only), and the
 * options {@code redzone=BYTES} (1 to 4096, 32 by default) and {@code quarantine=BYTES} (4m by
 * default, 0 frees at once), in any order after the family: {@code guard:record,redzone=256}.
 */
public final class GuardProvider extends AdaptorProvider {

    private static final String EXPECTED = "guard or guard=record; options throw or record,"
            + " redzone=BYTES (1 to 4096) and quarantine=BYTES, as in guard:record,redzone=256,quarantine=1m";

    /** Creates the provider (called by {@link java.util.ServiceLoader}). */
    public GuardProvider() {
        super("guard", "guard", "guard:throw|record,redzone=BYTES,quarantine=BYTES");
    }

    @Override
    UnaryOperator<DataMemAllocator> parse(ProviderTerm term, ProviderContext context) {
        if (term.nested() != null) {
            throw malformed(term, context, EXPECTED);
        }
        GuardAdaptorImpl.OnViolation action = null;
        int redZone = GuardAdaptorImpl.DEFAULT_RED_ZONE_BYTES;
        long quarantine = GuardAdaptorImpl.DEFAULT_QUARANTINE_BYTES;
        boolean redZoneSet = false;
        boolean quarantineSet = false;
        try {
            for (ProviderTerm.Option o : term.options("guard")) {
                switch (o.key()) {
                    case "throw", "record" -> {
                        if (o.hasValue() || action != null) {
                            throw malformed(term, context, EXPECTED);
                        }
                        action = o.key().equals("throw") ? GuardAdaptorImpl.OnViolation.THROW
                                : GuardAdaptorImpl.OnViolation.RECORD;
                    }
                    case "redzone" -> {
                        if (!o.hasValue() || redZoneSet) {
                            throw malformed(term, context, EXPECTED);
                        }
                        long bytes = ProviderTerm.byteSize("redzone", o.value(), 4096);
                        if (bytes < 1) {
                            throw term.refused(context.handlerName(), "redzone=" + o.value() + " is empty",
                                    "redzone=BYTES from 1 to 4096");
                        }
                        redZone = (int) bytes;
                        redZoneSet = true;
                    }
                    case "quarantine" -> {
                        if (!o.hasValue() || quarantineSet) {
                            throw malformed(term, context, EXPECTED);
                        }
                        quarantine = ProviderTerm.byteSize("quarantine", o.value(), Long.MAX_VALUE);
                        quarantineSet = true;
                    }
                    default -> throw malformed(term, context, EXPECTED);
                }
            }
        } catch (IllegalArgumentException e) {
            if (e.getMessage() != null && e.getMessage().startsWith("handler name ")) {
                throw e;
            }
            throw term.refused(context.handlerName(), e.getMessage(), EXPECTED);
        }
        GuardAdaptorImpl.OnViolation onViolation = action == null ? GuardAdaptorImpl.OnViolation.THROW : action;
        int r = redZone;
        long q = quarantine;
        return upstream -> GuardAdaptorImpl.builder(upstream).onViolation(onViolation).redZoneBytes(r)
                .quarantineBytes(q).build();
    }
}
