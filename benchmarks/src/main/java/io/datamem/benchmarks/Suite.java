package io.datamem.benchmarks;

import io.datamem.benchmarks.report.Trace;
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
import java.util.Arrays;
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
 * Suite [--full | --smoke] [--include REGEX] [--threads N,M] [--python CMD] [--results DIR] [--docs DIR]
 *       [--report-only] [--command TEXT] [--started EPOCH_SECONDS]
 * </pre>
 *
 * <ul>
 *   <li>{@code --full}: the full profile (more sizes, iterations and forks) instead of the quick
 *       one, which fits in about 40 minutes on 2 cores;</li>
 *   <li>{@code --smoke}: one short iteration of everything, one fork: checks that the suite runs and
 *       the page renders; its figures mean nothing and its goals stay undecided;</li>
 *   <li>{@code --include REGEX}: only benchmarks whose name matches (for investigating one; the page
 *       then goes to {@code benchmarks/target/report} unless {@code --docs} says otherwise, as it does
 *       for {@code --smoke});</li>
 *   <li>{@code --threads N,M}: the thread counts of the multi-threaded allocation runs (default: 2 and 4,
 *       whatever the cores: more threads than cores is measured and said so on the page); the array
 *       lifecycle runs on 1 and 2 threads whenever one of them is above 1;</li>
 *   <li>{@code --python CMD}: the Python that times NumPy's array lifecycle (default {@code python3});</li>
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
     * @param verdictForks    JVMs per benchmark of the runs that goals are decided from (allocation,
     *                        trace, statistics, arrays), which need at least {@link Report#VERDICT_FORKS}
     * @param verdictIterations measured iterations per fork of those runs
     * @param numpyRepeats    timeit repeats of NumPy's lifecycle, per length
     * @param numpySeconds    each repeat's length
     * @param rssRepeats      JVMs per allocator measuring the trace's peak resident memory
     * @param cRepeats        repeats of each timing of the C allocators' program
     * @param cMillis         each of those repeats' length
     */
    record Profile(String name, int forks, int warmups, int warmupMillis, int iterations, int iterationMillis,
                   String[] sizes, String[] threadedSizes, String[] gibs, int singleShots, int verdictForks,
                   int verdictIterations, int numpyRepeats, double numpySeconds, int rssRepeats, int cRepeats,
                   double cMillis) {
    }

    static final String[] ALL_SIZES = {"16", "64", "256", "4096", "65536", "1048576", "16777216"};

    static final Profile QUICK = new Profile("quick", 1, 2, 200, 4, 200, ALL_SIZES,
            new String[] {"64", "4096", "65536"}, new String[] {"1", "4"}, 3, Report.VERDICT_FORKS, 3, 51, 0.05, 5,
            21, 20);

    static final Profile FULL = new Profile("full", 2, 3, 1000, 5, 1000, ALL_SIZES, ALL_SIZES,
            new String[] {"1", "2", "4", "8"}, 5, Report.VERDICT_FORKS, 5, 101, 0.2, 9, 51, 50);

    static final Profile SMOKE = new Profile("smoke", 1, 1, 100, 1, 100, ALL_SIZES,
            new String[] {"64"}, new String[] {"1"}, 1, 1, 1, 11, 0.01, 1, 3, 5);

    /** The stage that measures the trace's peak resident memory in JVMs of its own. */
    static final String RSS_STAGE = "trace-rss";

    /**
     * The JVM option of the benchmarks that allocate Java objects on every operation, in their
     * {@code @Fork(jvmArgsAppend = ...)}: the whole heap is touched before the benchmark starts.
     * Until a JVM has allocated through its young generation once (G1 grows it towards 60% of the
     * 1 GiB heap), every new page of the heap is a page fault, and on this machine's virtual CPUs a
     * first touch costs about 7 µs per 4 KiB page (touching 1 GiB takes 1.9 s). An {@code NDArray}
     * lifecycle allocates 304 B, so for its first 2–2.5 s in a fresh JVM it took 1,000 ns instead of
     * 45 ns, and Netty's pooled buffer 560–600 ns instead of 66 ns: a warm-up of 0.4 s measured only
     * the kernel. In the mixed-size trace, Netty's pooled allocator took 625–660 ns per allocation
     * instead of 161–199, and one {@code Arena.ofConfined} per block 1,112–1,357 ns instead of
     * 478–712 (docs/decisions.md, "Benchmarks measure a touched heap"). Benchmarks that allocate
     * nothing on the heap do without it: touching costs 1.9 s per fork.
     */
    static final String TOUCHED_HEAP = "-XX:+AlwaysPreTouch";

    /** The stage that runs the C allocators' program. */
    static final String C_STAGE = "c-peers";

    /** The allocation benchmarks the goals are decided from (run with the profile's verdict forks). */
    static final String ALLOC_GOALS = PACKAGE + "(AllocFreePeers\\.(cMallocFree|ffmMallocFree|arenaConfined"
            + "|nettyPooled|nettyAdaptive|jnaMallocFree)|AllocFreeDataMem\\.allocator|AllocFreeLoop\\.loop)$";

    /**
     * The pool's pairs, run once more on 1 thread pinned to the second CPU: the baseline of the
     * goal on threads, which on 2 and 4 threads run on both CPUs (see {@link PinnedWorkers}).
     */
    static final String POOL_PAIRS = PACKAGE + "(AllocFreeDataMem\\.allocator|AllocFreeLoop\\.loop)$";

    /** The stage of {@link #POOL_PAIRS} on the second CPU. */
    static final String SECOND_CPU_STAGE = "alloc-1t-second-cpu";

    /** The other allocation benchmarks (one fork in the quick profile). */
    static final String ALLOC_OTHERS = PACKAGE + "(AllocFreePeers\\.(arenaShared|byteBufferDirect)"
            + "|AllocFreeDataMem\\.ndarray|NDArrayWritten\\.\\w+)$";

    /** The name of the stage that times NumPy instead of running JMH. */
    static final String NUMPY_STAGE = "numpy";

    /** The float64 lengths of the array lifecycle runs and of NumPy's: 64 B and 1 MiB. */
    static final long[] ARRAY_ELEMENTS = {8, 131072};

    /**
     * A group of benchmarks run with the same options.
     *
     * @param name    the stage, also its result file's name
     * @param include the regex of its benchmarks
     * @param threads threads
     * @param params  parameter overrides
     * @param single  whether it is a single-shot run
     * @param forks   JVMs per benchmark; 0: the profile's
     * @param iterations measured iterations; 0: the profile's
     * @param warmupMillis the least warm-up time per fork, in milliseconds; 0: the profile's
     * @param firstCpu the CPU JMH's first worker is pinned to (see {@link PinnedWorkers}); 0: the first
     * @param gc       whether JMH's GC profiler runs too (its {@code gc.alloc.rate.norm}: heap bytes per
     *                 operation)
     */
    record Stage(String name, String include, int threads, Map<String, String[]> params, boolean single, int forks,
                 int iterations, int warmupMillis, int firstCpu, boolean gc) {

        Stage(String name, String include, int threads, Map<String, String[]> params, boolean single) {
            this(name, include, threads, params, single, 0, 0, 0, 0, false);
        }

        Stage(String name, String include, int threads, Map<String, String[]> params, boolean single, int forks,
              int iterations) {
            this(name, include, threads, params, single, forks, iterations, 0, 0, false);
        }

        Stage(String name, String include, int threads, Map<String, String[]> params, boolean single, int forks,
              int iterations, int warmupMillis) {
            this(name, include, threads, params, single, forks, iterations, warmupMillis, 0, false);
        }

        /** This stage with its first worker pinned to another CPU. */
        Stage onCpu(int cpu) {
            return new Stage(name, include, threads, params, single, forks, iterations, warmupMillis, cpu, gc);
        }

        /** This stage with JMH's GC profiler. */
        Stage withGc() {
            return new Stage(name, include, threads, params, single, forks, iterations, warmupMillis, firstCpu, true);
        }
    }

    /** The stage that times a program's first seconds in fresh JVMs and fresh Pythons ({@link ColdStart}). */
    static final String COLD_STAGE = "cold";

    /**
     * The least warm-up per fork of the compute kernels: the mixed use in their setup compiles the
     * kernels once per way of use; the measured methods then compile with every path in their profile.
     */
    static final int COMPUTE_WARMUP_MILLIS = 3000;

    /**
     * The least warm-up per fork of the array and exchange stages: the JIT compiles, deoptimises
     * and compiles again the whole creation, export and close path. On a touched heap (see
     * {@link #TOUCHED_HEAP}) that took 0.4–0.6 s on this 2-core machine (200 ms iterations of
     * {@code NDArrayLifecycle.written}: 444, 70, then 53–64 ns; {@code Exchanges.dlpackLegacy}:
     * 52,900, 4,460, then 166–196 ns; {@code Exchanges.pyBuffer}: 170, 91, then 77–84 ns). The
     * 5 s this was before measured the heap's first touch away, which the forks now do before
     * they start.
     */
    static final int ARRAY_WARMUP_MILLIS = 2000;

    /**
     * The least measured iterations per fork of the array, exchange and statistics stages. With the quick
     * profile's three, a goal was decided from nine samples, and JMH's 99.9% interval over nine
     * (Student's t of 5.04) was wider than the differences the goals ask about: the exchanges' round
     * trips read 186 ± 33 ns against a 200 ns target. Ten iterations per fork give thirty samples
     * (t of 3.66) for about 1.5 s more per fork, beside the 5 s warm-up the array and exchange forks
     * pay anyway. The statistics stage decides a difference of about 10 ns between two figures
     * ({@code +stats} adds at most 10 ns), where nine samples each left errors of ±6 ns on both.
     */
    static final int ARRAY_VERDICT_ITERATIONS = 10;

    /** The sizes of the UCX stage: the smallest the socket goal covers, a middle one, the bandwidth goal's. */
    static final String[] UCX_SIZES = {"65536", "1048576", "67108864"};

    static List<Stage> stages(Profile p, List<Integer> threads) {
        List<Stage> stages = new ArrayList<>();
        int vf = p.verdictForks();
        int vi = p.verdictIterations();
        stages.add(new Stage("alloc-1t", ALLOC_GOALS, 1, Map.of("byteSize", p.sizes()), false, vf, vi));
        stages.add(new Stage("alloc-others-1t", ALLOC_OTHERS, 1, Map.of("byteSize", p.sizes()), false));
        if (threads.stream().anyMatch(t -> t > 1) && Runtime.getRuntime().availableProcessors() > 1) {
            // The pool's 1-thread pairs again, on the second CPU: the multi-threaded runs use both.
            stages.add(new Stage(SECOND_CPU_STAGE, POOL_PAIRS, 1, Map.of("byteSize", p.threadedSizes(),
                    "handler", new String[] {"pool(aligned64)"}), false, vf, vi).onCpu(1));
        }
        for (int t : threads) {
            if (t > 1) {
                stages.add(new Stage("alloc-" + t + "t", ALLOC_GOALS, t, Map.of("byteSize", p.threadedSizes()), false,
                        vf, vi));
                stages.add(new Stage("alloc-others-" + t + "t", ALLOC_OTHERS, t,
                        Map.of("byteSize", p.threadedSizes()), false));
            }
        }
        stages.add(new Stage("trace", PACKAGE + "TraceReplay\\.", 1, Map.of(), false, vf, vi));
        stages.add(new Stage(RSS_STAGE, "", 1, Map.of(), false));
        stages.add(new Stage(C_STAGE, "", 1, Map.of(), false));
        String lifecycle = PACKAGE + "NDArrayLifecycle\\.";
        // NumPy is timed before and after the Java lifecycle it is compared with, and the report takes
        // the faster: a slow phase of a shared machine during one timing (NumPy's median once doubled
        // from one run to the next) would otherwise decide the ratio in datamem's favour.
        stages.add(new Stage(NUMPY_STAGE, "", 1, Map.of(), false));
        // the array and exchange stages are short per iteration and long to warm up: more measured
        // iterations per fork cost little there and narrow the errors their verdicts are decided from
        int ai = p == SMOKE ? vi : Math.max(vi, ARRAY_VERDICT_ITERATIONS);
        stages.add(new Stage("arrays-1t", lifecycle, 1, Map.of(), false, vf, ai, ARRAY_WARMUP_MILLIS));
        stages.add(new Stage(NUMPY_STAGE, "", 1, Map.of(), false));
        if (threads.stream().anyMatch(t -> t > 1)) {
            stages.add(new Stage("arrays-2t", lifecycle, 2, Map.of(), false, vf, ai, ARRAY_WARMUP_MILLIS));
        }
        stages.add(new Stage("arrays-access", PACKAGE + "NDArrayAccess\\.", 1, Map.of(), false, vf, ai,
                ARRAY_WARMUP_MILLIS));
        // Heap bytes per written small-array lifecycle (JMH's GC profiler; one fork: the figure is exact)
        stages.add(new Stage("arrays-gc", PACKAGE + "NDArrayLifecycle\\.written$", 1, Map.of("elements",
                new String[] {"8"}, "handler", new String[] {"default_allocator", "pool(aligned64)"}), false, 1, vi)
                .withGc());
        stages.add(new Stage("compute", PACKAGE + "ComputeKernels\\.", 1, Map.of(), false, vf, vi,
                COMPUTE_WARMUP_MILLIS));
        stages.add(new Stage("workspace", PACKAGE + "WorkspaceCycle\\.", 1, Map.of(), false, vf, ai,
                ARRAY_WARMUP_MILLIS));
        stages.add(new Stage(COLD_STAGE, "", 1, Map.of(), false));
        stages.add(new Stage("exchanges", PACKAGE + "Exchanges\\.", 1, Map.of(), false, vf, ai, ARRAY_WARMUP_MILLIS));
        stages.add(new Stage("ipc", PACKAGE + "IpcOpen\\.", 1, Map.of(), false, vf, vi));
        // UCX over loopback: puts over the shared-memory transports against memcpy and a socket copy
        // of the same bytes, and registrations with and without the cache.
        stages.add(new Stage("ucx", PACKAGE + "ucx\\.(UcxTransferBenchmark\\.put|LoopbackBaselineBenchmark\\.|"
                + "UcxRegistrationBenchmark\\.)", 1, Map.of("transport", new String[] {"sm"},
                "byteSize", UCX_SIZES), false, vf, vi));
        stages.add(new Stage("current", PACKAGE + "CurrentHandler\\.", 1, Map.of(), false));
        stages.add(new Stage("statistics", PACKAGE + "StatisticsOverhead\\.", 1, Map.of(), false, vf, ai));
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
        List<Integer> threads = List.of(2, 4);
        Path results = Path.of("benchmarks/target/jmh");
        Path docs = null;
        String python = "python3";
        boolean reportOnly = false;
        String command = "benchmarks/run";
        Instant started = Instant.now();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--full" -> profile = FULL;
                case "--quick" -> profile = QUICK;
                case "--smoke" -> profile = SMOKE;
                case "--python" -> python = value(args, ++i);
                case "--include" -> include = value(args, ++i);
                case "--threads" -> threads = Arrays.stream(value(args, ++i).split(",")).map(String::strip)
                        .map(Integer::valueOf).toList();
                case "--results" -> results = Path.of(value(args, ++i));
                case "--docs" -> docs = Path.of(value(args, ++i));
                case "--report-only" -> reportOnly = true;
                case "--command" -> command = value(args, ++i);
                case "--started" -> started = Instant.ofEpochSecond(Long.parseLong(value(args, ++i)));
                default -> throw new IllegalArgumentException("unknown argument: " + args[i] + " (expected: --full,"
                        + " --smoke, --include REGEX, --threads N,M, --python CMD, --results DIR, --docs DIR,"
                        + " --report-only, --command TEXT, --started EPOCH_SECONDS)");
            }
        }
        Files.createDirectories(results);
        Path runFile = results.resolve("run.properties");
        if (docs == null) {
            boolean smoke = profile == SMOKE || reportOnly && Files.exists(runFile)
                    && Files.readString(runFile).contains("profile=smoke");
            docs = include == null && !smoke ? Path.of("docs") : Path.of("benchmarks/target/report");
        }
        Path notes = results.resolve("notes.txt");
        if (!reportOnly) {
            clean(results);
            String loadBefore = loadAverage();
            cpuSpeed(notes, "before the run");
            List<Stage> stages = stages(profile, threads);
            for (Stage stage : stages) {
                if (stage.name().equals(NUMPY_STAGE)) {
                    runNumPy(profile, include, python, results, notes);
                } else if (stage.name().equals(RSS_STAGE)) {
                    runRss(profile, include, results, notes);
                } else if (stage.name().equals(C_STAGE)) {
                    runCPeers(profile, include, results, notes);
                } else if (stage.name().equals(COLD_STAGE)) {
                    runCold(profile, include, python, results, notes);
                } else {
                    runStage(profile, stage, include, results, notes);
                }
            }
            cpuSpeed(notes, "after the run");
            Properties run = new Properties();
            run.setProperty("profile", profile.name());
            run.setProperty("command", command);
            run.setProperty("started", Long.toString(started.getEpochSecond()));
            run.setProperty("finished", Long.toString(Instant.now().getEpochSecond()));
            run.setProperty("loadBefore", loadBefore);
            run.setProperty("loadAfter", loadAverage());
            run.setProperty("threads", Integer.toString(threads.stream().mapToInt(Integer::intValue).max().orElse(1)));
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

    /**
     * Runs {@code cpu-speed} (benchmarks/src/main/c/cpu-speed.c: each CPU alone, then all at once)
     * and records what it printed in the run's notes, for the page: whether the CPUs the threads were
     * pinned to ran equally fast when the run began and when it ended.
     */
    static void cpuSpeed(Path notes, String when) throws IOException, InterruptedException {
        Path program = library().resolveSibling("cpu-speed");
        List<String> lines = new ArrayList<>();
        if (!Files.isExecutable(program)) {
            lines.add("not measured: " + program + " is missing (benchmarks/run builds it with gcc)");
        } else {
            for (List<String> command : List.of(List.of(program.toString()), List.of(program.toString(), "together"))) {
                Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
                String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
                lines.add(p.waitFor() == 0 ? out.replaceAll("\\s+", " ") : "failed: " + out);
            }
        }
        String line = "CPU speed, " + when + " (scripts/cpu-speed)\t" + String.join("; ", lines);
        System.out.println("# datamem suite: " + line.replace('\t', ' '));
        Files.writeString(notes, line + "\n", StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.CREATE,
                java.nio.file.StandardOpenOption.APPEND);
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
        List<String> jvmArgs = new ArrayList<>(jvmArgs(notes));
        jvmArgs.addAll(List.of("-Xms1g", "-Xmx1g"));
        if (stage.firstCpu() != 0) {
            jvmArgs.add("-D" + PinnedWorkers.FIRST_CPU_PROPERTY + "=" + stage.firstCpu());
        }
        ChainedOptionsBuilder o = new OptionsBuilder()
                .include(regex)
                .forks(stage.forks() > 0 ? stage.forks() : p.forks())
                .threads(stage.threads())
                .shouldFailOnError(false)
                .jvmArgs(jvmArgs.toArray(String[]::new))
                .resultFormat(ResultFormatType.JSON)
                .result(results.resolve(stage.name() + ".json").toString());
        if (stage.single()) {
            o.warmupIterations(1).measurementIterations(p.singleShots());
        } else {
            int warmups = p.warmups();
            int warmupMillis = p.warmupMillis();
            if (p != SMOKE && stage.warmupMillis() > warmups * warmupMillis) {
                warmups = Math.ceilDiv(stage.warmupMillis(), warmupMillis);
            }
            o.warmupIterations(warmups).warmupTime(TimeValue.milliseconds(warmupMillis))
                    .measurementIterations(stage.iterations() > 0 ? stage.iterations() : p.iterations())
                    .measurementTime(TimeValue.milliseconds(p.iterationMillis()));
        }
        stage.params().forEach(o::param);
        if (stage.gc()) {
            o.addProfiler(org.openjdk.jmh.profile.GCProfiler.class);
        }
        System.out.println("# datamem suite: stage " + stage.name() + " (" + p.name() + " profile)");
        for (int waited = 0; ; waited += 5) {
            try {
                new Runner(o.build()).run();
                return;
            } catch (NoBenchmarksException e) {
                System.out.println("# datamem suite: stage " + stage.name() + ": nothing matches " + include);
                return;
            } catch (RunnerException e) {
                // Another JMH run on this machine (JMH allows one at a time): wait for it, up to 15 minutes.
                if (e.getMessage() == null || !e.getMessage().contains("JMH lock") || waited >= 900) {
                    throw e;
                }
                if (waited == 0) {
                    System.out.println("# datamem suite: stage " + stage.name() + ": another JMH run holds the lock;"
                            + " waiting for it");
                }
                try {
                    Thread.sleep(5000);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    private static Path library() {
        return Path.of(System.getProperty(NativeCalls.LIBRARY_PROPERTY, "benchmarks/target/native/libdmbench.so"))
                .toAbsolutePath();
    }

    /** The JVM arguments of every benchmark JVM but its heap size. */
    private static List<String> jvmArgs(Path notes) {
        return List.of("--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow",
                "-D" + NativeCalls.LIBRARY_PROPERTY + "=" + library(), "-D" + Notes.PROPERTY + "="
                        + notes.toAbsolutePath(),
                "-Djmh.executor=CUSTOM", "-Djmh.executor.class=" + PinnedWorkers.class.getName());
    }

    /** Whether {@code --include} leaves a stage of programs of its own in: it must match one of the names. */
    private static boolean included(String include, String... names) {
        if (include == null) {
            return true;
        }
        Pattern in = Pattern.compile(include);
        return Arrays.stream(names).anyMatch(n -> in.matcher(n).find());
    }

    /** Times a program's first seconds in fresh JVMs and fresh Pythons (see {@link ColdStart}). */
    private static void runCold(Profile p, String include, String python, Path results, Path notes)
            throws IOException, InterruptedException {
        if (!included(include, ColdStart.JAVA_FIRST, ColdStart.NUMPY_FIRST)) {
            return;
        }
        int repeats = p == SMOKE ? 1 : p.verdictForks() * 2;
        System.out.println("# datamem suite: stage " + COLD_STAGE + " (" + p.name() + " profile): " + repeats
                + " fresh JVMs and Pythons");
        ColdStart.run(repeats, jvmArgs(notes), python, results.resolve(COLD_STAGE + ".json"), notes);
    }

    /** Measures the trace's peak resident memory per allocator, in JVMs of its own. */
    private static void runRss(Profile p, String include, Path results, Path notes)
            throws IOException, InterruptedException {
        if (!included(include, TraceRss.BENCHMARK)) {
            return;
        }
        System.out.println("# datamem suite: stage " + RSS_STAGE + " (" + p.name() + " profile): " + p.rssRepeats()
                + " JVMs per allocator");
        List<String> allocators = TraceHeaps.NAMES.stream().filter(a -> !a.equals("jna") && !a.equals("ffm"))
                .toList();
        TraceRss.run(allocators, p.rssRepeats(), jvmArgs(notes), results.resolve(RSS_STAGE + ".json"), notes);
    }

    /** Runs the C allocators' program plainly and under each LD_PRELOAD. */
    private static void runCPeers(Profile p, String include, Path results, Path notes)
            throws IOException, InterruptedException {
        if (!included(include, "io.datamem.benchmarks.CPeers.pair", "io.datamem.benchmarks.CPeers.trace",
                "io.datamem.benchmarks.CPeers.rss")) {
            return;
        }
        Path program = library().resolveSibling("dmbench-pairs");
        Path trace = results.resolve("trace.bin");
        Trace.standard().write(trace);
        System.out.println("# datamem suite: stage " + C_STAGE + " (" + p.name() + " profile): " + program + ", "
                + p.cRepeats() + " repeats of " + p.cMillis() + " ms per case");
        CPeers.run(program, trace, p.cRepeats(), p.cMillis(), List.of(p.sizes()), results.resolve(C_STAGE + ".json"),
                notes);
    }

    /**
     * Times NumPy's array lifecycle, unless {@code --include} leaves out both it and the Java lifecycle
     * it is compared with.
     */
    private static void runNumPy(Profile p, String include, String python, Path results, Path notes)
            throws IOException, InterruptedException {
        if (include != null) {
            Pattern in = Pattern.compile(include);
            if (!in.matcher(NumPyTiming.BENCHMARK).find()
                    && !in.matcher(PACKAGE.replace("\\", "") + "NDArrayLifecycle.written").find()) {
                return;
            }
        }
        System.out.println("# datamem suite: stage " + NUMPY_STAGE + " (" + p.name() + " profile): " + python
                + " timeit, " + p.numpyRepeats() + " repeats of " + p.numpySeconds() + " s per length");
        Path out = results.resolve("numpy.json");
        if (Files.exists(out)) {
            out = results.resolve("numpy-after.json");
        }
        NumPyTiming.run(python, p.numpyRepeats(), p.numpySeconds(), ARRAY_ELEMENTS, out, notes);
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
