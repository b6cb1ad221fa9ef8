package io.datamem.benchmarks.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The compute-block goals and the page's section on them: kernels through {@code NDArray} after
 * mixed use against {@code double[]}/{@code double[][]} and the raw segment, on the owner thread and
 * in parallel ({@code ComputeKernels}); heap bytes per written small-array lifecycle (JMH's GC
 * profiler on {@code NDArrayLifecycle.written}); a fresh JVM's first seconds against a fresh
 * Python's ({@code ColdStart}); a workspace's lifecycle and scope ({@code WorkspaceCycle}).
 */
final class ComputeSection extends Section {

    /** Each kernel through NDArray ÷ the same over Java arrays, on the owner thread and in parallel: at most this. */
    static final double KERNEL_VS_JAVA = 1.3;
    /** Parallel.forRange's speed-up over 1 thread ÷ the parallel IntStream's: at least this. */
    static final double SPEEDUP_VS_STREAM = 0.85;
    /** Heap bytes per written small-array lifecycle: at most this. */
    static final double LIFECYCLE_HEAP_BYTES = 96;
    /** Milliseconds from main to the first written array in a fresh JVM: at most this. */
    static final double FIRST_ARRAY_MS = 100;
    /** A fresh JVM's next lifecycles ÷ a fresh Python's plain-loop lifecycles: at most this. */
    static final double COLD_VS_NUMPY = 1.0;
    /** A written lifecycle in a workspace scope ÷ the same on {@code pool(aligned64)}: at most this. */
    static final double WORKSPACE_VS_POOL = 0.5;
    /** A workspace scope's enter + exit: at most this many ns. */
    static final double SCOPE_NS = 50;

    /** The kernels, as the benchmark methods' prefixes name them, and how the page names them. */
    static final String[][] KERNELS = {{"fill", "fill, 4 MiB vector"}, {"dot", "dot product, 2 × 4 MiB"},
            {"matmul", "matrix multiply, 256 × 256"}, {"rows", "row loop, 256 rows of 256"}};

    ComputeSection(PageInput input) {
        super(input);
    }

    private Optional<Result> kernel(String method) {
        return find(x -> x.benchmark().equals("ComputeKernels." + method));
    }

    // ---------------------------------------------------------------------------------------------
    // Goals

    /** The compute block's goals, in the order of the goals table. */
    List<Goal> goals() {
        List<Goal> goals = new ArrayList<>();
        goals.add(kernelsVsJava());
        goals.add(parallelVsStream());
        goals.add(heapBytes());
        goals.add(coldStart());
        goals.add(workspace());
        return goals;
    }

    private Goal kernelsVsJava() {
        String goal = "every kernel through `NDArray` accessors ≤ " + KERNEL_VS_JAVA + "× the same over `double[]`/"
                + "`double[][]`, on the owner thread and in `Parallel.forRange` (parallel `IntStream`), in one JVM"
                + " after mixed use";
        List<String> parts = new ArrayList<>();
        List<Check> checks = new ArrayList<>();
        int forks = Integer.MAX_VALUE;
        for (String[] k : KERNELS) {
            for (String suffix : new String[] {"", "Parallel"}) {
                Optional<Result> a = kernel(k[0] + "NDArray" + suffix);
                Optional<Result> j = kernel(k[0] + "Java" + suffix);
                if (a.isEmpty() || j.isEmpty()) {
                    continue;
                }
                Ratio q = Ratio.of(a.get(), j.get());
                forks = Math.min(forks, q.forks());
                checks.add(q.check(KERNEL_VS_JAVA));
                parts.add(k[0] + (suffix.isEmpty() ? "" : " (parallel)") + " " + q);
            }
        }
        if (checks.isEmpty()) {
            return new Goal(goal, Goal.NOT_MEASURED, Goal.NOT_MEASURED, "");
        }
        return new Goal(goal, String.join("; ", parts), Verdicts.strictVerdict(checks, forks), "");
    }

