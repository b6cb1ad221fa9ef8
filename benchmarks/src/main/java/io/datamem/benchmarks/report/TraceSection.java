package io.datamem.benchmarks.report;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Optional;
import java.util.SequencedMap;

import static io.datamem.benchmarks.report.Format.cell;
import static io.datamem.benchmarks.report.Format.mib;
import static io.datamem.benchmarks.report.Format.ratio;
import static io.datamem.benchmarks.report.Format.speedUp;
import static io.datamem.benchmarks.report.Goal.NOT_MEASURED;
import static io.datamem.benchmarks.report.Report.POOL_RSS_VS_GLIBC;
import static io.datamem.benchmarks.report.Verdicts.strictVerdict;

/**
 * The mixed-size trace: ns per allocation of every allocator replaying it (in the JVM and in C
 * processes of their own), its chart, the peak resident memory each needed, and the goal on the
 * pool's peak against glibc's.
 */
final class TraceSection extends Section {

    /**
     * An allocator of the trace tables.
     *
     * @param label     what it is
     * @param benchmark the result's benchmark
     * @param allocator its {@code allocator} parameter
     */
    private record TraceRow(String label, String benchmark, String allocator) {
    }

    private static final List<TraceRow> TRACE_ROWS = List.of(
            new TraceRow("C: glibc (the same trace replayed in C, in the JVM)", "TraceReplay.replay", "c"),
            new TraceRow("C, own process: glibc", "CPeers.trace", "glibc"),
            new TraceRow("C, own process: mimalloc (LD_PRELOAD)", "CPeers.trace", "mimalloc"),
            new TraceRow("C, own process: jemalloc (LD_PRELOAD)", "CPeers.trace", "jemalloc"),
            new TraceRow("C, own process: tcmalloc (LD_PRELOAD)", "CPeers.trace", "tcmalloc"),
            new TraceRow("datamem: default_allocator", "TraceReplay.replay", "default_allocator"),
            new TraceRow("datamem: aligned64", "TraceReplay.replay", "aligned64"),
            new TraceRow("datamem: pool(aligned64)", "TraceReplay.replay", "pool(aligned64)"),
            new TraceRow("FFM: malloc + free downcalls", "TraceReplay.replay", "ffm"),
            new TraceRow("JNA Native.malloc + free", "TraceReplay.replay", "jna"),
            new TraceRow("Netty pooled direct", "TraceReplay.replay", "nettyPooled"),
            new TraceRow("Netty adaptive direct", "TraceReplay.replay", "nettyAdaptive"),
            new TraceRow("Arena.ofConfined, one arena per block", "TraceReplay.replay", "arenaConfined"));

    TraceSection(PageInput input) {
        super(input);
    }

    private Optional<Result> traceOf(TraceRow row) {
        return find(r -> r.benchmark().equals(row.benchmark()) && row.allocator().equals(r.param("allocator")));
    }

    /** The {@code {{trace}}} slot: the headline, ns per allocation of each allocator, and the chart. */
    String trace() {
        if (TRACE_ROWS.stream().allMatch(t -> traceOf(t).isEmpty())) {
            return "_Not measured in this run._\n" + cNotMeasured();
        }
        Optional<Result> c = traceOf(TRACE_ROWS.getFirst());
        Optional<Result> pool = traceOf(TRACE_ROWS.get(7));
        StringBuilder b = new StringBuilder();
        if (pool.isPresent() && c.isPresent()) {
            b.append("**Headline: `pool(aligned64)` ").append(cell(pool.get())).append(" ns per allocation, glibc in C ")
                    .append(cell(c.get())).append(" ns: ").append(Ratio.of(pool.get(), c.get()))
                    .append(" glibc's time.**\n\n");
        }
        b.append("ns per allocation, its free included (JMH: mean ± 99.9% confidence half-width; own process:"
                + " median ± the larger side of its 99.9% confidence interval; lower is better):\n\n"
                + "| allocator | ns per allocation | ÷ glibc in C | ÷ `pool(aligned64)` |\n|---|---:|---:|---:|\n");
        List<String> categories = new ArrayList<>();
        List<Double> values = new ArrayList<>();
        for (TraceRow t : TRACE_ROWS) {
            Optional<Result> r = traceOf(t);
            if (r.isEmpty()) {
                continue;
            }
            b.append("| ").append(t.label()).append(" | ").append(cell(r)).append(" | ").append(speedUp(r, c))
                    .append(" | ").append(speedUp(r, pool)).append(" |\n");
            categories.add(t.allocator().equals("c") ? "glibc (C)" : t.benchmark().startsWith("CPeers.")
                    ? t.allocator() + " (C)" : t.allocator().replace("default_allocator", "default")
                    .replace("pool(aligned64)", "pool"));
            values.add(r.get().score());
        }
        b.append(cNotMeasured());
        SequencedMap<String, double[]> series = new LinkedHashMap<>();
        series.put("ns per allocation", values.stream().mapToDouble(Double::doubleValue).toArray());
        b.append(chart(Charts.Kind.BARS, "trace.png", "Mixed-size trace (16 B to 64 KiB)", "",
                "ns per allocation + free", categories, series, false));
        return b.toString();
    }

