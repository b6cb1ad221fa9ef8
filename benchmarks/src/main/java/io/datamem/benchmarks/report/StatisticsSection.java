package io.datamem.benchmarks.report;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Optional;
import java.util.SequencedMap;

import static io.datamem.benchmarks.report.Format.cell;
import static io.datamem.benchmarks.report.Format.fmt;
import static io.datamem.benchmarks.report.Format.nz;
import static io.datamem.benchmarks.report.Goal.NOT_MEASURED;
import static io.datamem.benchmarks.report.Report.MICROMETER_NS;
import static io.datamem.benchmarks.report.Report.STATS_NS;
import static io.datamem.benchmarks.report.Verdicts.strictVerdict;

/**
 * What observing costs: a 64-byte pair plain, with {@code +stats} and with the Micrometer binder, its
 * chart, and the two goals on what each adds.
 */
final class StatisticsSection extends Section {

    /** A difference of two results and its error, for a goal's figures. */
    private record Diff(double value, double error, int forks) {

        static Diff of(Result a, Result b) {
            double e = Double.isFinite(a.error()) && Double.isFinite(b.error()) ? Math.hypot(a.error(), b.error())
                    : Double.NaN;
            return new Diff(a.score() - b.score(), e, Math.min(a.forks(), b.forks()));
        }

        Check check(double target) {
            return new Check(value <= target, !(Math.abs(value - target) >= error));
        }

        @Override
        public String toString() {
            return fmt(value) + " ± " + fmt(error) + " ns";
        }
    }

    StatisticsSection(PageInput input) {
        super(input);
    }

    /** The {@code {{stats}}} slot: plain, {@code +stats} and Micrometer per handler, and the chart. */
    String statistics() {
        List<String> handlers = results.stream().filter(r -> r.benchmark().equals("StatisticsOverhead.pair"))
                .map(r -> r.param("handler")).distinct().toList();
        if (handlers.isEmpty()) {
            return "_Not measured in this run._\n";
        }
        StringBuilder b = new StringBuilder("ns per 64-byte allocate + free pair:\n\n"
                + "| handler | plain | `+stats` | `+stats` + Micrometer | `+stats` adds | Micrometer adds over `+stats` |\n"
                + "|---|---:|---:|---:|---:|---:|\n");
        SequencedMap<String, double[]> series = new LinkedHashMap<>();
        List<String> observers = List.of("plain", "stats", "micrometer");
        for (String o : observers) {
            series.put(o, handlers.stream().mapToDouble(h -> stats(h, o).map(Result::score).orElse(Double.NaN))
                    .toArray());
        }
        for (String h : handlers) {
            Optional<Result> plain = stats(h, "plain");
            Optional<Result> st = stats(h, "stats");
            Optional<Result> mm = stats(h, "micrometer");
            b.append("| ").append(h).append(" | ").append(cell(plain)).append(" | ").append(cell(st)).append(" | ")
                    .append(cell(mm)).append(" | ").append(difference(st, plain)).append(" | ")
                    .append(difference(mm, st)).append(" |\n");
        }
        b.append(chart(Charts.Kind.BARS, "statistics.png", "What observing costs (64-byte pairs)", "handler",
                "ns per pair", handlers, series, false));
        return b.toString();
    }

    private static String difference(Optional<Result> a, Optional<Result> b) {
        if (a.isEmpty() || b.isEmpty()) {
            return "n/a";
        }
        double d = a.get().score() - b.get().score();
        double e = Math.hypot(nz(a.get().error()), nz(b.get().error()));
        return fmt(d) + " ± " + fmt(e);
    }

    private Optional<Result> stats(String handler, String observer) {
        return find(r -> r.benchmark().equals("StatisticsOverhead.pair") && handler.equals(r.param("handler"))
                && observer.equals(r.param("observer")));
    }

    /** Goals (d): what {@code +stats} adds over the plain handler, and Micrometer over {@code +stats}. */
    private Goal observerGoal(String goal, String observer, String base, double target, String explanation) {
        List<String> parts = new ArrayList<>();
        List<Check> checks = new ArrayList<>();
        boolean met = true;
        int forks = Integer.MAX_VALUE;
        for (String h : List.of("pool(aligned64)", "default_allocator")) {
            Optional<Result> with = stats(h, observer);
            Optional<Result> without = stats(h, base);
            if (with.isEmpty() || without.isEmpty()) {
                continue;
            }
            Diff d = Diff.of(with.get(), without.get());
            forks = Math.min(forks, d.forks());
            parts.add("on " + h + ": " + d);
            met &= d.value() <= target;
            checks.add(d.check(target));
        }
        if (checks.isEmpty()) {
            return new Goal(goal, NOT_MEASURED, NOT_MEASURED, "");
        }
        return new Goal(goal, String.join("; ", parts), strictVerdict(checks, forks), met ? "" : explanation);
    }

    /** Goal: {@code +stats} adds at most {@link Report#STATS_NS} ns per pair. */
    Goal statsGoal() {
        return observerGoal("`+stats` adds ≤ " + fmt(STATS_NS) + " ns per pair", "stats", "plain", STATS_NS,
                "each pair makes five atomic read-modify-writes (locked instructions on x86): the size histogram"
                + " (which also counts allocations), bytes allocated and bytes in use on malloc; frees, bytes freed"
                + " and bytes in use on free. They keep every figure exact under concurrency and the peak exact;"
                + " per-thread counters would be cheaper but make the figures approximate while threads run.");
    }

    /** Goal: the Micrometer binder adds at most {@link Report#MICROMETER_NS} ns per pair over {@code +stats}. */
    Goal micrometerGoal() {
        return observerGoal("the Micrometer binder adds ≤ " + fmt(MICROMETER_NS) + " ns per pair over `+stats`",
                "micrometer", "stats", MICROMETER_NS, "while bound, the binder records every allocation's size in a"
                + " Micrometer `DistributionSummary` (its own atomic updates, and a histogram if the registry keeps"
                + " one); its gauges and counters cost nothing per pair.");
    }
}