    private Goal parallelVsStream() {
        String goal = "`Parallel.forRange` on 2 threads ≤ " + KERNEL_VS_JAVA + "× a parallel `IntStream` over Java"
                + " arrays, and its speed-up over 1 thread ≥ " + SPEEDUP_VS_STREAM + "× the `IntStream`'s";
        List<String> parts = new ArrayList<>();
        List<Check> checks = new ArrayList<>();
        int forks = Integer.MAX_VALUE;
        for (String[] k : KERNELS) {
            Optional<Result> a1 = kernel(k[0] + "NDArray");
            Optional<Result> a2 = kernel(k[0] + "NDArrayParallel");
            Optional<Result> j1 = kernel(k[0] + "Java");
            Optional<Result> j2 = kernel(k[0] + "JavaParallel");
            if (a1.isEmpty() || a2.isEmpty() || j1.isEmpty() || j2.isEmpty()) {
                continue;
            }
            Ratio vs = Ratio.of(a2.get(), j2.get());
            checks.add(vs.check(KERNEL_VS_JAVA));
            double ours = a1.get().score() / a2.get().score();
            double theirs = j1.get().score() / j2.get().score();
            double rel = ours / theirs;
            double err = Verdicts.knownRatioError(a1.get().score(), a1.get().error(), a2.get().score(),
                    a2.get().error());
            double errJ = Verdicts.knownRatioError(j1.get().score(), j1.get().error(), j2.get().score(),
                    j2.get().error());
            double relErr = Verdicts.knownRatioError(ours, err, theirs, errJ);
            // at least the target: the check is on target / rel <= 1
            checks.add(new Check(rel >= SPEEDUP_VS_STREAM, !(Math.abs(rel - SPEEDUP_VS_STREAM) >= relErr)));
            forks = Math.min(forks, vs.forks());
            parts.add(k[0] + ": " + vs + " the stream; speed-up " + Format.ratio(ours) + " against the stream's "
                    + Format.ratio(theirs) + " (" + Format.ratio(rel) + " ± " + Format.fmt(relErr) + ")");
        }
        if (checks.isEmpty()) {
            return new Goal(goal, Goal.NOT_MEASURED, Goal.NOT_MEASURED, "");
        }
        return new Goal(goal, String.join("; ", parts), Verdicts.strictVerdict(checks, forks), "");
    }

    private Goal heapBytes() {
        String goal = "≤ " + (long) LIFECYCLE_HEAP_BYTES + " B of Java heap per written small-array lifecycle"
                + " (`empty(FLOAT64, 8)`, `setDouble`, `getDouble`, `close`)";
        List<String> parts = new ArrayList<>();
        boolean met = true;
        for (String h : new String[] {"default_allocator", "pool(aligned64)"}) {
            Optional<Result> g = find(x -> x.benchmark().equals("NDArrayLifecycle.written:gc.alloc.rate.norm")
                    && h.equals(x.param("handler")) && "8".equals(x.param("elements")));
            if (g.isPresent()) {
                met &= g.get().score() <= LIFECYCLE_HEAP_BYTES + 0.5;
                parts.add(h + " " + Format.fmt(g.get().score()) + " B");
            }
        }
        if (parts.isEmpty()) {
            return new Goal(goal, Goal.NOT_MEASURED, Goal.NOT_MEASURED, "");
        }
        return new Goal(goal, String.join("; ", parts), Verdicts.verdict(met, false), met ? "" : "the array"
                + " object (80 B: its layout in fields, and a view's base) and its memory (64 B: the phantom reference that frees a leaked"
                + " array, with the block's handler, address and size, its state and its owner) remain; see"
                + " docs/decisions.md");
    }

