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
        long redZone = -1;
        long quarantine = -1;
        for (ProviderTerm.Option o : options(term, context, "guard", EXPECTED)) {
            String key = o.key();
            if ((key.equals("throw") || key.equals("record")) && !o.hasValue() && action == null) {
                action = key.equals("throw") ? GuardAdaptorImpl.OnViolation.THROW : GuardAdaptorImpl.OnViolation.RECORD;
            } else if (key.equals("redzone") && o.hasValue() && redZone < 0) {
                redZone = byteSize(term, context, o, 4096, EXPECTED);
                if (redZone == 0) {
                    throw term.refused(context.handlerName(), "redzone=" + o.value() + " is empty",
                            "redzone=BYTES from 1 to 4096");
                }
            } else if (key.equals("quarantine") && o.hasValue() && quarantine < 0) {
                quarantine = byteSize(term, context, o, Long.MAX_VALUE, EXPECTED);
            } else {
                throw malformed(term, context, EXPECTED);
            }
        }
        GuardAdaptorImpl.OnViolation onViolation = action == null ? GuardAdaptorImpl.OnViolation.THROW : action;
        int r = redZone < 0 ? GuardAdaptorImpl.DEFAULT_RED_ZONE_BYTES : (int) redZone;
        long q = quarantine < 0 ? GuardAdaptorImpl.DEFAULT_QUARANTINE_BYTES : quarantine;
        return upstream -> GuardAdaptorImpl.builder(upstream).onViolation(onViolation).redZoneBytes(r)
                .quarantineBytes(q).build();
    }
}
