package io.datamem.benchmarks.report;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Optional;
import java.util.SequencedMap;
import java.util.function.BiFunction;
import java.util.function.Function;

import static io.datamem.benchmarks.report.Format.cell;
import static io.datamem.benchmarks.report.Format.fmt;
import static io.datamem.benchmarks.report.Format.sizeName;
import static io.datamem.benchmarks.report.Format.speedUp;
import static io.datamem.benchmarks.report.Goal.NOT_MEASURED;
import static io.datamem.benchmarks.report.Report.ARRAY_ELEMENTS;
import static io.datamem.benchmarks.report.Report.ARRAY_HANDLERS;
import static io.datamem.benchmarks.report.Report.ARRAY_VS_NUMPY;
import static io.datamem.benchmarks.report.Report.TWO_THREADS_VS_ONE;
import static io.datamem.benchmarks.report.Verdicts.strictVerdict;

/**
 * The array lifecycle: {@code empty} + write + read + {@code close} through each handler on 1 and 2
 * threads against the handler's own pair and NumPy timed in the same run, its chart, and the goals
 * on NumPy and on 2 threads against 1.
 */
final class ArraysSection extends Section {

    ArraysSection(PageInput input) {
        super(input);
    }

    private Optional<Result> lifecycle(String method, String handler, long elements, int threads) {
        String n = Long.toString(elements);
        return find(r -> r.benchmark().equals("NDArrayLifecycle." + method) && handler.equals(r.param("handler"))
                && n.equals(r.param("elements")) && r.threads() == threads);
    }

    /** NumPy's lifecycle: of the timings in the run (before and after the Java lifecycle), the faster. */
    private Optional<Result> numpy(long elements) {
        String n = Long.toString(elements);
        return results.stream().filter(r -> r.benchmark().equals("NumPy.lifecycle") && n.equals(r.param("elements")))
                .min(Comparator.comparingDouble(Result::score));
    }

    /** What the run recorded about NumPy: its version and timing, or why it was not measured. */
    private String numpyNote() {
        return run.notes().stream().filter(n -> n.startsWith("NumPy\t")).map(n -> n.substring(n.indexOf('\t') + 1))
                .findFirst().orElse("not measured in this run");
    }

    private static String arraySize(long elements) {
        return "float64[" + elements + "] (" + sizeName(elements * 8) + ")";
    }