    private Goal coldStart() {
        String goal = "in a fresh JVM the first written array ≤ " + Format.fmt(FIRST_ARRAY_MS) + " ms from `main`,"
                + " the next 300,000 ≤ " + COLD_VS_NUMPY + "× NumPy's plain-loop lifecycle each";
        Optional<Result> first = named("ColdStart.firstArray");
        Optional<Result> next = named("ColdStart.nextLifecycles");
        Optional<Result> npNext = named("NumPy.coldNextLifecycles");
        Optional<Result> npImport = named("NumPy.coldImport");
        if (first.isEmpty() || next.isEmpty()) {
            return new Goal(goal, Goal.NOT_MEASURED, Goal.NOT_MEASURED, "");
        }
        List<Check> checks = new ArrayList<>();
        checks.add(new Check(first.get().score() <= FIRST_ARRAY_MS,
                !(Math.abs(first.get().score() - FIRST_ARRAY_MS) >= first.get().error())));
        Optional<Result> aotFirst = named("ColdStart.firstArrayAotCache");
        String figure = "first array " + Format.cell(first.get()) + " ms (with the JDK's AOT cache: "
                + Format.cell(aotFirst) + " ms; NumPy's `import numpy`: " + Format.cell(npImport) + " ms); next "
                + Format.cell(next.get()) + " ns each";
        if (npNext.isPresent()) {
            Ratio q = Ratio.of(next.get(), npNext.get());
            checks.add(q.check(COLD_VS_NUMPY));
            figure += " against NumPy's " + Format.cell(npNext.get()) + " ns: " + q;
        }
        boolean aotMeets = aotFirst.isPresent() && aotFirst.get().score() + aotFirst.get().error() <= FIRST_ARRAY_MS;
        return new Goal(goal, figure, Verdicts.verdict(checks), first.get().score() > FIRST_ARRAY_MS ? "most of"
                + " a fresh JVM's first array is the JDK linking its first FFM downcall (the C library's `malloc`);"
                + (aotMeets ? " a JVM started with an AOT cache (`-XX:AOTCache`, docs/getting-started.md) keeps within"
                + " the target" : " see docs/decisions.md, \"Cold start\"") : "");
    }

    private Goal workspace() {
        String goal = "in a workspace, a written small-array lifecycle ≤ " + WORKSPACE_VS_POOL + "× the same on"
                + " `pool(aligned64)`; a scope's enter + exit ≤ " + Format.fmt(SCOPE_NS) + " ns";
        Optional<Result> ws = named("WorkspaceCycle.lifecycleInWorkspace");
        Optional<Result> pool = named("WorkspaceCycle.lifecycleOnPool");
        Optional<Result> scope = named("WorkspaceCycle.scopeEnterExit");
        if (ws.isEmpty() || pool.isEmpty() || scope.isEmpty()) {
            return new Goal(goal, Goal.NOT_MEASURED, Goal.NOT_MEASURED, "");
        }
        Ratio q = Ratio.of(ws.get(), pool.get());
        List<Check> checks = new ArrayList<>();
        checks.add(q.check(WORKSPACE_VS_POOL));
        checks.add(new Check(scope.get().score() <= SCOPE_NS,
                !(Math.abs(scope.get().score() - SCOPE_NS) >= scope.get().error())));
        return new Goal(goal, "lifecycle " + Format.cell(ws.get()) + " ns against " + Format.cell(pool.get())
                + " ns: " + q + "; enter + exit " + Format.cell(scope.get()) + " ns", Verdicts.strictVerdict(checks,
                Math.min(q.forks(), scope.get().forks())), "");
    }

    // ---------------------------------------------------------------------------------------------
    // The section

