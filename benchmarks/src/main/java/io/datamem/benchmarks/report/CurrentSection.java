package io.datamem.benchmarks.report;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Optional;
import java.util.SequencedMap;

import static io.datamem.benchmarks.report.Format.cell;
import static io.datamem.benchmarks.report.Format.fmt;
import static io.datamem.benchmarks.report.Goal.NOT_MEASURED;
import static io.datamem.benchmarks.report.Report.CURRENT_NS;
import static io.datamem.benchmarks.report.Verdicts.strictVerdict;

/**
 * Finding the current handler: {@code DataMem.current()} against {@code ThreadLocal.get()}, with its
 * chart and goal.
 */
final class CurrentSection extends Section {

    CurrentSection(PageInput input) {
        super(input);
    }

    /** The {@code {{current}}} slot: ns per lookup of each variant, and its chart. */
    String current() {
        record Variant(String benchmark, String label) {
        }
        List<Variant> variants = List.of(
                new Variant("CurrentHandler.current", "`DataMem.current()`, nothing bound (process default)"),
                new Variant("CurrentHandler.threadLocal", "`ThreadLocal.get()`"),
                new Variant("CurrentHandler.currentLoop", "`DataMem.current()` in a loop, nothing bound"),
                new Variant("CurrentHandler.currentScopedLoop", "`DataMem.current()` in a loop inside `callWith`"),
                new Variant("CurrentHandler.threadLocalLoop", "`ThreadLocal.get()` in a loop"));
        StringBuilder b = new StringBuilder("| lookup | ns per lookup |\n|---|---:|\n");
        SequencedMap<String, double[]> series = new LinkedHashMap<>();
        List<String> categories = new ArrayList<>();
        List<Double> values = new ArrayList<>();
        for (Variant v : variants) {
            Optional<Result> r = named(v.benchmark());
            b.append("| ").append(v.label()).append(" | ").append(cell(r)).append(" |\n");
            categories.add(v.benchmark().substring(v.benchmark().indexOf('.') + 1));
            values.add(r.map(Result::score).orElse(Double.NaN));
        }
        series.put("ns per lookup", values.stream().mapToDouble(Double::doubleValue).toArray());
        b.append(chart(Charts.Kind.BARS, "current-handler.png", "Finding the current handler", "", "ns per lookup",
                categories, series, false));
        return b.toString();
    }

    /** Goal: {@code DataMem.current()}, unbound and scoped, under {@link Report#CURRENT_NS} ns. */
    Goal currentGoal() {
        String goal = "`DataMem.current()` under " + fmt(CURRENT_NS) + " ns";
        Optional<Result> unbound = named("CurrentHandler.current");
        Optional<Result> scoped = named("CurrentHandler.currentScopedLoop");
        if (unbound.isEmpty() && scoped.isEmpty()) {
            return new Goal(goal, NOT_MEASURED, NOT_MEASURED, "");
        }
        double u = unbound.map(Result::score).orElse(Double.NaN);
        double s = scoped.map(Result::score).orElse(Double.NaN);
        boolean met = !(u >= CURRENT_NS) && !(s >= CURRENT_NS);
        double eu = unbound.map(Result::error).orElse(Double.NaN);
        double es = scoped.map(Result::error).orElse(Double.NaN);
        List<Check> checks = new ArrayList<>();
        if (unbound.isPresent()) {
            checks.add(new Check(u < CURRENT_NS, !(Math.abs(u - CURRENT_NS) >= eu)));
        }
        if (scoped.isPresent()) {
            checks.add(new Check(s < CURRENT_NS, !(Math.abs(s - CURRENT_NS) >= es)));
        }
        String why = "";
        if (!met) {
            double tl = named("CurrentHandler.threadLocalLoop").map(Result::score).orElse(Double.NaN);
            why = "with nothing bound, `current()` reads the process default (a volatile field) and finds no"
                    + " binding: " + fmt(u) + " ns, JMH's own per-call overhead included. Inside `callWith` it is a"
                    + " `ScopedValue` lookup, which the JDK serves from a small per-thread cache of scoped values"
                    + " (walking the bindings on a miss): " + fmt(s) + " ns in a loop where `ThreadLocal.get()`"
                    + " takes " + fmt(tl) + " ns. That lookup is the JDK's price for a binding that is restored on"
                    + " exit and leaks into no other thread; datamem adds one volatile read to it.";
        }
        return new Goal(goal, "unbound " + fmt(u) + " ± " + fmt(eu) + " ns, scoped " + fmt(s) + " ± " + fmt(es)
                + " ns", strictVerdict(checks, Integer.MAX_VALUE), why);
    }
}
