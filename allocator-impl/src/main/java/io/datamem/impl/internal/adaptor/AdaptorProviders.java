package io.datamem.impl.internal.adaptor;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.impl.os.OptionalModules;
import io.datamem.internal.Messages;
import io.datamem.spi.Availability;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.function.UnaryOperator;

/**
 * The handler-name families of the adaptors, one {@link io.datamem.spi.DataMemProvider} each (the
 * service loader finds each nested class): {@code stats}, {@code tracking}, {@code limit},
 * {@code guard}, {@code log}, {@code faults} and {@code jfr}. Each reads its term into the
 * adaptor of this package it names; {@code AdaptorProvider} holds what they share.
 */
public final class AdaptorProviders {

    private AdaptorProviders() {
    }

    /** Provides the {@code stats} adaptor. */
    public static final class Stats extends AdaptorProvider {

        /** Creates the provider (called by {@link java.util.ServiceLoader}). */
        public Stats() {
            super("stats", "stats");
        }

        @Override
        UnaryOperator<DataMemAllocator> parse(ProviderTerm term, ProviderContext context) {
            if (!term.text().equals("stats")) {
                throw malformed(term, context, "stats, without arguments");
            }
            return StatisticsAdaptorImpl::of;
        }
    }

    /**
     * Provides {@code tracking} and {@code tracking=off|sampled|full}, with the option
     * {@code sample=N} (one stack trace in about N allocations, 128 by default), which implies
     * {@code sampled}: {@code tracking:sampled,sample=16}.
     */
    public static final class Tracking extends AdaptorProvider {

        private static final String EXPECTED = "tracking, or tracking=off, tracking=sampled or tracking=full;"
                + " sample=N (N >= 1) only with sampled, as in tracking:sampled,sample=16";

        /** Creates the provider (called by {@link java.util.ServiceLoader}). */
        public Tracking() {
            super("tracking", "tracking", "tracking=off|sampled|full", "tracking:sampled,sample=N");
        }

        @Override
        UnaryOperator<DataMemAllocator> parse(ProviderTerm term, ProviderContext context) {
            if (term.text().equals("tracking")) {
                return TrackingAdaptorImpl::of;
            }
            if (term.nested() != null) {
                throw malformed(term, context, EXPECTED);
            }
            TrackingAdaptorImpl.StackTraces level = null;
            int sample = 0;
            for (ProviderTerm.Option o : options(term, context, "tracking", EXPECTED)) {
                if (o.key().equals("sample") && o.hasValue() && sample == 0) {
                    sample = sampleInterval(o.value());
                    if (sample < 1) {
                        throw malformed(term, context, EXPECTED);
                    }
                } else if (!o.hasValue() && level == null) {
                    try {
                        level = TrackingAdaptorImpl.StackTraces.parse(o.key());
                    } catch (IllegalArgumentException e) {
                        throw malformed(term, context, EXPECTED);
                    }
                } else {
                    throw malformed(term, context, EXPECTED);
                }
            }
            if (sample != 0 && level != null && level != TrackingAdaptorImpl.StackTraces.SAMPLED) {
                throw term.refused(context.handlerName(), "sample=" + sample + " with "
                        + level.name().toLowerCase(Locale.ROOT) + ", which samples nothing", "sample=N only with sampled");
            }
            // no level and no sample=: the builder's default (-Ddatamem.tracking.stackTraces, else sampled)
            TrackingAdaptorImpl.StackTraces chosen = sample != 0 ? TrackingAdaptorImpl.StackTraces.SAMPLED : level;
            int interval = sample != 0 ? sample : TrackingAdaptorImpl.DEFAULT_SAMPLE_INTERVAL;
            return upstream -> {
                TrackingAdaptorImpl.Builder b = TrackingAdaptorImpl.builder(upstream).sampleInterval(interval);
                return (chosen == null ? b : b.stackTraces(chosen)).build();
            };
        }

        /** A positive decimal count, or 0 if the text is not one. */
        private static int sampleInterval(String text) {
            try {
                return Math.max(Integer.parseInt(text.strip()), 0);
            } catch (NumberFormatException e) {
                return 0;
            }
        }
    }

    /** Provides {@code limit=BYTES}. */
    public static final class Limit extends AdaptorProvider {

        /** Creates the provider (called by {@link java.util.ServiceLoader}). */
        public Limit() {
            super("limit", "limit=BYTES (suffix k, m, g, t: powers of 1024)");
        }

        @Override
        UnaryOperator<DataMemAllocator> parse(ProviderTerm term, ProviderContext context) {
            String expected = "limit=BYTES, for example limit=1048576 or limit=64m";
            if (term.argument().isEmpty()) {
                throw malformed(term, context, expected);
            }
            long bytes;
            try {
                bytes = ProviderTerm.byteSize("byte count", term.argument(), Long.MAX_VALUE);
            } catch (IllegalArgumentException e) {
                throw malformed(term, context, expected);
            }
            return upstream -> LimitingAdaptorImpl.of(upstream, bytes);
        }
    }

    /**
     * Provides {@code guard} (throws on a violation), {@code guard=record} (records only), and the
     * options {@code redzone=BYTES} (1 to 4096, 32 by default) and {@code quarantine=BYTES} (4m by
     * default, 0 frees at once), in any order after the family: {@code guard:record,redzone=256}.
     */
    public static final class Guard extends AdaptorProvider {

        private static final String EXPECTED = "guard or guard=record; options throw or record,"
                + " redzone=BYTES (1 to 4096) and quarantine=BYTES, as in guard:record,redzone=256,quarantine=1m";

        /** Creates the provider (called by {@link java.util.ServiceLoader}). */
        public Guard() {
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

    /** Provides {@code log=FILE}. */
    public static final class Log extends AdaptorProvider {

        /** Creates the provider (called by {@link java.util.ServiceLoader}). */
        public Log() {
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

    /** Provides {@code faults=nth:N}, {@code faults=every:N}, {@code faults=random:P[:SEED]}. */
    public static final class Faults extends AdaptorProvider {

        /** Creates the provider (called by {@link java.util.ServiceLoader}). */
        public Faults() {
            super("faults", "faults=nth:N|every:N|random:P[:SEED]");
        }

        @Override
        UnaryOperator<DataMemAllocator> parse(ProviderTerm term, ProviderContext context) {
            if (!term.text().startsWith("faults=")) {
                throw malformed(term, context, "faults=nth:N, faults=every:N or faults=random:P[:SEED]");
            }
            String spec = term.argument();
            try {
                FailureInjectingAdaptorImpl.of(DataMem.builtinDefault().allocator(), spec); // a plain object: checks the spec
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("handler name " + Messages.quote(context.handlerName()) + ": "
                        + e.getMessage(), e);
            }
            return upstream -> FailureInjectingAdaptorImpl.of(upstream, spec);
        }
    }

    /** Provides {@code jfr}: JDK Flight Recorder events for every operation. */
    public static final class Jfr extends AdaptorProvider {

        /** Creates the provider (called by {@link java.util.ServiceLoader}). */
        public Jfr() {
            super("jfr", "jfr");
        }

        @Override
        public Availability availability() {
            return OptionalModules.JFR.missing().map(Availability::unavailable).orElse(Availability.AVAILABLE);
        }

        @Override
        UnaryOperator<DataMemAllocator> parse(ProviderTerm term, ProviderContext context) {
            if (!term.text().equals("jfr")) {
                throw malformed(term, context, "jfr, without arguments");
            }
            String handlerName = context.handlerName();
            return upstream -> JfrEventAdaptor.of(upstream, handlerName);
        }
    }
}