    /** The {@code {{compute}}} slot: the kernels table, then workspace, first-seconds and heap figures. */
    String section() {
        StringBuilder b = new StringBuilder();
        b.append("| kernel | NDArray | `double[]` / `double[][]` | raw segment | ÷ Java | NDArray, parallel"
                + " | Java, parallel `IntStream` | ÷ Java | speed-up NDArray / Java |\n");
        b.append("|---|---|---|---|---|---|---|---|---|\n");
        boolean any = false;
        for (String[] k : KERNELS) {
            Optional<Result> a = kernel(k[0] + "NDArray");
            Optional<Result> j = kernel(k[0] + "Java");
            Optional<Result> s = kernel(k[0] + "Segment");
            Optional<Result> ap = kernel(k[0] + "NDArrayParallel");
            Optional<Result> jp = kernel(k[0] + "JavaParallel");
            any |= a.isPresent();
            b.append("| ").append(k[1]).append(" | ").append(Format.cell(a)).append(" | ").append(Format.cell(j))
                    .append(" | ").append(Format.cell(s)).append(" | ").append(ratio(a, j)).append(" | ")
                    .append(Format.cell(ap)).append(" | ").append(Format.cell(jp)).append(" | ").append(ratio(ap, jp))
                    .append(" | ").append(speedups(a, ap, j, jp)).append(" |\n");
        }
        if (!any) {
            return "_Not measured in this run._\n";
        }
        b.append("\nµs per kernel, after the mixed use described above. Through a kernel that the mixed use also"
                + " ran on an int32 array (two dtypes at one call site): fill ").append(Format.cell(kernel(
                "fillNDArrayTwoDtypes"))).append(" (").append(ratio(kernel("fillNDArrayTwoDtypes"), kernel("fillJava")))
                .append(" Java), dot product ").append(Format.cell(kernel("dotNDArrayTwoDtypes"))).append(" (")
                .append(ratio(kernel("dotNDArrayTwoDtypes"), kernel("dotJava"))).append(" Java).\n");
        b.append("\nWorkspace and first seconds:\n\n");
        b.append("| | ns |\n|---|---|\n");
        row(b, "written lifecycle in a `workspace(pool(aligned64))` scope", named("WorkspaceCycle.lifecycleInWorkspace"));
        row(b, "written lifecycle on `pool(aligned64)`", named("WorkspaceCycle.lifecycleOnPool"));
        row(b, "scope enter + exit, empty", named("WorkspaceCycle.scopeEnterExit"));
        row(b, "`Workspace.run` with one array left open", named("WorkspaceCycle.cycleWithOneArray"));
        row(b, "fresh JVM: `main` to the first written array (ms)", named("ColdStart.firstArray"));
        row(b, "fresh JVM: each of the next 300,000", named("ColdStart.nextLifecycles"));
        row(b, "fresh JVM with an AOT cache: `main` to the first written array (ms)",
                named("ColdStart.firstArrayAotCache"));
        row(b, "fresh JVM with an AOT cache: each of the next 300,000", named("ColdStart.nextLifecyclesAotCache"));
        row(b, "fresh Python: `import numpy` (ms)", named("NumPy.coldImport"));
        row(b, "fresh Python: `import numpy` to the first array (ms)", named("NumPy.coldFirstArray"));
        row(b, "fresh Python: each of the next 300,000, plain `for` loop", named("NumPy.coldNextLifecycles"));
        for (String h : new String[] {"default_allocator", "pool(aligned64)"}) {
            row(b, "heap bytes per written lifecycle, " + h + " (B)", find(x -> x.benchmark().equals(
                    "NDArrayLifecycle.written:gc.alloc.rate.norm") && h.equals(x.param("handler"))));
        }
        return b.toString();
    }

    private static void row(StringBuilder b, String what, Optional<Result> res) {
        b.append("| ").append(what).append(" | ").append(Format.cell(res)).append(" |\n");
    }

    private static String ratio(Optional<Result> a, Optional<Result> b) {
        return a.isPresent() && b.isPresent() ? Ratio.of(a.get(), b.get()).toString() : "n/a";
    }

    private static String speedups(Optional<Result> a, Optional<Result> ap, Optional<Result> j, Optional<Result> jp) {
        if (a.isEmpty() || ap.isEmpty() || j.isEmpty() || jp.isEmpty()) {
            return "n/a";
        }
        return Format.ratio(a.get().score() / ap.get().score()) + " / "
                + Format.ratio(j.get().score() / jp.get().score());
    }
}
