package io.datamem.benchmarks;

import io.datamem.benchmarks.report.Machine;
import io.datamem.benchmarks.report.Report;
import io.datamem.benchmarks.report.Result;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.NoBenchmarksException;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Pattern;

/**
 * Runs the benchmark suite in stages, each writing JMH's JSON results, then writes
 * {@code docs/performance.md} and its charts from them. {@code benchmarks/run} builds what this
 * needs and calls it.
 *
 * <pre>
 * Suite [--full] [--include REGEX] [--threads N] [--results DIR] [--docs DIR] [--report-only]
 *       [--command TEXT] [--started EPOCH_SECONDS]
 * </pre>
 *
 * <ul>
 *   <li>{@code --full}: the full profile (more sizes, iterations and forks) instead of the quick
 *       one, which fits in 15 minutes on 2 cores;</li>
 *   <li>{@code --include REGEX}: only benchmarks whose name matches (for investigating one; the page
 *       then goes to {@code benchmarks/target/report} unless {@code --docs} says otherwise);</li>
 *   <li>{@code --threads N}: the thread count of the multi-threaded runs (default: the cores);</li>
 *   <li>{@code --report-only}: regenerate the page from the results already in {@code --results}.</li>
 * </ul>
 */
public final class Suite {

    private static final String PACKAGE = "io\\.datamem\\.benchmarks\\.";

    private Suite() {
    }

    /**
     * A measurement profile.
     *
     * @param name            {@code quick} or {@code full}
     * @param forks           JVMs per benchmark
     * @param warmups         warm-up iterations
     * @param warmupMillis    each warm-up iteration's length
     * @param iterations      measured iterations
     * @param iterationMillis each measured iteration's length
     * @param sizes           block sizes of the single-threaded allocation runs
     * @param threadedSizes   block sizes of the multi-threaded allocation runs
     * @param gibs            block sizes of the huge page runs, in GiB
     * @param singleShots     measured iterations of the single-shot (first touch) runs
     */
    record Profile(String name, int forks, int warmups, int warmupMillis, int iterations, int iterationMillis,
                   String[] sizes, String[] threadedSizes, String[] gibs, int singleShots) {
    }

    static final String[] ALL_SIZES = {"64", "4096", "65536", "1048576", "16777216"};

    static final Profile QUICK = new Profile("quick", 1, 2, 300, 5, 300, ALL_SIZES,
            new String[] {"64", "65536"}, new String[] {"1", "4"}, 3);

    static final Profile FULL = new Profile("full", 2, 3, 1000, 5, 1000, ALL_SIZES, ALL_SIZES,
            new String[] {"1", "2", "4", "8"}, 5);

    /**
     * A group of benchmarks run with the same options.
     *
     * @param name    the stage, also its result file's name
     * @param include the regex of its benchmarks
     * @param threads threads
     * @param params  parameter overrides
     * @param single  whether it is a single-shot run
     */
    record Stage(String name, String include, int threads, Map<String, String[]> params, boolean single) {
    }

    static List<Stage> stages(Profile p, int threads) {
        String alloc = PACKAGE + "(AllocFreePeers|AllocFreeDataMem|NDArrayWritten)\\.";
        List<Stage> stages = new ArrayList<>();
        stages.add(new Stage("alloc-1t", alloc, 1, Map.of("byteSize", p.sizes()), false));
        if (threads > 1) {
            stages.add(new Stage("alloc-" + threads + "t", alloc, threads, Map.of("byteSize", p.threadedSizes()),
                    false));
        }
        stages.add(new Stage("current", PACKAGE + "CurrentHandler\\.", 1, Map.of(), false));
        stages.add(new Stage("statistics", PACKAGE + "StatisticsOverhead\\.", 1, Map.of(), false));
        stages.add(new Stage("streaming", PACKAGE + "Streaming\\.", 1, Map.of(), false));
        stages.add(new Stage("first-touch", PACKAGE + "FirstTouch\\.", 1, Map.of("gib", p.gibs()), true));
        stages.add(new Stage("random-access", PACKAGE + "RandomAccess\\.", 1, Map.of("gib", p.gibs()), false));
        return stages;
    }

