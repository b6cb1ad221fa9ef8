package io.datamem.benchmarks.report;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.SequencedMap;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Writes {@code docs/performance.md} from JMH's results: tables of ns/op with their error, ratios
 * against every peer measured in the same run, the goals met or missed with the figures and the
 * reasons, the machine, and PNG charts.
 *
 * <p>The prose lives in a template ({@code performance.md} next to this class); the generator fills
 * its {@code {{name}}} slots.
 */
public final class Report {

    /** The block sizes of the allocation benchmarks, in bytes. */
    public static final List<Long> SIZES = List.of(16L, 64L, 256L, 4096L, 65536L, 1L << 20, 16L << 20);

    /** Goal: the default handler within this factor of the C baseline. */
    public static final double DEFAULT_VS_C = 1.3;
    /** Goal: each exchange (a DLPack export + import round trip, a {@code Py_buffer} request) at most this many ns. */
    public static final double EXCHANGE_NS = 200.0;
    /** Goal: a UCX shared-memory put of 64 MiB at least this share of memcpy's bandwidth. */
    public static final double UCX_PUT_VS_MEMCPY = 0.5;
    /** Goal: a UCX put at least this many times as fast as a socket copy, at every size from 64 KiB. */
    public static final double UCX_PUT_VS_SOCKET = 2.0;
    /** Goal: a cached UCX registration at most this many ns. */
    public static final double UCX_CACHED_REGISTRATION_NS = 1000.0;
    /** Goal: a cached open of a shared-memory IPC handle at most this many ns. */
    public static final double IPC_OPEN_NS = 1000.0;
    /** Goal: a pair through an exported NEP 49 handler at most this factor of the Java pair, plus its crossings. */
    public static final double UPCALL_PAIR_VS_JAVA = 2.0;
    /** Goal: {@code DataMem.current()} under this many ns. */
    public static final double CURRENT_NS = 2.0;
    /** Goal: {@code +stats} adds at most this many ns per pair. */
    public static final double STATS_NS = 10.0;
    /** Goal: the Micrometer binder adds at most this many ns per pair over {@code +stats}. */
    public static final double MICROMETER_NS = 15.0;
    /** Goal: pool(aligned64) faster than the C glibc loop at every size up to this many bytes. */
    public static final long POOL_VS_C_MAX_SIZE = 65536;
    /** Goal: on more threads, pool(aligned64)'s per-pair cost at most this factor of its 1-thread cost. */
    public static final double POOL_THREADS_VS_ONE = 1.2;
    /** Goal: aligned64 at most this factor of default_allocator at every size. */
    public static final double ALIGNED_VS_DEFAULT = 1.3;
    /** Goal: pool(aligned64)'s peak resident memory on the mixed-size trace at most this factor of glibc's. */
    public static final double POOL_RSS_VS_GLIBC = 1.2;
    /** Goal: transparent huge pages at least this much faster on random access over 4 GiB. */
    public static final double THP_SPEEDUP = 1.3;
    /** Goal: pool(aligned64) faster than default_allocator and the Java peers at every size up to this many bytes. */
    public static final long POOL_MAX_SIZE = 1L << 20;
    /** Goal: the written-array lifecycle on default_allocator at most this factor of NumPy's. */
    public static final double ARRAY_VS_NUMPY = 0.25;
    /** Goal: an element accessor at most this factor of raw {@code MemorySegment} access. */
    public static final double ACCESS_VS_SEGMENT = 1.5;
    /** Goal: each thread's lifecycle on 2 threads at most this factor of the 1-thread lifecycle. */
    public static final double TWO_THREADS_VS_ONE = 1.3;
    /** The forks a goal's figures must come from before it gets a verdict (allocation and array goals). */
    public static final int VERDICT_FORKS = 3;

    /** The handlers of the array lifecycle runs. */
    static final List<String> ARRAY_HANDLERS = List.of("default_allocator", "aligned64", "pool(aligned64)");
    /** The float64 lengths of the array lifecycle runs: 64 B and 1 MiB. */
    static final List<Long> ARRAY_ELEMENTS = List.of(8L, 131072L);

    /**
     * How the run went: what ran, when, and how busy the machine was.
     *
     * @param profile   {@code quick} or {@code full}
     * @param command   the command that reproduces the run
     * @param started   when the command started (the build included)
     * @param finished  when the last benchmark finished
     * @param loadBefore the load average (1, 5, 15 minutes) before the benchmarks
     * @param loadAfter  the load average after
     * @param threads   the thread count of the multi-threaded runs
     * @param notes     facts the benchmarks recorded ({@code key<TAB>value})
     */
    public record Run(String profile, String command, Instant started, Instant finished, String loadBefore,
                      String loadAfter, int threads, List<String> notes) {

        /**
         * Validates and copies.
         *
         * @throws NullPointerException if a reference is null
         */
        public Run {
            Objects.requireNonNull(profile, "profile");
            Objects.requireNonNull(command, "command");
            Objects.requireNonNull(started, "started");
            Objects.requireNonNull(finished, "finished");
            Objects.requireNonNull(loadBefore, "loadBefore");
            Objects.requireNonNull(loadAfter, "loadAfter");
            notes = List.copyOf(notes);
        }

        /**
         * How long the command took.
         *
         * @return the wall time from start to finish
         */
        public Duration elapsed() {
            return Duration.between(started, finished);
        }
    }

    /**
     * A row of the allocation tables.
     *
     * @param label     what the row measures
     * @param benchmark the JMH benchmark
     * @param handler   the {@code handler} parameter it must have, or null
     * @param javaPeer  whether it is one of the Java peers datamem's pool must beat
     */
    record Row(String label, String benchmark, String handler, boolean javaPeer) {

        boolean matches(Result r) {
            return r.benchmark().equals(benchmark) && (handler == null || handler.equals(r.param(paramName())));
        }

        /** The parameter {@link #handler} is matched against. */
        String paramName() {
            return benchmark.startsWith("CPeers.") ? "allocator" : "handler";
        }
    }

    static final Row C = new Row("C: glibc malloc + free (the floor)", "AllocFreePeers.cMallocFree", null, false);
    static final Row C_GLIBC = new Row("C, own process: glibc", "CPeers.pair", "glibc", false);
    static final Row C_MIMALLOC = new Row("C, own process: mimalloc (LD_PRELOAD)", "CPeers.pair", "mimalloc", false);
    static final Row C_JEMALLOC = new Row("C, own process: jemalloc (LD_PRELOAD)", "CPeers.pair", "jemalloc", false);
    static final Row C_TCMALLOC = new Row("C, own process: tcmalloc (LD_PRELOAD)", "CPeers.pair", "tcmalloc", false);
    /** The C allocators measured in a process of their own ({@code dmbench-pairs}). */
    static final List<Row> C_ROWS = List.of(C_GLIBC, C_MIMALLOC, C_JEMALLOC, C_TCMALLOC);
    static final Row ARENA_CONFINED = new Row("Arena.ofConfined", "AllocFreePeers.arenaConfined", null, true);
    static final Row NETTY_POOLED = new Row("Netty pooled direct", "AllocFreePeers.nettyPooled", null, true);
    static final Row NETTY_ADAPTIVE = new Row("Netty adaptive direct", "AllocFreePeers.nettyAdaptive", null, true);
    static final Row JNA = new Row("JNA Native.malloc + free", "AllocFreePeers.jnaMallocFree", null, true);
    static final Row FFM = new Row("FFM: malloc + free downcalls", "AllocFreePeers.ffmMallocFree", null, false);
    static final Row DEFAULT = new Row("datamem: default_allocator", "AllocFreeDataMem.allocator", "default_allocator",
            false);
    static final Row ALIGNED = new Row("datamem: aligned64", "AllocFreeDataMem.allocator", "aligned64", false);
    static final Row POOL = new Row("datamem: pool(aligned64)", "AllocFreeDataMem.allocator", "pool(aligned64)", false);
    static final Row DEFAULT_LOOP = new Row("datamem: default_allocator, 1000 pairs per call as C",
            "AllocFreeLoop.loop", "default_allocator", false);
    /** The pool in the C baseline's shape: what goal (a) compares with the C loop. */
    static final Row POOL_LOOP = new Row("datamem: pool(aligned64), 1000 pairs per call as C", "AllocFreeLoop.loop",
            "pool(aligned64)", false);

    static final List<Row> ROWS = List.of(
            C, C_GLIBC, C_MIMALLOC, C_JEMALLOC, C_TCMALLOC, FFM, DEFAULT, ALIGNED, POOL, DEFAULT_LOOP, POOL_LOOP,
            new Row("NDArray empty + close: default_allocator", "AllocFreeDataMem.ndarray", "default_allocator", false),
            new Row("NDArray empty + close: aligned64", "AllocFreeDataMem.ndarray", "aligned64", false),
            new Row("NDArray empty + close: pool(aligned64)", "AllocFreeDataMem.ndarray", "pool(aligned64)", false),
            new Row("NDArray empty + write + close: pool(aligned64)", "NDArrayWritten.ndarray", "pool(aligned64)",
                    false),
            new Row("NDArray empty + confined() + write + close: pool(aligned64)", "NDArrayWritten.confined",
                    "pool(aligned64)", false),
            ARENA_CONFINED,
            new Row("Arena.ofShared", "AllocFreePeers.arenaShared", null, true),
            new Row("ByteBuffer.allocateDirect", "AllocFreePeers.byteBufferDirect", null, true),
            NETTY_POOLED, NETTY_ADAPTIVE, JNA);