    /** The {@code {{arrays}}} slot: the lifecycle table, its ratios, NumPy's timings and the chart. */
    String arrays() {
        List<Integer> threads = results.stream().filter(r -> r.benchmark().startsWith("NDArrayLifecycle."))
                .map(Result::threads).distinct().sorted().toList();
        boolean anyNumPy = ARRAY_ELEMENTS.stream().anyMatch(n -> numpy(n).isPresent());
        if (threads.isEmpty() && !anyNumPy) {
            return "_Not measured in this run._\n";
        }
        if (threads.isEmpty()) {
            threads = List.of(1);
        }
        StringBuilder b = new StringBuilder("ns per lifecycle, per thread on 2 threads (mean ± 99.9% confidence"
                + " half-width; NumPy: median ± the larger side of the median's 99.9% confidence interval; lower is"
                + " better):\n\n|  |");
        for (long n : ARRAY_ELEMENTS) {
            for (int t : threads) {
                b.append(" ").append(arraySize(n)).append(", ").append(t).append(t == 1 ? " thread |" : " threads |");
            }
        }
        b.append("\n|---").append("|---:".repeat(ARRAY_ELEMENTS.size() * threads.size())).append("|\n");
        record Line(String label, String method) {
        }
        List<Line> lines = List.of(new Line("`empty` + `setDouble` + `getDouble` + `close`", "written"),
                new Line("`empty` + `close`", "neverWritten"), new Line("the handler's malloc + free", "mallocFree"),
                new Line("a minimal array, not datamem", "minimalArray"));
        for (String h : ARRAY_HANDLERS) {
            for (Line l : lines) {
                if (ARRAY_ELEMENTS.stream().noneMatch(n -> lifecycle(l.method(), h, n, 1).isPresent()
                        || lifecycle(l.method(), h, n, 2).isPresent())) {
                    continue;
                }
                b.append("| ").append(h).append(": ").append(l.label());
                for (long n : ARRAY_ELEMENTS) {
                    for (int t : threads) {
                        b.append(" | ").append(cell(lifecycle(l.method(), h, n, t)));
                    }
                }
                b.append(" |\n");
            }
        }
        b.append("| NumPy: `a = np.empty(n); a[0] = 1.0; b = a[0]; del a`");
        for (long n : ARRAY_ELEMENTS) {
            for (int t : threads) {
                b.append(" | ").append(t == 1 ? cell(numpy(n)) : "—");
            }
        }
        b.append(" |\n");

        b.append("\nRatios (of means; NumPy's median):\n\n| handler | array | written ÷ NumPy | written ÷ malloc +"
                + " free | written, 2 threads ÷ 1 thread |\n|---|---|---:|---:|---:|\n");
        for (String h : ARRAY_HANDLERS) {
            for (long n : ARRAY_ELEMENTS) {
                Optional<Result> w1 = lifecycle("written", h, n, 1);
                if (w1.isEmpty()) {
                    continue;
                }
                b.append("| ").append(h).append(" | ").append(arraySize(n)).append(" | ")
                        .append(speedUp(w1, numpy(n))).append(" | ")
                        .append(speedUp(w1, lifecycle("mallocFree", h, n, 1))).append(" | ")
                        .append(speedUp(lifecycle("written", h, n, 2), w1)).append(" |\n");
            }
        }

        b.append("\nNumPy, timed by `benchmarks/run` in the same run: ").append(numpyNote()).append(".\n");
        if (anyNumPy) {
            b.append("\n| statement | median | quartiles | min – max | repeats × loops |\n|---|---:|---:|---:|---:|\n");
            for (long n : ARRAY_ELEMENTS) {
                Optional<Result> np = numpy(n);
                if (np.isEmpty()) {
                    continue;
                }
                Result r = np.get();
                b.append("| `a = np.empty(").append(n).append("); a[0] = 1.0; b = a[0]; del a` | ").append(fmt(r.score()))
                        .append(" | ").append(fmt(r.percentile(25)))
                        .append(" – ").append(fmt(r.percentile(75))).append(" | ").append(fmt(r.percentile(0)))
                        .append(" – ").append(fmt(r.percentile(100))).append(" | ").append(r.param("repeats"))
                        .append(" × ").append(r.param("loops")).append(" |\n");
            }
        }
        List<String> categories = new ArrayList<>();
        for (String h : ARRAY_HANDLERS) {
            for (long n : ARRAY_ELEMENTS) {
                // short labels: six of them share the chart's width
                categories.add(h.replace("default_allocator", "default").replace("pool(aligned64)", "pool") + " "
                        + sizeName(n * 8));
            }
        }
        SequencedMap<String, double[]> series = new LinkedHashMap<>();
        for (Line l : lines) {
            double[] values = ARRAY_HANDLERS.stream().flatMapToDouble(h -> ARRAY_ELEMENTS.stream()
                    .mapToDouble(n -> lifecycle(l.method(), h, n, 1).map(Result::score).orElse(Double.NaN)))
                    .toArray();
            if (Arrays.stream(values).anyMatch(Double::isFinite)) {
                series.put(l.label().replace("`", ""), values);
            }
        }
        series.put("NumPy (median)", ARRAY_HANDLERS.stream().flatMapToDouble(h -> ARRAY_ELEMENTS.stream()
                .mapToDouble(n -> numpy(n).map(Result::score).orElse(Double.NaN))).toArray());
        b.append(chart(Charts.Kind.LINES, "array-lifecycle.png", "Array lifecycle, 1 thread", "",
                "ns per lifecycle (log scale)", categories, series, true));
        return b.toString();
    }

    /** Goal: the written lifecycle on {@code default_allocator} at most {@link Report#ARRAY_VS_NUMPY}× NumPy's. */
    Goal arrayVsNumPy() {
        String goal = "written-array lifecycle on `default_allocator` ≤ " + ARRAY_VS_NUMPY + "× NumPy's, same run";
        List<String> parts = new ArrayList<>();
        List<String> whys = new ArrayList<>();
        List<Check> checks = new ArrayList<>();
        int forks = Integer.MAX_VALUE;
        boolean anyJava = false;
        for (long n : ARRAY_ELEMENTS) {
            Optional<Result> d = lifecycle("written", "default_allocator", n, 1);
            Optional<Result> np = numpy(n);
            anyJava |= d.isPresent();
            if (d.isEmpty() || np.isEmpty()) {
                continue;
            }
            Ratio r = Ratio.of(d.get(), np.get());
            forks = Math.min(forks, r.forks());
            checks.add(r.check(ARRAY_VS_NUMPY));
            parts.add(sizeName(n * 8) + ": " + cell(d.get()) + " ns against NumPy's " + cell(np.get()) + " ns (median): "
                    + r);
            if (r.value() > ARRAY_VS_NUMPY) {
                whys.add(decomposition("default_allocator", n, 1) + ", where NumPy's whole lifecycle takes "
                        + fmt(np.get().score()) + " ns");
            }
        }
        if (checks.isEmpty()) {
            String figure = anyJava ? "NumPy " + numpyNote() : NOT_MEASURED;
            return new Goal(goal, figure, NOT_MEASURED, "");
        }
        return new Goal(goal, String.join("; ", parts), strictVerdict(checks, forks), whys(whys));
    }

