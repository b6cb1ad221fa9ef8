package io.datamem.benchmarks.report;

import java.util.Locale;
import java.util.Optional;

/** How the page writes sizes, figures, figures with their error, and ratios. */
final class Format {

    static String sizeName(long bytes) {
        if (bytes >= (1L << 30) && bytes % (1L << 30) == 0) {
            return (bytes >> 30) + " GiB";
        }
        if (bytes >= (1L << 20) && bytes % (1L << 20) == 0) {
            return (bytes >> 20) + " MiB";
        }
        if (bytes >= 1024 && bytes % 1024 == 0) {
            return (bytes >> 10) + " KiB";
        }
        return bytes + " B";
    }

    static String fmt(double v) {
        if (!Double.isFinite(v)) {
            return "n/a";
        }
        double a = Math.abs(v);
        if (a >= 100) {
            return String.format(Locale.ROOT, "%,.0f", v);
        }
        if (a >= 10) {
            return String.format(Locale.ROOT, "%.1f", v);
        }
        return String.format(Locale.ROOT, "%.2f", v);
    }

    static String cell(Optional<Result> r) {
        return r.map(Format::cell).orElse("n/a");
    }

    static String cell(Result r) {
        return Double.isFinite(r.error()) ? fmt(r.score()) + " ± " + fmt(r.error()) : fmt(r.score());
    }

    static String ratio(double r) {
        return Double.isFinite(r) ? String.format(Locale.ROOT, "%.2f×", r) : "n/a";
    }

    static String speedUp(Optional<Result> slow, Optional<Result> fast) {
        if (slow.isEmpty() || fast.isEmpty()) {
            return "n/a";
        }
        return ratio(slow.get().score() / fast.get().score());
    }

    static String mib(double bytes) {
        return Double.isFinite(bytes) ? fmt(bytes / (1 << 20)) + " MiB" : "n/a";
    }

    static double nz(double e) {
        return Double.isFinite(e) ? e : 0;
    }

    private Format() {
    }
}