    /**
     * Runs the suite.
     *
     * @param args see the class description
     * @throws Exception if a stage cannot run or the report cannot be written
     */
    public static void main(String[] args) throws Exception {
        Profile profile = QUICK;
        String include = null;
        int threads = Runtime.getRuntime().availableProcessors();
        Path results = Path.of("benchmarks/target/jmh");
        Path docs = null;
        boolean reportOnly = false;
        String command = "benchmarks/run";
        Instant started = Instant.now();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--full" -> profile = FULL;
                case "--quick" -> profile = QUICK;
                case "--include" -> include = value(args, ++i);
                case "--threads" -> threads = Integer.parseInt(value(args, ++i));
                case "--results" -> results = Path.of(value(args, ++i));
                case "--docs" -> docs = Path.of(value(args, ++i));
                case "--report-only" -> reportOnly = true;
                case "--command" -> command = value(args, ++i);
                case "--started" -> started = Instant.ofEpochSecond(Long.parseLong(value(args, ++i)));
                default -> throw new IllegalArgumentException("unknown argument: " + args[i] + " (expected: --full,"
                        + " --include REGEX, --threads N, --results DIR, --docs DIR, --report-only, --command TEXT,"
                        + " --started EPOCH_SECONDS)");
            }
        }
        if (docs == null) {
            docs = include == null ? Path.of("docs") : Path.of("benchmarks/target/report");
        }
        Files.createDirectories(results);
        Path runFile = results.resolve("run.properties");
        Path notes = results.resolve("notes.txt");
        if (!reportOnly) {
            clean(results);
            String loadBefore = loadAverage();
            List<Stage> stages = stages(profile, threads);
            for (Stage stage : stages) {
                runStage(profile, stage, include, results, notes);
            }
            Properties run = new Properties();
            run.setProperty("profile", profile.name());
            run.setProperty("command", command);
            run.setProperty("started", Long.toString(started.getEpochSecond()));
            run.setProperty("finished", Long.toString(Instant.now().getEpochSecond()));
            run.setProperty("loadBefore", loadBefore);
            run.setProperty("loadAfter", loadAverage());
            run.setProperty("threads", Integer.toString(threads));
            try (var w = Files.newBufferedWriter(runFile, StandardCharsets.UTF_8)) {
                run.store(w, "datamem benchmark run");
            }
        }
        writeReport(results, runFile, notes, docs);
    }

    private static String value(String[] args, int i) {
        if (i >= args.length) {
            throw new IllegalArgumentException(args[i - 1] + " needs a value");
        }
        return args[i];
    }

    private static void clean(Path results) throws IOException {
        try (DirectoryStream<Path> s = Files.newDirectoryStream(results)) {
            for (Path p : s) {
                String n = p.getFileName().toString();
                if (n.endsWith(".json") || n.equals("notes.txt") || n.equals("run.properties")) {
                    Files.delete(p);
                }
            }
        }
    }

    static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return f[0] + ", " + f[1] + ", " + f[2];
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    private static void runStage(Profile p, Stage stage, String include, Path results, Path notes)
            throws RunnerException {
        String regex = include == null ? stage.include() : "^(?=.*(?:" + include + ")).*(?:" + stage.include() + ")";
        Pattern.compile(regex); // fail early on a bad --include
        String library = System.getProperty(NativeCalls.LIBRARY_PROPERTY, "benchmarks/target/native/libdmbench.so");
        ChainedOptionsBuilder o = new OptionsBuilder()
                .include(regex)
                .forks(p.forks())
                .threads(stage.threads())
                .shouldFailOnError(false)
                .jvmArgs("--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow", "-Xms1g",
                        "-Xmx1g", "-D" + NativeCalls.LIBRARY_PROPERTY + "=" + Path.of(library).toAbsolutePath(),
                        "-D" + Notes.PROPERTY + "=" + notes.toAbsolutePath())
                .resultFormat(ResultFormatType.JSON)
                .result(results.resolve(stage.name() + ".json").toString());
        if (stage.single()) {
            o.warmupIterations(1).measurementIterations(p.singleShots());
        } else {
            o.warmupIterations(p.warmups()).warmupTime(TimeValue.milliseconds(p.warmupMillis()))
                    .measurementIterations(p.iterations()).measurementTime(TimeValue.milliseconds(p.iterationMillis()));
        }
        stage.params().forEach(o::param);
        System.out.println("# datamem suite: stage " + stage.name() + " (" + p.name() + " profile)");
        try {
            new Runner(o.build()).run();
        } catch (NoBenchmarksException e) {
            System.out.println("# datamem suite: stage " + stage.name() + ": nothing matches " + include);
        }
    }

    private static void writeReport(Path results, Path runFile, Path notes, Path docs) throws IOException {
        List<Result> all = new ArrayList<>();
        try (DirectoryStream<Path> s = Files.newDirectoryStream(results, "*.json")) {
            for (Path p : s) {
                String text = Files.readString(p);
                if (!text.isBlank()) {
                    all.addAll(Result.parseAll(text));
                }
            }
        }
        Properties run = new Properties();
        try (var r = Files.newBufferedReader(runFile, StandardCharsets.UTF_8)) {
            run.load(r);
        }
        List<String> noteLines = Files.exists(notes) ? Files.readAllLines(notes) : List.of();
        Report.Run info = new Report.Run(run.getProperty("profile"), run.getProperty("command"),
                Instant.ofEpochSecond(Long.parseLong(run.getProperty("started"))),
                Instant.ofEpochSecond(Long.parseLong(run.getProperty("finished"))), run.getProperty("loadBefore"),
                run.getProperty("loadAfter"), Integer.parseInt(run.getProperty("threads")), noteLines);
        Path chartDir = docs.resolve("performance");
        if (Files.isDirectory(chartDir)) {
            try (DirectoryStream<Path> s = Files.newDirectoryStream(chartDir, "*.png")) {
                for (Path p : s) {
                    Files.delete(p);
                }
            }
        }
        Report.Page page = Report.render(all, Machine.current(), info, chartDir, "performance");
        Files.createDirectories(docs);
        Path out = docs.resolve("performance.md");
        try {
            Files.writeString(out, page.markdown(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + out, e);
        }
        System.out.println("# datamem suite: wrote " + out + " and " + page.charts().size() + " charts in " + chartDir);
        String md = page.markdown();
        int goals = md.indexOf("## Goals");
        if (goals >= 0) {
            int next = md.indexOf("\n## ", goals + 1);
            System.out.println(md.substring(goals, next < 0 ? md.length() : next).strip());
        }
    }
}
