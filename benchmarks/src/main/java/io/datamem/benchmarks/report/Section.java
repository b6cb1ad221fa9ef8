package io.datamem.benchmarks.report;

import java.util.List;
import java.util.Optional;
import java.util.SequencedMap;
import java.util.function.Predicate;

/**
 * A part of the performance page: what every section and goal family reads (the run's results, its
 * machine, how the run went), the lookups they share, and their charts.
 */
abstract class Section {

    /** What the page is rendered from. */
    final PageInput input;
    /** The results of the run. */
    final List<Result> results;
    /** The machine the run was on. */
    final Machine machine;
    /** How the run went. */
    final Report.Run run;

    Section(PageInput input) {
        this.input = input;
        this.results = input.results();
        this.machine = input.machine();
        this.run = input.run();
    }

    /** The first result that matches, leaving out the runs on the second CPU (see {@link #onSecondCpu}). */
    Optional<Result> find(Predicate<Result> p) {
        return results.stream().filter(r -> r.param(Result.FIRST_CPU) == null).filter(p).findFirst();
    }

    /** A row's 1-thread result from the run pinned to the second CPU (the suite's alloc-1t-second-cpu stage). */
    Optional<Result> onSecondCpu(Row row, long byteSize) {
        String size = Long.toString(byteSize);
        return results.stream().filter(r -> r.param(Result.FIRST_CPU) != null && row.matches(r)
                && size.equals(r.param("byteSize")) && r.threads() == 1).findFirst();
    }

    /** A row's result at a block size on a thread count. */
    Optional<Result> alloc(Row row, long byteSize, int threads) {
        String size = Long.toString(byteSize);
        return find(r -> row.matches(r) && size.equals(r.param("byteSize")) && r.threads() == threads);
    }

    /** A row's ns per pair at a block size on a thread count; NaN if not measured. */
    double allocScore(Row row, long byteSize, int threads) {
        return alloc(row, byteSize, threads).map(Result::score).orElse(Double.NaN);
    }

    /** The result of a benchmark without parameters (the first, if several). */
    Optional<Result> named(String benchmark) {
        return find(r -> r.benchmark().equals(benchmark));
    }

    /** What the notes say about the C allocators that were not measured. */
    String cNotMeasured() {
        List<String> missing = run.notes().stream().filter(n -> n.startsWith("C allocators\t") && n.contains(
                "not measured")).map(n -> n.substring(n.indexOf('\t') + 1)).distinct().toList();
        return missing.isEmpty() ? "" : "\n**Not measured here:** " + String.join("; ", missing) + ".\n";
    }

    /** Draws a chart (see {@link PageInput#chart}) and returns the Markdown that shows it. */
    String chart(Charts.Kind kind, String file, String title, String xTitle, String yTitle,
                 List<String> categories, SequencedMap<String, double[]> series, boolean logY) {
        return input.chart(kind, file, title, xTitle, yTitle, categories, series, logY);
    }
}