    /** What goal (a) compares pool(aligned64) with at every size up to {@link #POOL_MAX_SIZE}. */
    static final List<Row> POOL_RIVALS = List.of(DEFAULT, ARENA_CONFINED, JNA, NETTY_POOLED, NETTY_ADAPTIVE);

    private final List<Result> results;
    private final Machine machine;
    private final Run run;
    private final Path chartDir;
    private final String chartLink;
    private final List<String> charts = new ArrayList<>();

    private Report(List<Result> results, Machine machine, Run run, Path chartDir, String chartLink) {
        this.results = List.copyOf(results);
        this.machine = machine;
        this.run = run;
        this.chartDir = chartDir;
        this.chartLink = chartLink;
    }

    /**
     * A rendered page.
     *
     * @param markdown the page
     * @param charts   the chart files written, by name
     */
    public record Page(String markdown, List<String> charts) {

        /**
         * Copies.
         *
         * @throws NullPointerException if an argument is null
         */
        public Page {
            Objects.requireNonNull(markdown, "markdown");
            charts = List.copyOf(charts);
        }
    }

    /**
     * Renders the page and writes its charts.
     *
     * @param results   the results of the run
     * @param machine   the machine
     * @param run       how the run went
     * @param chartDir  where the PNG charts go
     * @param chartLink the path of {@code chartDir} relative to the page
     * @return the Markdown page and the charts written
     * @throws UncheckedIOException if a chart cannot be written
     */
    public static Page render(List<Result> results, Machine machine, Run run, Path chartDir, String chartLink) {
        Report r = new Report(results, machine, run, chartDir, chartLink);
        String page = r.render();
        return new Page(page, r.charts);
    }

    private String render() {
        Map<String, String> slots = new LinkedHashMap<>();
        slots.put("command", run.command());
        slots.put("fullCommand", "benchmarks/run --full");
        slots.put("generated", generated());
        slots.put("machine", machine.markdown() + load());
        slots.put("goals", goals());
        slots.put("alloc1", allocation(1));
        slots.put("allocThreads", threadedAllocation());
        slots.put("trace", trace());
        slots.put("rss", rss());
        slots.put("current", current());
        slots.put("exchanges", exchanges());
        slots.put("ipc", ipc());
        slots.put("ucx", ucx());
        slots.put("stats", statistics());
        slots.put("hugepages", hugePages());
        slots.put("streaming", streaming());
        slots.put("arrays", arrays());
        slots.put("access", access());
        slots.put("compute", new ComputeSection(this).section());
        slots.put("notes", notes());
        return fill(template(), slots);
    }