    /** The {@code {{rss}}} slot: each allocator's peak resident memory growth on the trace. */
    String rss() {
        List<TraceRow> rows = new ArrayList<>();
        for (TraceRow t : TRACE_ROWS) {
            if (t.benchmark().equals("CPeers.trace")) {
                rows.add(new TraceRow(t.label(), "CPeers.rss", t.allocator()));
            } else if (!t.allocator().equals("ffm") && !t.allocator().equals("jna")) {
                rows.add(new TraceRow(t.label(), "TraceRss.peak", t.allocator()));
            }
        }
        if (rows.stream().allMatch(t -> traceOf(t).isEmpty())) {
            return "_Not measured in this run._\n";
        }
        Optional<Result> glibc = rssOf("c");
        StringBuilder b = new StringBuilder("Peak resident memory over the baseline while replaying the trace, every"
                + " page of every block written (median ± the larger side of its 99.9% confidence interval over the"
                + " processes; own process: one measurement; lower is better). The trace holds at most ")
                .append(mib(peakLiveBytes())).append(" live at once.\n\n| allocator | peak RSS growth | ÷ glibc in C"
                        + " (in a JVM) | ÷ bytes live at the peak |\n|---|---:|---:|---:|\n");
        for (TraceRow t : rows) {
            Optional<Result> r = traceOf(t);
            if (r.isEmpty()) {
                continue;
            }
            Result x = r.get();
            b.append("| ").append(t.label()).append(" | ").append(mib(x.score()))
                    .append(Double.isFinite(x.error()) ? " ± " + mib(x.error()) : "").append(" | ")
                    .append(speedUp(r, glibc)).append(" | ").append(ratio(x.score() / peakLiveBytes())).append(" |\n");
        }
        b.append("\nJNA and FFM call the same glibc `malloc` as the C replay in the JVM, so they are not measured"
                + " again; `Arena.ofConfined` is one arena per block (the JDK frees no single block of an arena).\n");
        run.notes().stream().filter(n -> n.startsWith("Peak RSS\t")).map(n -> n.substring(n.indexOf('\t') + 1))
                .findFirst().ifPresent(n -> b.append("\nHow it was measured: ").append(n).append(".\n"));
        return b.toString();
    }

    /** The most bytes the trace holds live at once. */
    private static long peakLiveBytes() {
        return Trace.standard().peakLiveBytes();
    }

    /** The trace's peak resident memory growth of an allocator, measured in JVMs of its own. */
    private Optional<Result> rssOf(String allocator) {
        return find(r -> r.benchmark().equals("TraceRss.peak") && allocator.equals(r.param("allocator")));
    }

    /** Goal (e): pool(aligned64)'s peak resident memory on the trace at most 1.2× glibc's. */
    Goal rssGoal() {
        String goal = "mixed-size trace: peak RSS of `pool(aligned64)` ≤ " + POOL_RSS_VS_GLIBC + "× glibc's";
        Optional<Result> pool = rssOf("pool(aligned64)");
        Optional<Result> glibc = rssOf("c");
        if (pool.isEmpty() || glibc.isEmpty()) {
            return new Goal(goal, NOT_MEASURED, NOT_MEASURED, "");
        }
        Ratio r = Ratio.of(pool.get(), glibc.get());
        String why = r.value() <= POOL_RSS_VS_GLIBC ? "" : "the pool holds " + mib(pool.get().score()) + " at its peak"
                + " against glibc's " + mib(glibc.get().score()) + ": it rounds every block up to its size class"
                + " and keeps the slabs it grew (per thread) for reuse instead of returning them.";
        return new Goal(goal, mib(pool.get().score()) + " against " + mib(glibc.get().score()) + ": " + r,
                strictVerdict(List.of(r.check(POOL_RSS_VS_GLIBC)), r.forks()), why);
    }
}