    /** The reasons of a missed array goal, with the terms of {@link #decomposition} explained once. */
    private static String whys(List<String> whys) {
        return whys.isEmpty() ? "" : String.join("; ", whys) + " (in ns per lifecycle: *the array* is `empty` +"
                + " `close` of an array never written, less the handler's pair; *the access* is what writing and"
                + " reading one element adds, with what closing an array whose memory was touched costs).";
    }

    /** Splits a written lifecycle into the handler's pair, the array around it, and the access. */
    private String decomposition(String handler, long elements, int threads) {
        double w = lifecycle("written", handler, elements, threads).map(Result::score).orElse(Double.NaN);
        double e = lifecycle("neverWritten", handler, elements, threads).map(Result::score).orElse(Double.NaN);
        double m = lifecycle("mallocFree", handler, elements, threads).map(Result::score).orElse(Double.NaN);
        return sizeName(elements * 8) + " on " + handler + ": " + fmt(w) + " ns = malloc + free " + fmt(m)
                + " + the array " + fmt(e - m) + " + the access " + fmt(w - e);
    }

    /** Goal: each thread's written lifecycle on 2 threads at most {@link Report#TWO_THREADS_VS_ONE}× 1 thread's. */
    Goal twoThreadsVsOne() {
        return perArrayRatio("on 2 threads, each thread's written-array lifecycle ≤ " + TWO_THREADS_VS_ONE
                + "× the 1-thread cost", TWO_THREADS_VS_ONE, (h, n) -> lifecycle("written", h, n, 2),
                (h, n) -> lifecycle("written", h, n, 1), (h, n) -> {
                    Optional<Result> m2 = lifecycle("mallocFree", h, n, 2);
                    Optional<Result> m1 = lifecycle("mallocFree", h, n, 1);
                    Optional<Result> e2 = lifecycle("neverWritten", h, n, 2);
                    Optional<Result> e1 = lifecycle("neverWritten", h, n, 1);
                    return h + " at " + sizeName(n * 8) + ": " + fmt(lifecycle("written", h, n, 2).orElseThrow().score())
                            + " ns per thread against " + fmt(lifecycle("written", h, n, 1).orElseThrow().score())
                            + " ns alone; on the same 2 threads `empty` + `close` takes " + speedUp(e2, e1)
                            + " its 1-thread time and the handler's malloc + free " + speedUp(m2, m1)
                            + minimalOnTwo(h, n);
                }, whys -> whys.isEmpty() ? "" : String.join("; ", whys) + ".");
    }

    /** What a minimal array's lifecycle takes on 2 threads against 1, for a missed pair's explanation. */
    private String minimalOnTwo(String handler, long elements) {
        Optional<Result> two = lifecycle("minimalArray", handler, elements, 2);
        Optional<Result> one = lifecycle("minimalArray", handler, elements, 1);
        return two.isEmpty() || one.isEmpty() ? "" : ", a minimal array (not datamem) " + speedUp(two, one);
    }

    /**
     * A goal that a ratio meets for every array handler and size: numerator over denominator at or
     * under the target; each missed pair explained by {@code why}, the explanations joined by
     * {@code explain}.
     */
    private Goal perArrayRatio(String goal, double target, BiFunction<String, Long, Optional<Result>> numerator,
                               BiFunction<String, Long, Optional<Result>> denominator,
                               BiFunction<String, Long, String> why, Function<List<String>, String> explain) {
        List<String> parts = new ArrayList<>();
        List<String> whys = new ArrayList<>();
        List<Check> checks = new ArrayList<>();
        int forks = Integer.MAX_VALUE;
        for (String h : ARRAY_HANDLERS) {
            for (long n : ARRAY_ELEMENTS) {
                Optional<Result> num = numerator.apply(h, n);
                Optional<Result> den = denominator.apply(h, n);
                if (num.isEmpty() || den.isEmpty()) {
                    continue;
                }
                Ratio r = Ratio.of(num.get(), den.get());
                forks = Math.min(forks, r.forks());
                checks.add(r.check(target));
                parts.add(h + " " + sizeName(n * 8) + " " + r);
                if (r.value() > target) {
                    whys.add(why.apply(h, n));
                }
            }
        }
        if (checks.isEmpty()) {
            return new Goal(goal, NOT_MEASURED, NOT_MEASURED, "");
        }
        return new Goal(goal, String.join("; ", parts), strictVerdict(checks, forks), explain.apply(whys));
    }
}