    static String template() {
        try (InputStream in = Report.class.getResourceAsStream("performance.md")) {
            if (in == null) {
                throw new IllegalStateException("the report template performance.md is missing from the class path");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String fill(String template, Map<String, String> slots) {
        Matcher m = Pattern.compile("\\{\\{(\\w+)}}").matcher(template);
        StringBuilder b = new StringBuilder();
        while (m.find()) {
            String v = slots.get(m.group(1));
            if (v == null) {
                throw new IllegalArgumentException("template slot {{" + m.group(1) + "}} has no value");
            }
            m.appendReplacement(b, Matcher.quoteReplacement(v));
        }
        m.appendTail(b);
        return b.toString();
    }

    // ---------------------------------------------------------------------------------------------
    // Header and machine

    private String generated() {
        Duration d = run.elapsed();
        String jdk = results.stream().filter(r -> !r.benchmark().startsWith("NumPy.")).findFirst().map(Result::jdk)
                .orElse(machine.jdk());
        return "Generated by `" + run.command() + "` (" + run.profile() + " profile) on "
                + DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'", Locale.ROOT).format(
                run.started().atZone(ZoneOffset.UTC)) + "; the command took " + minutes(d) + " (build included), "
                + results.size() + " results, run on " + jdk + ".";
    }

    static String minutes(Duration d) {
        long s = d.toSeconds();
        return s / 60 + " min " + s % 60 + " s";
    }

    private String load() {
        double before = firstNumber(run.loadBefore());
        double after = firstNumber(run.loadAfter());
        StringBuilder b = new StringBuilder();
        b.append("| load average (1, 5, 15 min) | before: ").append(run.loadBefore()).append("; after: ")
                .append(run.loadAfter()).append(" |\n");
        // The suite's own benchmark thread adds about 1 to the load at its end (and a second one while the
        // two-thread benchmarks run); only what is above that is other work.
        boolean busyBefore = before > 0.5 * machine.cores();
        boolean busyAfter = after - 1.0 > 0.5 * machine.cores();
        if (busyBefore || busyAfter) {
            b.append("\n**This machine was busy with other work while the suite ran** (a load average of ")
                    .append(fmt(busyBefore ? before : after)).append(" on ").append(machine.cores())
                    .append(busyBefore ? " cores when the suite started" : " cores at its end, where the suite's own"
                            + " benchmark thread accounts for about 1")
                    .append("): the figures are noisy, errors are wide, and ratios"
                            + " between rows are more trustworthy than absolute times. Run the command again on a"
                            + " quiet machine for figures to quote.\n");
        }
        return b.toString();
    }

    private static double firstNumber(String s) {
        Matcher m = Pattern.compile("[0-9]+(\\.[0-9]+)?").matcher(s);
        return m.find() ? Double.parseDouble(m.group()) : 0;
    }

    // ---------------------------------------------------------------------------------------------
    // Lookup

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

    Optional<Result> alloc(Row row, long byteSize, int threads) {
        String size = Long.toString(byteSize);
        return find(r -> row.matches(r) && size.equals(r.param("byteSize")) && r.threads() == threads);
    }

    double allocScore(Row row, long byteSize, int threads) {
        return alloc(row, byteSize, threads).map(Result::score).orElse(Double.NaN);
    }

    // ---------------------------------------------------------------------------------------------
    // Formatting

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
        return r.map(Report::cell).orElse("n/a");
    }

    static String cell(Result r) {
        return Double.isFinite(r.error()) ? fmt(r.score()) + " ± " + fmt(r.error()) : fmt(r.score());
    }

    static String ratio(double r) {
        return Double.isFinite(r) ? String.format(Locale.ROOT, "%.2f×", r) : "n/a";
    }

    private String chart(Charts.Kind kind, String file, String title, String xTitle, String yTitle,
                         List<String> categories, SequencedMap<String, double[]> series, boolean logY) {
        try {
            Charts.draw(kind, title, xTitle, yTitle, categories, series, logY, chartDir.resolve(file));
        } catch (IllegalArgumentException e) {
            return "_No chart: " + e.getMessage() + "._\n";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        charts.add(file);
        return "\n![" + title + "](" + chartLink + "/" + file + ")\n";
    }

    // ---------------------------------------------------------------------------------------------
    // Allocation

    private String allocation(int threads) {
        List<Long> sizes = SIZES.stream().filter(s -> ROWS.stream().anyMatch(r -> alloc(r, s, threads).isPresent()))
                .toList();
        if (sizes.isEmpty()) {
            return "_Not measured in this run._\n";
        }
        StringBuilder b = new StringBuilder();
        b.append("ns per allocate + free pair").append(threads > 1 ? " on each thread" : "")
                .append(" (mean ± 99.9% confidence half-width; lower is better):\n\n");
        header(b, "", sizes);
        for (Row row : ROWS) {
            if (sizes.stream().noneMatch(s -> alloc(row, s, threads).isPresent())) {
                continue;
            }
            b.append("| ").append(row.label());
            for (long s : sizes) {
                b.append(" | ").append(cell(alloc(row, s, threads)));
            }
            b.append(" |\n");
        }
        List<String> notFloor = new ArrayList<>();
        for (long s : sizes) {
            Optional<Result> c = alloc(C, s, threads);
            Optional<Result> f = alloc(FFM, s, threads);
            if (c.isPresent() && f.isPresent()
                    && c.get().score() - f.get().score() > Math.hypot(nz(c.get().error()), nz(f.get().error()))) {
                notFloor.add(sizeName(s));
            }
        }
        if (!notFloor.isEmpty()) {
            b.append("\nAt ").append(String.join(", ", notFloor)).append(" the C loop took longer than the same two"
                    + " calls made one at a time from Java (the FFM row), beyond the error: glibc's path for blocks of"
                    + " that size, taken back to back with nothing in between, was slower here than with a few"
                    + " nanoseconds of Java between the calls. There the C row is a reference rather than a floor,"
                    + " and ratios against it fall below 1.\n");
        }
        SequencedMap<String, double[]> series = new LinkedHashMap<>();
        for (Row row : ROWS) {
            series.put(row.label(), sizes.stream().mapToDouble(s -> allocScore(row, s, threads)).toArray());
        }
        List<String> categories = sizes.stream().map(Report::sizeName).toList();
        String suffix = threads == 1 ? "1t" : threads + "t";
        b.append(chart(Charts.Kind.LINES, "alloc-free-" + suffix + ".png",
                "Allocate + free, " + threads + (threads == 1 ? " thread" : " threads"), "block size",
                "ns per pair (log scale)", categories, series, true));

        b.append("\nEach row against the C floor (its time ÷ C's time; 1.00× is as fast as C):\n\n");
        header(b, "", sizes);
        for (Row row : ROWS) {
            if (row == C || sizes.stream().noneMatch(s -> alloc(row, s, threads).isPresent())) {
                continue;
            }
            b.append("| ").append(row.label());
            for (long s : sizes) {
                b.append(" | ").append(ratio(allocScore(row, s, threads) / allocScore(C, s, threads)));
            }
            b.append(" |\n");
        }
        for (Row us : List.of(POOL, DEFAULT)) {
            b.append("\n`").append(us.handler()).append("` against each peer (the peer's time ÷ ")
                    .append(us.handler()).append("'s; above 1.00× ").append(us.handler()).append(" is faster):\n\n");
            header(b, "peer", sizes);
            for (Row peer : ROWS) {
                if (!peer.javaPeer() && peer != C && peer != FFM && !C_ROWS.contains(peer)
                        || sizes.stream().noneMatch(s -> alloc(peer, s, threads).isPresent())) {
                    continue;
                }
                b.append("| ").append(peer.label());
                for (long s : sizes) {
                    double r = allocScore(peer, s, threads) / allocScore(us, s, threads);
                    String t = ratio(r);
                    b.append(" | ").append(peer.javaPeer() && s <= POOL_MAX_SIZE && r < 1 ? "**" + t + "**" : t);
                }
                b.append(" |\n");
            }
        }
        if (threads == 1) {
            b.append(cNotMeasured());
        }
        return b.toString();
    }

    /** A section per thread count above 1 that the allocation benchmarks ran on. */
    private String threadedAllocation() {
        List<Integer> counts = results.stream().filter(r -> ROWS.stream().anyMatch(row -> row.matches(r)))
                .map(Result::threads).filter(t -> t > 1).distinct().sorted().toList();
        if (counts.isEmpty()) {
            return "## Allocate + free on several threads\n\n_Not measured in this run._\n";
        }
        StringBuilder b = new StringBuilder();
        for (int t : counts) {
            b.append(b.isEmpty() ? "" : "\n").append("## Allocate + free, ").append(t).append(" threads\n\n")
                    .append("The same pairs on ").append(t).append(" threads at once, each thread with its own blocks;"
                    + " times are per pair on each thread. A pool with per-thread caches scales; allocators that"
                    + " share a lock do not.");
            if (t > machine.cores()) {
                b.append(" **").append(t).append(" threads on ").append(machine.cores()).append(" cores: oversubscribed.**"
                        + " The threads take turns on the cores, so each thread's time per pair includes the time it"
                        + " waited for one: an allocator that scales perfectly shows about ")
                        .append(ratio((double) t / machine.cores())).append(" its 1-thread time here. The goal on"
                        + " threads divides that out (per-thread time × cores ÷ threads).");
            }
            b.append("\n\n").append(allocation(t));
        }
        return b.toString();
    }

    /** What the notes say about the C allocators that were not measured. */
    private String cNotMeasured() {
        List<String> missing = run.notes().stream().filter(n -> n.startsWith("C allocators\t") && n.contains(
                "not measured")).map(n -> n.substring(n.indexOf('\t') + 1)).distinct().toList();
        return missing.isEmpty() ? "" : "\n**Not measured here:** " + String.join("; ", missing) + ".\n";
    }

    private static void header(StringBuilder b, String first, List<Long> sizes) {
        b.append("| ").append(first);
        for (long s : sizes) {
            b.append(" | ").append(sizeName(s));
        }
        b.append(" |\n|---");
        b.append("|---:".repeat(sizes.size()));
        b.append("|\n");
    }

    // ---------------------------------------------------------------------------------------------
    // Goals

    /**
     * A goal's verdict.
     *
     * @param goal    what was aimed at
     * @param figure  what was measured
     * @param verdict met, missed or not measured
     * @param why     for a miss, why; else empty
     */
    record Goal(String goal, String figure, String verdict, String why) {
    }

    List<Goal> evaluateGoals() {
        List<Goal> goals = new ArrayList<>();
        goals.add(rssGoal());
        goals.add(defaultVsC());
        goals.add(poolGoal());
        goals.add(poolThreadsGoal());
        goals.add(alignedGoal());
        goals.add(statsGoal());
        goals.add(micrometerGoal());
        goals.add(currentGoal());
        goals.add(exchangeGoal());
        goals.add(upcallPairGoal());
        goals.add(ipcOpenGoal());
        goals.add(ucxVsMemcpyGoal());
        goals.add(ucxVsSocketGoal());
        goals.add(ucxRegistrationGoal());
        goals.add(thpGoal());
        goals.add(arrayVsNumPy());
        goals.addAll(new ComputeSection(this).goals());
        goals.add(accessVsSegment(false));
        goals.add(accessVsSegment(true));
        goals.add(twoThreadsVsOne());
        return goals;
    }

    private String goals() {
        StringBuilder b = new StringBuilder("| goal | measured | verdict |\n|---|---|---|\n");
        List<Goal> goals = evaluateGoals();
        for (Goal g : goals) {
            b.append("| ").append(g.goal()).append(" | ").append(g.figure()).append(" | ").append(g.verdict())
                    .append(" |\n");
        }
        boolean any = false;
        for (Goal g : goals) {
            if (!g.why().isEmpty()) {
                if (!any) {
                    b.append("\n**Why goals were missed:**\n\n");
                    any = true;
                }
                b.append("* **").append(g.goal()).append(":** ").append(g.why()).append("\n");
            }
        }
        return b.toString();
    }

    private static String verdict(boolean met) {
        return met ? "**met**" : "**missed**";
    }

    /** A verdict, qualified when the target lies within the figure's error. */
    static String verdict(boolean met, boolean withinError) {
        return verdict(met) + (withinError ? " (within the error)" : "");
    }

    /**
     * One comparison a goal makes.
     *
     * @param pass   whether it meets the target
     * @param within whether the target lies within the figure's error
     */
    record Check(boolean pass, boolean within) {
    }

    /**
     * The verdict of a goal made of checks: met if every check passes; qualified when a re-run could
     * flip it (met: some check is within the error; missed: every failing check is).
     */
    static String verdict(List<Check> checks) {
        boolean met = checks.stream().allMatch(Check::pass);
        return verdict(met, couldFlip(checks, met));
    }

    private static boolean couldFlip(List<Check> checks, boolean met) {
        return met ? checks.stream().anyMatch(Check::within)
                : checks.stream().filter(c -> !c.pass()).allMatch(Check::within);
    }

    /**
     * The verdict of a goal that is decided only on figures from {@value #VERDICT_FORKS} forks or
     * more: met or missed as {@link #verdict(List)} says, but undecided where a re-run could flip it
     * (a confidence interval straddles the target) or where the figures come from fewer forks.
     *
     * @param checks the goal's comparisons
     * @param forks  the fewest forks any of its figures comes from
     */
    static String strictVerdict(List<Check> checks, int forks) {
        if (forks < VERDICT_FORKS) {
            return "**undecided** (" + forks + (forks == 1 ? " fork" : " forks") + "; a verdict needs at least "
                    + VERDICT_FORKS + ")";
        }
        boolean met = checks.stream().allMatch(Check::pass);
        return couldFlip(checks, met) ? "**undecided** (the target lies within the error)" : verdict(met);
    }

    /** The error of a / b from the errors of a and b; NaN if either has none. */
    static double knownRatioError(double a, double ea, double b, double eb) {
        return Double.isFinite(ea) && Double.isFinite(eb) ? ratioError(a, ea, b, eb) : Double.NaN;
    }

    /** The error of a / b from the errors of a and b (a missing error counts as 0). */
    static double ratioError(double a, double ea, double b, double eb) {
        return Math.abs(a / b) * Math.hypot(nz(ea) / a, nz(eb) / b);
    }

    private double allocError(Row row, long byteSize, int threads) {
        return alloc(row, byteSize, threads).map(Result::error).orElse(Double.NaN);
    }

    static final String NOT_MEASURED = "not measured";

    private Goal defaultVsC() {
        String goal = "`default_allocator` within " + DEFAULT_VS_C + "× of C";
        double worst = 0;
        long worstSize = -1;
        StringBuilder per = new StringBuilder();
        List<Check> checks = new ArrayList<>();
        int forks = Integer.MAX_VALUE;
        for (long s : SIZES) {
            double r = allocScore(DEFAULT, s, 1) / allocScore(C, s, 1);
            if (!Double.isFinite(r)) {
                continue;
            }
            double e = knownRatioError(allocScore(DEFAULT, s, 1), allocError(DEFAULT, s, 1), allocScore(C, s, 1),
                    allocError(C, s, 1));
            checks.add(new Check(r <= DEFAULT_VS_C, !(Math.abs(r - DEFAULT_VS_C) >= e)));
            forks = Math.min(forks, Math.min(alloc(DEFAULT, s, 1).orElseThrow().forks(),
                    alloc(C, s, 1).orElseThrow().forks()));
            per.append(per.isEmpty() ? "" : ", ").append(sizeName(s)).append(" ").append(ratio(r));
            if (r > worst) {
                worst = r;
                worstSize = s;
            }
        }
        if (worstSize < 0) {
            return new Goal(goal, NOT_MEASURED, NOT_MEASURED, "");
        }
        boolean met = worst <= DEFAULT_VS_C;
        double worstError = knownRatioError(allocScore(DEFAULT, worstSize, 1), allocError(DEFAULT, worstSize, 1),
                allocScore(C, worstSize, 1), allocError(C, worstSize, 1));
        String why = "";
        if (!met) {
            double c = allocScore(C, worstSize, 1);
            double f = allocScore(FFM, worstSize, 1);
            double d = allocScore(DEFAULT, worstSize, 1);
            why = "at " + sizeName(worstSize) + " C takes " + fmt(c) + " ns, two bare FFM downcalls " + fmt(f)
                    + " ns (" + ratio(f / c) + " of C) and `default_allocator` " + fmt(d) + " ns. ";
            if (f / c > DEFAULT_VS_C) {
                why += "The FFM calls alone exceed the goal: the " + fmt(f - c) + " ns they add over C is the cost of"
                        + " entering native code twice from Java (a C loop calls malloc and free directly; each FFM"
                        + " downcall, even a critical one, passes through a stub that spills arguments and checks"
                        + " the thread), which no allocator above FFM can remove. ";
            }
            why += "datamem's own share is " + fmt(d - f) + " ns per pair (`DataMem.current()`, the interface call,"
                    + " the argument checks NEP 49's contract requires).";
            if (d - f > 0.3 * c) {
                why += " That share is the part to work on.";
            }
        }
        return new Goal(goal, "worst " + ratio(worst) + " ± " + fmt(worstError) + " at " + sizeName(worstSize) + " ("
                + per + ")", strictVerdict(checks, forks), why);
    }

    private Optional<Result> named(String benchmark) {
        return find(r -> r.benchmark().equals(benchmark));
    }

    private static final List<String[]> EXCHANGES = List.of(
            new String[] {"Exchanges.dlpackLegacy", "DLPack, legacy `DLManagedTensor`: export, import back, close (deleter)"},
            new String[] {"Exchanges.dlpackVersioned", "DLPack, `DLManagedTensorVersioned`: export, import back, close"},
            new String[] {"Exchanges.arrowCData", "Arrow C Data Interface (`ArrowSchema` + `ArrowArray`): export,"
                    + " import back, close (release callback)"},
            new String[] {"Exchanges.pyBuffer", "`Py_buffer` (`FULL_RO`): request and release"},
            new String[] {"Exchanges.nep49Pair", "64-byte pair through the exported `PyDataMem_Handler` (downcall to its"
                    + " `malloc` and `free`, each an upcall)"},
            new String[] {"Exchanges.emptyUpcall", "one crossing: a downcall to an upcall stub that does nothing"},
            new String[] {"Exchanges.javaPair", "64-byte pair on the handler directly"});

    /** The exchanges table. */
    private String exchanges() {
        if (EXCHANGES.stream().noneMatch(e -> named(e[0]).isPresent())) {
            return "_Not measured in this run._\n";
        }
        StringBuilder b = new StringBuilder("| exchange (float64[8] of `default_allocator` memory) | ns per"
                + " operation |\n|---|---:|\n");
        for (String[] e : EXCHANGES) {
            b.append("| ").append(e[1]).append(" | ").append(cell(named(e[0]))).append(" |\n");
        }
        return b.toString();
    }

    /** Goal: every exchange at most {@link #EXCHANGE_NS}. */
    private Goal exchangeGoal() {
        String goal = "each exchange (DLPack legacy and versioned round trip, Arrow C Data round trip, `Py_buffer`) ≤ " + fmt(EXCHANGE_NS) + " ns";
        List<Check> checks = new ArrayList<>();
        StringBuilder figure = new StringBuilder();
        int forks = Integer.MAX_VALUE;
        for (String[] e : EXCHANGES.subList(0, 4)) {
            Optional<Result> r = named(e[0]);
            if (r.isEmpty()) {
                continue;
            }
            double v = r.get().score();
            double err = r.get().error();
            checks.add(new Check(v <= EXCHANGE_NS, !(Math.abs(v - EXCHANGE_NS) >= err)));
            forks = Math.min(forks, r.get().forks());
            figure.append(figure.isEmpty() ? "" : ", ").append(e[0].substring(e[0].indexOf('.') + 1)).append(' ')
                    .append(fmt(v)).append(" ± ").append(fmt(err)).append(" ns");
        }
        if (checks.isEmpty()) {
            return new Goal(goal, NOT_MEASURED, NOT_MEASURED, "");
        }
        boolean met = checks.stream().allMatch(Check::pass);
        return new Goal(goal, figure.toString(), strictVerdict(checks, forks), met ? ""
                : "an exchange pins the array, writes the native struct (DLPack: tensor, shape and strides in a"
                + " block of the export table; Arrow: two structs with tokens in it) and, on the way back, adopts"
                + " the memory as an array with its own lifecycle, whose creation and close were about half of a"
                + " DLPack round trip's samples (docs/interchange.md, \"What an exchange costs\"): the figures"
                + " above say which part exceeds the target.");
    }

    private static final List<String[]> IPC = List.of(
            new String[] {"IpcOpen.handleOf", "the exporter's handle of a block (cached per mapping)"},
            new String[] {"IpcOpen.openCached", "open + close of a handle whose mapping is mapped here already"},
            new String[] {"IpcOpen.openCachedSegment", "the same, reading a byte through the lease's segment"},
            new String[] {"IpcOpen.openCold", "open + close with nothing cached (`pidfd_getfd`, checks, `mmap`,"
                    + " `munmap`)"},
            new String[] {"IpcOpen.allocateFree", "`shared` `malloc` + `free` of the block (memfd, seals, `mmap`)"});

    /** The IPC handle table. */
    private String ipc() {
        if (IPC.stream().noneMatch(e -> named(e[0]).isPresent())) {
            return "_Not measured in this run._\n";
        }
        StringBuilder b = new StringBuilder("| operation (64 KiB block of `shared`) | ns per operation |\n|---|---:|\n");
        for (String[] e : IPC) {
            b.append("| ").append(e[1]).append(" | ").append(cell(named(e[0]))).append(" |\n");
        }
        return b.toString();
    }

    /** Goal: a cached IPC open at most {@link #IPC_OPEN_NS}. */
    private Goal ipcOpenGoal() {
        String goal = "a cached IPC open ≤ " + fmt(IPC_OPEN_NS) + " ns";
        Optional<Result> r = named("IpcOpen.openCached");
        if (r.isEmpty()) {
            return new Goal(goal, NOT_MEASURED, NOT_MEASURED, "");
        }
        double v = r.get().score();
        double err = nz(r.get().error());
        boolean met = v <= IPC_OPEN_NS;
        return new Goal(goal, fmt(v) + " ± " + fmt(err) + " ns", strictVerdict(List.of(new Check(met,
                !(Math.abs(v - IPC_OPEN_NS) >= err))), r.get().forks()), met ? "" : "a cached open looks the"
                + " mapping up by its tag and counts a lease; more than that is the part to work on.");
    }

    /**
     * A UCX stage's result at a size, over the shared-memory transports where the benchmark has a
     * transport, with its score and error in ns (the transfer benchmarks report µs).
     */
    private Optional<Result> ucxRow(String benchmark, long byteSize) {
        return ucxRow(benchmark, byteSize, "ucx");
    }

    /**
     * A UCX row over {@code sm}; for transfers, into the given target memory ({@code ucx}: a block
     * of the ucx allocator in shared memory, which the goals use; {@code registered}: registered
     * arena memory). A row without the {@code target} parameter (runs before it existed, whose target
     * was registered memory) matches either.
     */
    private Optional<Result> ucxRow(String benchmark, long byteSize, String target) {
        String size = Long.toString(byteSize);
        return find(r -> r.benchmark().equals(benchmark) && size.equals(r.param("byteSize"))
                && (r.param("transport") == null || "sm".equals(r.param("transport")))
                && (r.param("target") == null || target.equals(r.param("target")))).map(Report::inNanoseconds);
    }

    /** The result with its score and error in ns per operation. */
    static Result inNanoseconds(Result r) {
        double f = switch (r.unit()) {
            case "ns/op" -> 1;
            case "us/op" -> 1e3;
            case "ms/op" -> 1e6;
            case "s/op" -> 1e9;
            default -> throw new IllegalArgumentException(r.benchmark() + ": unit " + r.unit()
                    + " (expected: a time per operation)");
        };
        return f == 1 ? r : new Result(r.benchmark(), r.params(), r.threads(), r.mode(), r.score() * f,
                r.error() * f, "ns/op", r.jdk(), r.forks(), r.percentiles());
    }

    private List<Long> ucxSizes() {
        return results.stream().filter(r -> r.benchmark().equals("UcxTransferBenchmark.put"))
                .map(r -> Long.parseLong(r.param("byteSize"))).distinct().sorted().toList();
    }

    /** The UCX table: bandwidth of a put over shared memory, memcpy and a socket copy; registrations. */
    private String ucx() {
        List<Long> sizes = ucxSizes();
        if (sizes.isEmpty()) {
            return "_Not measured in this run._\n";
        }
        StringBuilder b = new StringBuilder("| bytes | UCX put, `sm`, into a `ucx` block (GB/s) | memcpy (GB/s) |"
                + " socket copy (GB/s) | put ÷ memcpy | put ÷ socket | UCX put, `sm`, into registered memory (GB/s)"
                + " | registered put ÷ socket |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (long size : sizes) {
            Optional<Result> put = ucxRow("UcxTransferBenchmark.put", size);
            Optional<Result> registered = ucxRow("UcxTransferBenchmark.put", size, "registered");
            Optional<Result> memcpy = ucxRow("LoopbackBaselineBenchmark.memcpy", size);
            Optional<Result> socket = ucxRow("LoopbackBaselineBenchmark.socket", size);
            b.append("| ").append(sizeName(size)).append(" | ").append(bandwidth(put, size)).append(" | ")
                    .append(bandwidth(memcpy, size)).append(" | ").append(bandwidth(socket, size)).append(" | ")
                    .append(speed(put, memcpy)).append(" | ").append(speed(put, socket)).append(" | ")
                    .append(bandwidth(registered, size)).append(" | ").append(speed(registered, socket))
                    .append(" |\n");
        }
        b.append("\n| registration (`sm`) | ns |\n|---|---:|\n");
        for (long size : results.stream().filter(r -> r.benchmark().startsWith("UcxRegistrationBenchmark."))
                .map(r -> Long.parseLong(r.param("byteSize"))).distinct().sorted().toList()) {
            b.append("| ").append(sizeName(size)).append(", cached (a lookup) | ")
                    .append(cell(ucxRow("UcxRegistrationBenchmark.cached", size))).append(" |\n");
            b.append("| ").append(sizeName(size)).append(", uncached (`ucp_mem_map` + `ucp_mem_unmap`) | ")
                    .append(cell(ucxRow("UcxRegistrationBenchmark.uncached", size))).append(" |\n");
        }
        return b.toString();
    }

    private static String bandwidth(Optional<Result> r, long bytes) {
        return r.map(x -> fmt(bytes / x.score()) + " ± " + fmt(bytes / x.score() * nz(x.error()) / x.score()))
                .orElse("n/a");
    }

    /** How many times faster {@code fast} is than {@code slow} (time of slow ÷ time of fast). */
    private static String speed(Optional<Result> fast, Optional<Result> slow) {
        if (fast.isEmpty() || slow.isEmpty()) {
            return "n/a";
        }
        double f = fast.get().score();
        double s = slow.get().score();
        return ratio(s / f) + " ± " + fmt(ratioError(s, slow.get().error(), f, fast.get().error()));
    }

    /** Goal: a shared-memory put of 64 MiB at least {@link #UCX_PUT_VS_MEMCPY} of memcpy's bandwidth. */
    private Goal ucxVsMemcpyGoal() {
        String goal = "UCX shared-memory put at 64 MiB ≥ " + fmt(100 * UCX_PUT_VS_MEMCPY) + "% of memcpy's bandwidth";
        long size = 64L << 20;
        Optional<Result> put = ucxRow("UcxTransferBenchmark.put", size);
        Optional<Result> memcpy = ucxRow("LoopbackBaselineBenchmark.memcpy", size);
        if (put.isEmpty() || memcpy.isEmpty()) {
            return new Goal(goal, NOT_MEASURED, NOT_MEASURED, "");
        }
        double share = memcpy.get().score() / put.get().score();
        double err = ratioError(memcpy.get().score(), memcpy.get().error(), put.get().score(), put.get().error());
        boolean met = share >= UCX_PUT_VS_MEMCPY;
        return new Goal(goal, fmt(100 * share) + "% ± " + fmt(100 * err) + "%", strictVerdict(List.of(new Check(met,
                !(Math.abs(share - UCX_PUT_VS_MEMCPY) >= err))), Math.min(put.get().forks(), memcpy.get().forks())),
                met ? "" : "into a block of the ucx allocator in shared memory a put is one copy by the sender;"
                + " below half of memcpy means the sender lost its core (the table, and docs/distributed.md).");
    }

    /** Goal: a put at least {@link #UCX_PUT_VS_SOCKET}× as fast as a socket copy at every size ≥ 64 KiB. */
    private Goal ucxVsSocketGoal() {
        String goal = "UCX put ≥ " + fmt(UCX_PUT_VS_SOCKET) + "× a socket copy at every size ≥ 64 KiB";
        List<Check> checks = new ArrayList<>();
        StringBuilder figure = new StringBuilder();
        int forks = Integer.MAX_VALUE;
        for (long size : ucxSizes()) {
            Optional<Result> put = ucxRow("UcxTransferBenchmark.put", size);
            Optional<Result> socket = ucxRow("LoopbackBaselineBenchmark.socket", size);
            if (size < 65536 || put.isEmpty() || socket.isEmpty()) {
                continue;
            }
            double r = socket.get().score() / put.get().score();
            double err = ratioError(socket.get().score(), socket.get().error(), put.get().score(), put.get().error());
            checks.add(new Check(r >= UCX_PUT_VS_SOCKET, !(Math.abs(r - UCX_PUT_VS_SOCKET) >= err)));
            forks = Math.min(forks, Math.min(put.get().forks(), socket.get().forks()));
            figure.append(figure.isEmpty() ? "" : ", ").append(sizeName(size)).append(' ').append(ratio(r))
                    .append(" ± ").append(fmt(err));
        }
        if (checks.isEmpty()) {
            return new Goal(goal, NOT_MEASURED, NOT_MEASURED, "");
        }
        boolean met = checks.stream().allMatch(Check::pass);
        return new Goal(goal, figure.toString(), strictVerdict(checks, forks), met ? ""
                : "into a ucx block a put needs no target progress, so a miss is the sender's time: see the table"
                + " (registered memory over sm is emulated with active messages in UCX 1.13 and is slower still;"
                + " docs/distributed.md).");
    }

    /** Goal: a cached registration at most {@link #UCX_CACHED_REGISTRATION_NS}. */
    private Goal ucxRegistrationGoal() {
        String goal = "a cached UCX registration ≤ " + fmt(UCX_CACHED_REGISTRATION_NS) + " ns";
        List<Result> cached = results.stream().filter(r -> r.benchmark().equals("UcxRegistrationBenchmark.cached"))
                .toList();
        if (cached.isEmpty()) {
            return new Goal(goal, NOT_MEASURED, NOT_MEASURED, "");
        }
        Result worst = cached.stream().max(java.util.Comparator.comparingDouble(Result::score)).orElseThrow();
        List<Check> checks = cached.stream().map(r -> new Check(r.score() <= UCX_CACHED_REGISTRATION_NS,
                !(Math.abs(r.score() - UCX_CACHED_REGISTRATION_NS) >= nz(r.error())))).toList();
        int forks = cached.stream().mapToInt(Result::forks).min().orElse(0);
        return new Goal(goal, "worst " + fmt(worst.score()) + " ± " + fmt(nz(worst.error())) + " ns (" +
                sizeName(Long.parseLong(worst.param("byteSize"))) + ")", strictVerdict(checks, forks), "");
    }

    /** Goal: the NEP 49 upcall pair at most {@link #UPCALL_PAIR_VS_JAVA}× the Java pair plus two crossings. */
    private Goal upcallPairGoal() {
        String goal = "a pair through an exported NEP 49 handler ≤ " + fmt(UPCALL_PAIR_VS_JAVA)
                + "× the Java pair + its two crossings";
        Optional<Result> pair = named("Exchanges.nep49Pair");
        Optional<Result> java = named("Exchanges.javaPair");
        Optional<Result> crossing = named("Exchanges.emptyUpcall");
        if (pair.isEmpty() || java.isEmpty() || crossing.isEmpty()) {
            return new Goal(goal, NOT_MEASURED, NOT_MEASURED, "");
        }
        double target = UPCALL_PAIR_VS_JAVA * java.get().score() + 2 * crossing.get().score();
        double targetError = Math.hypot(UPCALL_PAIR_VS_JAVA * nz(java.get().error()), 2 * nz(crossing.get().error()));
        double v = pair.get().score();
        double err = Math.hypot(nz(pair.get().error()), targetError);
        int forks = Math.min(pair.get().forks(), Math.min(java.get().forks(), crossing.get().forks()));
        List<Check> checks = List.of(new Check(v <= target, !(Math.abs(v - target) >= err)));
        return new Goal(goal, fmt(v) + " ± " + fmt(pair.get().error()) + " ns against " + fmt(target) + " ns ("
                + fmt(UPCALL_PAIR_VS_JAVA) + " × " + fmt(java.get().score()) + " + 2 × " + fmt(crossing.get().score())
                + ")", strictVerdict(checks, forks), v <= target ? "" : "the exported handler's upcalls record each"
                + " block in a live-block table (NumPy's `realloc` gives no old size; 16 stripes, one compare-and-set"
                + " lock each), which the Java pair does not.");
    }

    private Goal currentGoal() {
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

    /** The fewest forks of the results a goal's checks came from (MAX_VALUE if none). */
    private static int fewest(int a, Ratio r) {
        return Math.min(a, r.forks());
    }

    /**
     * Goal (a): pool(aligned64) faster than the C glibc loop at 16 B to 64 KiB, and faster than
     * default_allocator, Arena.ofConfined, JNA and both Netty allocators up to 1 MiB, on one thread.
     */
    private Goal poolGoal() {
        String goal = "`pool(aligned64)` faster than the C glibc loop at " + sizeName(SIZES.getFirst()) + "–"
                + sizeName(POOL_VS_C_MAX_SIZE) + ", and than `default_allocator`, `Arena.ofConfined`, JNA and both"
                + " Netty allocators at every size up to " + sizeName(POOL_MAX_SIZE) + " (1 thread)";
        List<Check> checks = new ArrayList<>();
        List<String> parts = new ArrayList<>();
        List<String> losses = new ArrayList<>();
        int forks = Integer.MAX_VALUE;
        List<Row> rivals = new ArrayList<>(List.of(C));
        rivals.addAll(POOL_RIVALS);
        for (Row rival : rivals) {
            long max = rival == C ? POOL_VS_C_MAX_SIZE : POOL_MAX_SIZE;
            Ratio worst = null;
            long worstSize = 0;
            List<String> lost = new ArrayList<>();
            for (long s : SIZES) {
                // Against the C loop, the pool in the same shape (a loop of pairs per call: neither pays
                // JMH's per-call cost nor, for the pool, the current handler's lookup); against the Java
                // peers, each pair a call of its own, the handler looked up each time, as they are.
                Optional<Result> pool = alloc(rival == C ? POOL_LOOP : POOL, s, 1);
                Optional<Result> other = alloc(rival, s, 1);
                if (s > max || pool.isEmpty() || other.isEmpty()) {
                    continue;
                }
                Ratio r = Ratio.of(pool.get(), other.get());
                forks = fewest(forks, r);
                Check c = r.check(1.0);
                checks.add(new Check(r.value() < 1.0, c.within()));
                if (worst == null || r.value() > worst.value()) {
                    worst = r;
                    worstSize = s;
                }
                if (r.value() >= 1.0) {
                    lost.add(sizeName(s) + " (" + fmt(pool.get().score()) + " ns against " + fmt(other.get().score())
                            + " ns)");
                }
            }
            if (worst != null) {
                parts.add("÷ " + rival.label().replace(" (the floor)", "") + ": worst " + worst + " at "
                        + sizeName(worstSize));
            }
            if (!lost.isEmpty()) {
                losses.add("not faster than " + rival.label().replace(" (the floor)", "") + " at "
                        + String.join(", ", lost));
            }
        }
        if (checks.isEmpty()) {
            return new Goal(goal, NOT_MEASURED, NOT_MEASURED, "");
        }
        String why = losses.isEmpty() ? "" : String.join("; ", losses) + ". A pair of the pool on its owning"
                + " thread makes no atomic step, but it checks what glibc's per-thread cache does not: the class"
                + " of the size given back, an interior pointer, and a double free (two bitmaps of the block's"
                + " slab), besides finding the thread's heap and the block's slab.";
        return new Goal(goal, "`pool(aligned64)` time ÷ the other's (below 1.00× is faster): " + String.join("; ",
                parts), strictVerdict(checks, forks), why);
    }

    /** Goal (b): pool(aligned64) on more threads at most 1.2× its 1-thread per-pair cost. */
    private Goal poolThreadsGoal() {
        String goal = "`pool(aligned64)` per-pair cost on 2 and 4 threads ≤ " + POOL_THREADS_VS_ONE + "× its 1-thread"
                + " cost (on more threads than cores: per-thread time × cores ÷ threads)";
        List<Integer> threads = results.stream().filter(POOL::matches).map(Result::threads).filter(t -> t > 1)
                .distinct().sorted().toList();
        List<Check> checks = new ArrayList<>();
        List<String> parts = new ArrayList<>();
        List<String> whys = new ArrayList<>();
        List<String> floor = new ArrayList<>();
        List<String> baselines = new ArrayList<>();
        java.util.Set<Long> seconds = new java.util.HashSet<>();
        boolean withinCores = false;
        boolean overSubscribed = false;
        int forks = Integer.MAX_VALUE;
        for (int t : threads) {
            double share = Math.min(1.0, (double) machine.cores() / t);
            for (long s : SIZES) {
                Optional<Result> many = alloc(POOL, s, t);
                Optional<Result> first = alloc(POOL, s, 1);
                if (many.isEmpty() || first.isEmpty()) {
                    continue;
                }
                // The threads run pinned on both CPUs; the 1-thread cost they are held to is the mean
                // of the 1-thread costs on each, where the run measured the second (PinnedWorkers).
                Optional<Result> second = onSecondCpu(POOL, s);
                Optional<Result> one = second.isPresent() ? Optional.of(meanOf(first.get(), second.get())) : first;
                if (second.isPresent() && seconds.add(s)) {
                    baselines.add(sizeName(s) + " " + fmt(first.get().score()) + " ns on the first CPU, "
                            + fmt(second.get().score()) + " ns on the second");
                }
                Optional<Result> cMany = alloc(C, s, t);
                Optional<Result> cOne = alloc(C, s, 1);
                if (cMany.isPresent() && cOne.isPresent()) {
                    floor.add(t + " threads " + sizeName(s) + " " + Ratio.of(cMany.get(), cOne.get()).times(share));
                }
                Ratio raw = Ratio.of(many.get(), one.get());
                Ratio r = raw.times(share);
                forks = fewest(forks, r);
                checks.add(r.check(POOL_THREADS_VS_ONE));
                parts.add(t + " threads " + sizeName(s) + " " + r + (share < 1 ? " (per thread " + ratio(raw.value())
                        + ")" : ""));
                if (r.value() > POOL_THREADS_VS_ONE) {
                    whys.add(t + " threads at " + sizeName(s) + ": " + fmt(many.get().score()) + " ns per pair on each"
                            + " thread against " + fmt(one.get().score()) + " ns alone");
                    if (share < 1) {
                        overSubscribed = true;
                    } else {
                        withinCores = true;
                    }
                }
            }
        }
        if (checks.isEmpty()) {
            return new Goal(goal, NOT_MEASURED, NOT_MEASURED, "");
        }
        String pinned = baselines.isEmpty() ? "" : " The 1-thread cost is the mean of the pool's 1-thread runs on each"
                + " CPU the threads run on (" + String.join("; ", baselines) + "): the two CPUs of this machine do not"
                + " run equally fast (see docs/decisions.md).";
        String why = whys.isEmpty() ? pinned : String.join("; ", whys) + "." + pinned
                + " Each thread's heap owns its slabs and its pairs make no atomic step."
                + (withinCores ? " Where threads cost more per pair than one on as many cores, the cause is not known"
                + " yet (the one found, a segment the compiler allocated on every call in some JVMs, is fixed: see"
                + " docs/decisions.md)." : "")
                + (overSubscribed ? " Threads beyond the cores run pinned two or more to a CPU and take turns in its"
                + " time slices (a preempted thread's slab change can hold a depot's lock meanwhile), which the figure"
                + " divides out only on average; left to the scheduler instead, their forks disagreed with each other"
                + " (see docs/decisions.md)." : "")
                + (floor.isEmpty() ? "" : " For comparison, the same ratio for glibc's C loop in"
                + " the same run (no Java; glibc's per-thread caches and arenas): " + String.join("; ", floor)
                + ".");
        return new Goal(goal, String.join("; ", parts), strictVerdict(checks, forks), why);
    }

    /**
     * The mean of two results of one benchmark (the same code on two CPUs): the mean score, the
     * error of a mean of two independent estimates, and the fewer forks.
     */
    static Result meanOf(Result a, Result b) {
        double error = Math.sqrt(a.error() * a.error() + b.error() * b.error()) / 2;
        return new Result(a.benchmark(), a.params(), a.threads(), a.mode(), (a.score() + b.score()) / 2, error,
                a.unit(), a.jdk(), Math.min(a.forks(), b.forks()), Map.of());
    }

    /** Goal (c): aligned64 at most 1.3× default_allocator at every size (1 thread). */
    private Goal alignedGoal() {
        String goal = "`aligned64` ≤ " + ALIGNED_VS_DEFAULT + "× `default_allocator` at every size (1 thread)";
        List<Check> checks = new ArrayList<>();
        List<String> parts = new ArrayList<>();
        List<String> whys = new ArrayList<>();
        int forks = Integer.MAX_VALUE;
        for (long s : SIZES) {
            Optional<Result> a = alloc(ALIGNED, s, 1);
            Optional<Result> d = alloc(DEFAULT, s, 1);
            if (a.isEmpty() || d.isEmpty()) {
                continue;
            }
            Ratio r = Ratio.of(a.get(), d.get());
            forks = fewest(forks, r);
            checks.add(r.check(ALIGNED_VS_DEFAULT));
            parts.add(sizeName(s) + " " + r);
            if (r.value() > ALIGNED_VS_DEFAULT) {
                whys.add(sizeName(s) + ": " + fmt(a.get().score()) + " ns against " + fmt(d.get().score()) + " ns");
            }
        }
        if (checks.isEmpty()) {
            return new Goal(goal, NOT_MEASURED, NOT_MEASURED, "");
        }
        String why = whys.isEmpty() ? "" : String.join("; ", whys) + ". `aligned64` makes the same `malloc` call"
                + " as `default_allocator`, 64 bytes larger, and writes an 8-byte tag before the aligned address (its"
                + " `free` reads it back); `posix_memalign` is used only above 256-byte alignment. A C loop doing"
                + " the same costs what plain `malloc` + `free` does, so a gap here is the Java side's (the tag's"
                + " write and read through a segment) or the run's noise: compare the forks.";
        return new Goal(goal, String.join("; ", parts), strictVerdict(checks, forks), why);
    }

    Optional<Result> stats(String handler, String observer) {
        return find(r -> r.benchmark().equals("StatisticsOverhead.pair") && handler.equals(r.param("handler"))
                && observer.equals(r.param("observer")));
    }

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

    private Goal statsGoal() {
        return observerGoal("`+stats` adds ≤ " + fmt(STATS_NS) + " ns per pair", "stats", "plain", STATS_NS,
                "each pair makes five atomic read-modify-writes (locked instructions on x86): the size histogram"
                + " (which also counts allocations), bytes allocated and bytes in use on malloc; frees, bytes freed"
                + " and bytes in use on free. They keep every figure exact under concurrency and the peak exact;"
                + " per-thread counters would be cheaper but make the figures approximate while threads run.");
    }

    private Goal micrometerGoal() {
        return observerGoal("the Micrometer binder adds ≤ " + fmt(MICROMETER_NS) + " ns per pair over `+stats`",
                "micrometer", "stats", MICROMETER_NS, "while bound, the binder records every allocation's size in a"
                + " Micrometer `DistributionSummary` (its own atomic updates, and a histogram if the registry keeps"
                + " one); its gauges and counters cost nothing per pair.");
    }

    /** The trace's peak resident memory growth of an allocator, measured in JVMs of its own. */
    Optional<Result> rssOf(String allocator) {
        return find(r -> r.benchmark().equals("TraceRss.peak") && allocator.equals(r.param("allocator")));
    }

    /** Goal (e): pool(aligned64)'s peak resident memory on the trace at most 1.2× glibc's. */
    private Goal rssGoal() {
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

    static String mib(double bytes) {
        return Double.isFinite(bytes) ? fmt(bytes / (1 << 20)) + " MiB" : "n/a";
    }

    private static double nz(double e) {
        return Double.isFinite(e) ? e : 0;
    }

    private Goal thpGoal() {
        String goal = "transparent huge pages ≥ " + THP_SPEEDUP + "× faster than 4 KiB pages on random access over"
                + " 4 GiB";
        Optional<Result> thp = gups("thp", 4);
        Optional<Result> base = gups("4k", 4);
        if (thp.isEmpty() || base.isEmpty()) {
            return new Goal(goal, NOT_MEASURED, NOT_MEASURED, thp.isEmpty() && base.isPresent()
                    ? "the transparent huge page run did not complete (transparent huge pages unavailable?)" : "");
        }
        double r = base.get().score() / thp.get().score();
        double e = ratioError(base.get().score(), base.get().error(), thp.get().score(), thp.get().error());
        boolean met = r >= THP_SPEEDUP;
        String why = "";
        if (!met) {
            String residency = run.notes().stream().filter(n -> n.startsWith("RandomAccess thp 4 GiB"))
                    .findFirst().map(n -> n.substring(n.indexOf('\t') + 1)).orElse("not recorded");
            why = "the block's residency after touching it was: " + residency + ". If little of it is on transparent"
                    + " huge pages, the kernel could not find free 2 MiB pages (fragmented memory, `defrag` setting);"
                    + " if all of it is, the page walks of 4 KiB pages were cheap here (a large TLB or page-walk"
                    + " cache, or a hypervisor backing guest memory with small pages, which puts a second-level walk"
                    + " under both).";
        }
        return new Goal(goal, "4 KiB pages " + fmt(base.get().score()) + " ns, transparent huge pages "
                + fmt(thp.get().score()) + " ns per update: " + ratio(r) + " ± " + fmt(e),
                strictVerdict(List.of(new Check(met, !(Math.abs(r - THP_SPEEDUP) >= e))), Integer.MAX_VALUE), why);
    }

    Optional<Result> gups(String pages, int gib) {
        return find(r -> r.benchmark().equals("RandomAccess.update") && pages.equals(r.param("pages"))
                && Integer.toString(gib).equals(r.param("gib")));
    }

    // ---------------------------------------------------------------------------------------------
    // Mixed-size trace

    /**
     * An allocator of the trace tables.
     *
     * @param label     what it is
     * @param benchmark the result's benchmark
     * @param allocator its {@code allocator} parameter
     */
    record TraceRow(String label, String benchmark, String allocator) {
    }

    static final List<TraceRow> TRACE_ROWS = List.of(
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

    Optional<Result> traceOf(TraceRow row) {
        return find(r -> r.benchmark().equals(row.benchmark()) && row.allocator().equals(r.param("allocator")));
    }

    private String trace() {
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

    private String rss() {
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
    static long peakLiveBytes() {
        return io.datamem.benchmarks.Trace.standard().peakLiveBytes();
    }

    // ---------------------------------------------------------------------------------------------
    // DataMem.current()

    private String current() {
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

    // ---------------------------------------------------------------------------------------------
    // Statistics

    private String statistics() {
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

    static String difference(Optional<Result> a, Optional<Result> b) {
        if (a.isEmpty() || b.isEmpty()) {
            return "n/a";
        }
        double d = a.get().score() - b.get().score();
        double e = Math.hypot(nz(a.get().error()), nz(b.get().error()));
        return fmt(d) + " ± " + fmt(e);
    }

    // ---------------------------------------------------------------------------------------------
    // Huge pages

    private String hugePages() {
        List<Integer> sizes = results.stream()
                .filter(r -> r.benchmark().equals("RandomAccess.update") || r.benchmark().equals("FirstTouch.touch"))
                .map(r -> Integer.parseInt(r.param("gib"))).distinct().sorted().toList();
        if (sizes.isEmpty()) {
            return "_Not measured in this run._\n";
        }
        StringBuilder b = new StringBuilder(
                "| block | first touch, THP (ms) | first touch, 4 KiB (ms) | THP speed-up | random update, THP (ns)"
                + " | random update, 4 KiB (ns) | THP speed-up |\n|---|---:|---:|---:|---:|---:|---:|\n");
        SequencedMap<String, double[]> touch = new LinkedHashMap<>();
        SequencedMap<String, double[]> gups = new LinkedHashMap<>();
        for (String pages : List.of("thp", "4k")) {
            String label = pages.equals("thp") ? "transparent huge pages" : "4 KiB pages";
            touch.put(label, sizes.stream().mapToDouble(g -> firstTouch(pages, g).map(r -> r.score() / g)
                    .orElse(Double.NaN)).toArray());
            gups.put(label, sizes.stream().mapToDouble(g -> gups(pages, g).map(Result::score).orElse(Double.NaN))
                    .toArray());
        }
        for (int g : sizes) {
            Optional<Result> tt = firstTouch("thp", g);
            Optional<Result> t4 = firstTouch("4k", g);
            Optional<Result> gt = gups("thp", g);
            Optional<Result> g4 = gups("4k", g);
            b.append("| ").append(g).append(" GiB | ").append(cell(tt)).append(" | ").append(cell(t4)).append(" | ")
                    .append(speedUp(t4, tt)).append(" | ").append(cell(gt)).append(" | ").append(cell(g4))
                    .append(" | ").append(speedUp(g4, gt)).append(" |\n");
        }
        List<String> categories = sizes.stream().map(g -> g + " GiB").toList();
        b.append(chart(Charts.Kind.BARS, "first-touch.png", "First touch (fault in every page)", "block",
                "ms per GiB", categories, touch, false));
        b.append(chart(Charts.Kind.BARS, "random-access.png", "Random read-modify-write of 64-bit words", "block",
                "ns per update", categories, gups, false));
        List<String> residency = run.notes().stream().filter(n -> n.startsWith("RandomAccess ")
                || n.startsWith("FirstTouch ")).toList();
        if (!residency.isEmpty()) {
            b.append("\nWhat backed each block after it was touched (from `/proc/self/smaps`):\n\n");
            for (String n : residency) {
                int tab = n.indexOf('\t');
                b.append("* ").append(n, 0, tab).append(": ").append(n.substring(tab + 1)).append('\n');
            }
        }
        return b.toString();
    }

    Optional<Result> firstTouch(String pages, int gib) {
        return find(r -> r.benchmark().equals("FirstTouch.touch") && pages.equals(r.param("pages"))
                && Integer.toString(gib).equals(r.param("gib")));
    }

    static String speedUp(Optional<Result> slow, Optional<Result> fast) {
        if (slow.isEmpty() || fast.isEmpty()) {
            return "n/a";
        }
        return ratio(slow.get().score() / fast.get().score());
    }

    // ---------------------------------------------------------------------------------------------
    // Streaming

    private String streaming() {
        List<Result> rs = results.stream().filter(r -> r.benchmark().equals("Streaming.triad")).toList();
        if (rs.isEmpty()) {
            return "_Not measured in this run._\n";
        }
        List<Long> kibs = rs.stream().map(r -> Long.parseLong(r.param("kib"))).distinct().sorted().toList();
        List<Long> offsets = rs.stream().map(r -> Long.parseLong(r.param("offset"))).distinct().sorted().toList();
        StringBuilder b = new StringBuilder("| start | ");
        for (long k : kibs) {
            b.append(sizeName(k << 10)).append(" arrays: ns per pass | GB/s | against aligned | ");
        }
        b.setLength(b.length() - 1);
        b.append("\n|---").append("|---:|---:|---:".repeat(kibs.size())).append("|\n");
        SequencedMap<String, double[]> series = new LinkedHashMap<>();
        for (long k : kibs) {
            series.put(sizeName(k << 10) + " arrays", offsets.stream().mapToDouble(o -> triad(o, k)
                    .map(r -> gbPerSecond(k, r.score())).orElse(Double.NaN)).toArray());
        }
        for (long o : offsets) {
            b.append("| ").append(o == 0 ? "64-byte aligned" : o + (o == 1 ? " byte" : " bytes")
                    + " past a 64-byte boundary");
            for (long k : kibs) {
                Optional<Result> r = triad(o, k);
                Optional<Result> aligned = triad(0, k);
                b.append(" | ").append(cell(r)).append(" | ")
                        .append(r.map(x -> fmt(gbPerSecond(k, x.score()))).orElse("n/a")).append(" | ")
                        .append(r.isPresent() && aligned.isPresent()
                                ? ratio(aligned.get().score() / r.get().score()) : "n/a");
            }
            b.append(" |\n");
        }
        b.append(chart(Charts.Kind.BARS, "streaming.png", "Triad a = b + 3c over float64", "",
                "GB/s (higher is better)", offsets.stream().map(o -> o == 0 ? "aligned" : "+" + o + " B").toList(),
                series, false));
        return b.toString();
    }

    Optional<Result> triad(long offset, long kib) {
        return find(r -> r.benchmark().equals("Streaming.triad") && Long.toString(offset).equals(r.param("offset"))
                && Long.toString(kib).equals(r.param("kib")));
    }

    /** Three arrays of {@code kib} KiB move per pass (two read, one written). */
    static double gbPerSecond(long kib, double nsPerPass) {
        return 3.0 * (kib << 10) / nsPerPass;
    }

    // ---------------------------------------------------------------------------------------------
    // Arrays

    Optional<Result> lifecycle(String method, String handler, long elements, int threads) {
        String n = Long.toString(elements);
        return find(r -> r.benchmark().equals("NDArrayLifecycle." + method) && handler.equals(r.param("handler"))
                && n.equals(r.param("elements")) && r.threads() == threads);
    }

    /** NumPy's lifecycle: of the timings in the run (before and after the Java lifecycle), the faster. */
    Optional<Result> numpy(long elements) {
        String n = Long.toString(elements);
        return results.stream().filter(r -> r.benchmark().equals("NumPy.lifecycle") && n.equals(r.param("elements")))
                .min(Comparator.comparingDouble(Result::score));
    }

    /** What the run recorded about NumPy: its version and timing, or why it was not measured. */
    private String numpyNote() {
        return run.notes().stream().filter(n -> n.startsWith("NumPy\t")).map(n -> n.substring(n.indexOf('\t') + 1))
                .findFirst().orElse("not measured in this run");
    }

    static String arraySize(long elements) {
        return "float64[" + elements + "] (" + sizeName(elements * 8) + ")";
    }

    /** A ratio and its error (NaN where a figure has none), for a goal's figures. */
    record Ratio(double value, double error, int forks) {

        static Ratio of(Result a, Result b) {
            double e = Double.isFinite(a.error()) && Double.isFinite(b.error())
                    ? ratioError(a.score(), a.error(), b.score(), b.error()) : Double.NaN;
            return new Ratio(a.score() / b.score(), e, Math.min(forksOf(a), forksOf(b)));
        }

        /** This ratio and its error multiplied by {@code factor}. */
        Ratio times(double factor) {
            return new Ratio(value * factor, error * factor, forks);
        }

        private static int forksOf(Result r) {
            return r.benchmark().startsWith("NumPy.") ? Integer.MAX_VALUE : r.forks();
        }

        /** Without an error, a re-run could flip the verdict as far as anyone can tell. */
        Check check(double target) {
            return new Check(value <= target, !(Math.abs(value - target) >= error));
        }

        @Override
        public String toString() {
            return ratio(value) + " ± " + fmt(error);
        }
    }

    private Goal arrayVsNumPy() {
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

    private Goal twoThreadsVsOne() {
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

    /**
     * An accessor benchmark of {@code NDArrayAccess}.
     *
     * @param label what it does
     * @param ndarray the method through {@code NDArray}
     * @param segment the method through the raw segment
     * @param array   the method through a {@code double[]}
     */
    record Access(String label, String ndarray, String segment, String array) {

        /** Whether this is a loop over every element (one operation = {@code NDArrayAccess} ROWS × COLUMNS accesses). */
        boolean loop() {
            return ndarray.contains("Sum") || ndarray.contains("Fill");
        }
    }

    static final List<Access> ACCESSES = List.of(
            new Access("get, 1-D index: `a.getDouble(i)`", "ndarrayGet1d", "segmentGet1d", "arrayGet1d"),
            new Access("set, 1-D index: `a.setDouble(v, i)`", "ndarraySet1d", "segmentSet1d", "arraySet1d"),
            new Access("get, 2-D index: `a.getDouble(i, j)`", "ndarrayGet2d", "segmentGet2d", "arrayGet2d"),
            new Access("set, 2-D index: `a.setDouble(v, i, j)`", "ndarraySet2d", "segmentSet2d", "arraySet2d"),
            new Access("sum, 1-D loop of 1,024: `s += a.getDouble(i)`", "ndarraySum1d", "segmentSum1d", "arraySum1d"),
            new Access("fill, 1-D loop of 1,024: `a.setDouble(v, i)`", "ndarrayFill1d", "segmentFill1d",
                    "arrayFill1d"),
            new Access("sum, 2-D loop of 32 × 32: `s += a.getDouble(i, j)`", "ndarraySum2d", "segmentSum2d",
                    "arraySum2d"),
            new Access("fill, 2-D loop of 32 × 32: `a.setDouble(v, i, j)`", "ndarrayFill2d", "segmentFill2d",
                    "arrayFill2d"));

    Optional<Result> access(String method) {
        return named("NDArrayAccess." + method);
    }

    /**
     * The accessor goal, once for single accesses (the accessor's checks end to end) and once for
     * loops over every element (what is left once the compiler hoisted what does not change).
     */
    private Goal accessVsSegment(boolean loops) {
        String goal = "element access through `NDArray` ≤ " + ACCESS_VS_SEGMENT + "× raw `MemorySegment` access"
                + (loops ? ", in loops over every element" : ", one access per operation");
        List<String> parts = new ArrayList<>();
        List<String> whys = new ArrayList<>();
        List<Check> checks = new ArrayList<>();
        int forks = Integer.MAX_VALUE;
        for (Access a : ACCESSES) {
            if (a.loop() != loops) {
                continue;
            }
            Optional<Result> nd = access(a.ndarray());
            Optional<Result> seg = access(a.segment());
            if (nd.isEmpty() || seg.isEmpty()) {
                continue;
            }
            Ratio r = Ratio.of(nd.get(), seg.get());
            forks = Math.min(forks, r.forks());
            checks.add(r.check(ACCESS_VS_SEGMENT));
            String what = a.label().substring(0, a.label().indexOf(':'));
            parts.add(what + " " + r);
            if (r.value() > ACCESS_VS_SEGMENT) {
                whys.add(what + ": " + fmt(nd.get().score()) + " ns through `NDArray` against " + fmt(seg.get().score())
                        + " ns through the segment");
            }
        }
        if (checks.isEmpty()) {
            return new Goal(goal, NOT_MEASURED, NOT_MEASURED, "");
        }
        String why = whys.isEmpty() ? "" : String.join("; ", whys) + (loops ? "." : ". A single access pays"
                + " every check of the accessor once: the calling thread against the one the memory's local segment"
                + " was granted to, the memory's generation (not closed, not resized), the index against the axis;"
                + " the segment pays its bounds and scope checks (its scope is a shared arena's, checked by"
                + " the JDK). In a loop the compiler keeps all but the index check out of the loop.");
        return new Goal(goal, String.join("; ", parts), strictVerdict(checks, forks), why);
    }

    private String arrays() {
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

    private String access() {
        if (ACCESSES.stream().noneMatch(a -> access(a.ndarray()).isPresent() || access(a.segment()).isPresent()
                || access(a.array()).isPresent())) {
            return "_Not measured in this run._\n";
        }
        StringBuilder b = new StringBuilder("ns per operation: one access, or a loop over all 1,024 elements"
                + " (mean ± 99.9% confidence half-width; lower is better):\n\n| access | `NDArray` | `MemorySegment` | `double[]` | `NDArray` ÷ segment |"
                + " `NDArray` ÷ `double[]` |\n|---|---:|---:|---:|---:|---:|\n");
        for (Access a : ACCESSES) {
            Optional<Result> nd = access(a.ndarray());
            Optional<Result> seg = access(a.segment());
            Optional<Result> arr = access(a.array());
            b.append("| ").append(a.label()).append(" | ").append(cell(nd)).append(" | ").append(cell(seg))
                    .append(" | ").append(cell(arr)).append(" | ").append(speedUp(nd, seg)).append(" | ")
                    .append(speedUp(nd, arr)).append(" |\n");
        }
        return b.toString();
    }

    // ---------------------------------------------------------------------------------------------
    // Notes

    private String notes() {
        List<String> other = run.notes().stream().filter(n -> !n.startsWith("RandomAccess ")
                && !n.startsWith("FirstTouch ") && !n.startsWith("NumPy\t") && !n.startsWith("Peak RSS\t")
                && !(n.startsWith("C allocators\t") && n.contains("not measured"))).distinct().toList();
        if (other.isEmpty()) {
            return "";
        }
        StringBuilder b = new StringBuilder("Recorded by the benchmarks during this run:\n\n");
        for (String n : other) {
            int tab = n.indexOf('\t');
            b.append("* ").append(tab < 0 ? n : n.substring(0, tab) + ": " + n.substring(tab + 1)).append('\n');
        }
        return b.toString();
    }
}
