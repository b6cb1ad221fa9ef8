package io.datamem.benchmarks.report;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ReportTest {

    static {
        System.setProperty("java.awt.headless", "true");
    }

    static final Machine MACHINE = new Machine("Test CPU", 2, 24L << 30, "Linux 6.1 amd64", "madvise (defrag madvise)",
            true, "glibc 2.36", "JDK 25");
    static final String JDK = "JDK 25.0.3, OpenJDK 64-Bit Server VM 25.0.3+9-LTS";

    @TempDir
    Path dir;

    /** Results of a whole run; {@code figures} overrides ns/op by row label (all sizes) or key. */
    static List<Result> run(Map<String, Double> figures) {
        List<Result> rs = new ArrayList<>();
        int forks = figures.getOrDefault("forks", 3.0).intValue();
        for (int threads : new int[] {1, 2, 4}) {
            for (long size : Report.SIZES) {
                for (Row row : Row.ROWS) {
                    if (threads > 1 && Row.C_ROWS.contains(row)) {
                        continue;   // the C allocators' own process runs one thread
                    }
                    String t = threads == 1 ? "" : "@" + threads + "t";
                    // The loop rows take their handler's figure unless given one of their own.
                    String same = row == Row.POOL_LOOP ? Row.POOL.label()
                            : row == Row.DEFAULT_LOOP ? Row.DEFAULT.label() : row.label();
                    double v = figures.getOrDefault(row.label() + "@" + size + t, figures.getOrDefault(
                            row.label() + t, figures.getOrDefault(row.label(), figures.getOrDefault(same + "@" + size
                                    + t, figures.getOrDefault(same + t, figures.getOrDefault(same,
                                    row.javaPeer() ? 100.0 : 10.0))))));
                    Map<String, String> p = new HashMap<>();
                    p.put("byteSize", Long.toString(size));
                    if (row.handler() != null) {
                        p.put(row.paramName(), row.handler());
                    }
                    rs.add(new Result(row.benchmark(), p, threads, "avgt", v, v / 20, "ns/op", JDK,
                            Row.C_ROWS.contains(row) ? 1 : forks, Map.of()));
                }
            }
        }
        for (String a : List.of("c", "default_allocator", "aligned64", "pool(aligned64)", "ffm", "jna", "nettyPooled",
                "nettyAdaptive", "arenaConfined")) {
            double v = figures.getOrDefault("trace-" + a, a.equals("pool(aligned64)") ? 30.0 : 50.0);
            rs.add(new Result("TraceReplay.replay", Map.of("allocator", a), 1, "avgt", v, v / 20, "ns/op", JDK, forks,
                    Map.of()));
            if (!a.equals("ffm") && !a.equals("jna")) {
                double m = figures.getOrDefault("rss-" + a, a.equals("pool(aligned64)") ? 22.0 * (1 << 20)
                        : 20.0 * (1 << 20));
                rs.add(new Result("TraceRss.peak", Map.of("allocator", a), 1, "ss", m,
                        figures.getOrDefault("rss-error", m / 100), "B", JDK, figures.getOrDefault("rss-forks", 5.0)
                        .intValue(), Map.of()));
            }
        }
        for (String a : List.of("glibc", "mimalloc", "jemalloc", "tcmalloc")) {
            rs.add(new Result("CPeers.trace", Map.of("allocator", a), 1, "avgt", 20.0, 1.0, "ns/op", "C", 1, Map.of()));
            rs.add(new Result("CPeers.rss", Map.of("allocator", a), 1, "ss", 24.0 * (1 << 20), Double.NaN, "B", "C", 1,
                    Map.of()));
        }
        for (String b : List.of("current", "threadLocal", "currentLoop", "currentScopedLoop", "threadLocalLoop")) {
            double v = figures.getOrDefault(b, 1.0);
            rs.add(new Result("CurrentHandler." + b, Map.of(), 1, "avgt", v, 0.05, "ns/op", JDK));
        }
        for (String h : List.of("pool(aligned64)", "default_allocator")) {
            for (String o : List.of("plain", "stats", "micrometer")) {
                double v = figures.getOrDefault(o, o.equals("plain") ? 20.0 : o.equals("stats") ? 25.0 : 35.0);
                rs.add(new Result("StatisticsOverhead.pair", Map.of("handler", h, "observer", o, "byteSize", "64"), 1,
                        "avgt", v, 0.5, "ns/op", JDK, forks, Map.of()));
            }
        }
        for (int gib : new int[] {1, 4}) {
            for (String pages : List.of("thp", "4k")) {
                double gups = figures.getOrDefault("gups-" + pages, pages.equals("thp") ? 50.0 : 100.0);
                rs.add(new Result("RandomAccess.update", Map.of("gib", "" + gib, "pages", pages), 1, "avgt", gups, 1,
                        "ns/op", JDK));
                rs.add(new Result("FirstTouch.touch", Map.of("gib", "" + gib, "pages", pages), 1, "ss",
                        gib * (pages.equals("thp") ? 150.0 : 400.0), 10, "ms/op", JDK));
            }
        }
        for (int threads : new int[] {1, 2}) {
            for (String h : Report.ARRAY_HANDLERS) {
                for (long n : Report.ARRAY_ELEMENTS) {
                    for (String m : List.of("written", "neverWritten", "mallocFree")) {
                        String key = m + (threads == 2 ? "-2t" : "");
                        double v = figures.getOrDefault(key + "@" + h, figures.getOrDefault(key,
                                m.equals("written") ? (threads == 2 ? 45.0 : 40.0) : m.equals("mallocFree") ? 20.0
                                        : 30.0));
                        rs.add(new Result("NDArrayLifecycle." + m, Map.of("handler", h, "elements", "" + n), threads,
                                "avgt", v, v / 20, "ns/op", JDK, forks, Map.of()));
                    }
                }
            }
        }
        if (!figures.containsKey("no-numpy")) {
            for (long n : Report.ARRAY_ELEMENTS) {
                double v = figures.getOrDefault("numpy", 190.0);
                rs.add(new Result("NumPy.lifecycle", Map.of("elements", "" + n, "repeats", "51", "loops", "100000"), 1,
                        "timeit", v, 2.0, "ns/op", "NumPy 2.4.6 on CPython 3.11.7", 1,
                        Map.of(0.0, v - 5, 25.0, v - 1, 50.0, v, 75.0, v + 1, 100.0, v + 9)));
            }
        }
        for (String m : List.of("ndarrayGet1d", "ndarraySet1d", "ndarrayGet2d", "ndarraySet2d", "segmentGet1d",
                "segmentSet1d", "segmentGet2d", "segmentSet2d", "arrayGet1d", "arraySet1d", "arrayGet2d",
                "arraySet2d")) {
            double v = figures.getOrDefault(m, m.startsWith("ndarray") ? 1.2 : m.startsWith("segment") ? 1.0 : 0.9);
            rs.add(new Result("NDArrayAccess." + m, Map.of(), 1, "avgt", v, 0.01, "ns/op", JDK, forks, Map.of()));
        }
        for (String m : List.of("dlpackLegacy", "dlpackVersioned", "arrowCData", "pyBuffer", "nep49Pair",
                "emptyUpcall", "javaPair")) {
            double v = figures.getOrDefault("exchange-" + m, switch (m) {
                case "dlpackLegacy", "dlpackVersioned", "arrowCData" -> 150.0;
                case "pyBuffer" -> 100.0;
                case "nep49Pair" -> 50.0;
                case "emptyUpcall" -> 10.0;
                default -> 20.0;
            });
            rs.add(new Result("Exchanges." + m, Map.of(), 1, "avgt", v, v / 50, "ns/op", JDK, forks, Map.of()));
        }
        for (String m : List.of("handleOf", "openCached", "openCachedSegment", "openCold", "allocateFree")) {
            double v = figures.getOrDefault("ipc-" + m, m.endsWith("Cold") || m.equals("allocateFree") ? 50_000.0
                    : 30.0);
            rs.add(new Result("IpcOpen." + m, Map.of("byteSize", "65536"), 1, "avgt", v, v / 50, "ns/op", JDK, forks,
                    Map.of()));
        }
        for (long size : new long[] {65536, 1 << 20, 64L << 20}) {
            // ns for the bytes at 5 GB/s (put), 10 GB/s (memcpy), 1 GB/s (socket) unless a figure says otherwise
            for (String[] b : new String[][] {{"UcxTransferBenchmark.put", "5"}, {"LoopbackBaselineBenchmark.memcpy", "10"},
                    {"LoopbackBaselineBenchmark.socket", "1"}}) {
                double v = figures.getOrDefault("ucx-" + b[0] + "-" + size, size / Double.parseDouble(b[1]));
                Map<String, String> params = b[0].startsWith("Ucx") ? Map.of("byteSize", "" + size, "transport", "sm")
                        : Map.of("byteSize", "" + size);
                // in µs, as the transfer benchmarks report them
                rs.add(new Result(b[0], params, 1, "avgt", v / 1e3, v / 50 / 1e3, "us/op", JDK, forks, Map.of()));
            }
            for (String m : List.of("cached", "uncached")) {
                double v = figures.getOrDefault("ucx-registration-" + m, m.equals("cached") ? 10.0 : 3000.0);
                rs.add(new Result("UcxRegistrationBenchmark." + m, Map.of("byteSize", "" + size, "transport", "sm"), 1,
                        "avgt", v, v / 50, "ns/op", JDK, forks, Map.of()));
            }
        }
        for (String k : List.of("fill", "dot", "matmul", "rows")) {
            // µs per kernel; NDArray at 1.1× Java unless a figure says otherwise, 2 threads at 1.8× speed-up
            double java = figures.getOrDefault("java-" + k, 100.0);
            double ours = figures.getOrDefault("ndarray-" + k, 110.0);
            double javaPar = figures.getOrDefault("javaParallel-" + k, java / 1.8);
            double oursPar = figures.getOrDefault("ndarrayParallel-" + k, ours / 1.8);
            for (String[] m : new String[][] {{"NDArray", "" + ours}, {"Java", "" + java}, {"Segment", "" + java},
                    {"NDArrayParallel", "" + oursPar}, {"JavaParallel", "" + javaPar}}) {
                double v = Double.parseDouble(m[1]);
                rs.add(new Result("ComputeKernels." + k + m[0], Map.of(), 1, "avgt", v, v / 100, "us/op", JDK, forks,
                        Map.of()));
            }
        }
        for (String h : List.of("default_allocator", "pool(aligned64)")) {
            rs.add(new Result("NDArrayLifecycle.written:gc.alloc.rate.norm", Map.of("handler", h, "elements", "8"), 1,
                    "avgt", figures.getOrDefault("heap", 96.0), 0.01, "B/op", JDK, forks, Map.of()));
        }
        rs.add(new Result("ColdStart.firstArray", Map.of(), 1, "ss", figures.getOrDefault("firstArray", 60.0), 5.0,
                "ms/op", JDK, forks, Map.of()));
        rs.add(new Result("ColdStart.nextLifecycles", Map.of(), 1, "ss", figures.getOrDefault("coldNext", 150.0), 5.0,
                "ns/op", JDK, forks, Map.of()));
        rs.add(new Result("NumPy.coldImport", Map.of(), 1, "ss", 90.0, 4.0, "ms/op", "NumPy 2.4.6", forks, Map.of()));
        rs.add(new Result("NumPy.coldFirstArray", Map.of(), 1, "ss", 91.0, 4.0, "ms/op", "NumPy 2.4.6", forks,
                Map.of()));
        rs.add(new Result("NumPy.coldNextLifecycles", Map.of(), 1, "ss", 250.0, 5.0, "ns/op", "NumPy 2.4.6", forks,
                Map.of()));
        for (String[] w : new String[][] {{"lifecycleInWorkspace", "10"}, {"lifecycleOnPool", "30"},
                {"scopeEnterExit", "20"}, {"cycleWithOneArray", "40"}}) {
            double v = figures.getOrDefault("ws-" + w[0], Double.parseDouble(w[1]));
            rs.add(new Result("WorkspaceCycle." + w[0], Map.of(), 1, "avgt", v, v / 50, "ns/op", JDK, forks,
                    Map.of()));
        }
        for (long offset : new long[] {0, 16, 1}) {
            for (long kib : new long[] {256, 65536}) {
                rs.add(new Result("Streaming.triad", Map.of("offset", "" + offset, "kib", "" + kib), 1, "avgt",
                        kib * (offset == 0 ? 10.0 : 12.0), kib / 10.0, "ns/op", JDK));
            }
        }
        return rs;
    }

    static Report.Run info(String load, List<String> notes) {
        Instant start = Instant.parse("2026-11-22T01:00:00Z");
        return new Report.Run("quick", "benchmarks/run", start, start.plusSeconds(754), load, load, 2, notes);
    }

    Report.Page render(List<Result> results, String load, List<String> notes) {
        return Report.render(results, MACHINE, info(load, notes), dir.resolve("performance"), "performance");
    }

    static String goalRow(String page, String goalStart) {
        return Arrays.stream(page.split("\n")).filter(l -> l.startsWith("| " + goalStart)).findFirst()
                .orElseThrow(() -> new AssertionError("no goal row " + goalStart + " in\n" + page));
    }

    @Test
    void aWholeRunMakesEveryTableChartAndVerdict() throws IOException {
        Report.Page page = render(run(Map.of("C: glibc malloc + free (the floor)", 10.0,
                "datamem: default_allocator", 12.0, "datamem: pool(aligned64)", 5.0)), "0.10, 0.20, 0.30",
                List.of("RandomAccess thp 4 GiB\t0x7f..: 4294967296 on transparent huge pages",
                        "Netty\tversion 4.2, Unsafe true"));
        String md = page.markdown();
        assertFalse(md.contains("{{"), "every slot filled");
        assertTrue(md.contains("benchmarks/run --full"), "the page names the full profile's command");
        assertTrue(md.contains("Generated by `benchmarks/run` (quick profile) on 2026-11-22 01:00 UTC; the command"
                + " took 12 min 34 s"), md);
        assertTrue(md.contains("| processor | Test CPU (virtual machine) |"));
        assertFalse(md.contains("busy with other work"), "a quiet machine gets no warning");
        for (String goal : List.of("mixed-size trace: peak RSS", "`default_allocator` within",
                "`pool(aligned64)` faster", "`pool(aligned64)` per-pair cost on 2 and 4 threads", "`aligned64` ≤",
                "`+stats` adds", "the Micrometer binder adds", "`DataMem.current()`", "transparent huge pages ≥",
                "written-array lifecycle on", "element access", "on 2 threads",
                "each exchange", "a pair through an exported NEP 49 handler", "every kernel through `NDArray`",
                "`Parallel.forRange` on 2 threads", "≤ 96 B of Java heap", "in a fresh JVM", "in a workspace")) {
            assertTrue(goalRow(md, goal).contains("**met**"), goalRow(md, goal));
        }
        assertFalse(md.contains("Why goals were missed"));
        assertTrue(md.contains("| `Py_buffer` (`FULL_RO`): request and release | 100 ± 2.00 |"), md);
        assertTrue(md.contains("| datamem: default_allocator | 12.0 ± 0.60 |"), "ns/op with its error");
        assertTrue(md.contains("| datamem: default_allocator | 1.20× |"), "ratio against C");
        assertTrue(md.contains("| Netty pooled direct | 20.00× |"), "pool against a peer");
        assertTrue(md.contains("## Allocate + free, 2 threads"));
        assertTrue(md.contains("| 4 GiB | 600 ± 10.0 | 1,600 ± 10.0 | 2.67× | 50.0 ± 1.00 | 100 ± 1.00 | 2.00× |"), md);
        assertTrue(md.contains("* RandomAccess thp 4 GiB: 0x7f..: 4294967296 on transparent huge pages"));
        assertTrue(md.contains("* Netty: version 4.2, Unsafe true"));
        assertTrue(md.contains("| default_allocator: `empty` + `setDouble` + `getDouble` + `close` | 40.0 ± 2.00 |"
                + " 45.0 ± 2.25 | 40.0 ± 2.00 | 45.0 ± 2.25 |"), md);
        assertTrue(md.contains("| NumPy: `a = np.empty(n); a[0] = 1.0; b = a[0]; del a` | 190 ± 2.00 | — | 190 ± 2.00"
                + " | — |"), md);
        assertTrue(md.contains("| default_allocator | float64[8] (64 B) | 0.21× | 2.00× | 1.13× |"), md);
        assertTrue(md.contains("| `a = np.empty(131072); a[0] = 1.0; b = a[0]; del a` | 190 | 189 – 191 | 185 – 199 |"
                + " 51 × 100000 |"), md);
        assertTrue(md.contains("| get, 2-D index: `a.getDouble(i, j)` | 1.20 ± 0.01 | 1.00 ± 0.01 | 0.90 ± 0.01 |"
                + " 1.20× | 1.33× |"), md);
        assertTrue(md.contains("Generated by `benchmarks/run` (quick profile) on 2026-11-22 01:00 UTC; the command"
                + " took 12 min 34 s (build included), " + run(Map.of()).size() + " results, run on " + JDK), md);
        assertFalse(md.contains("_No chart"), md);
        assertEquals(List.of("alloc-free-1t.png", "alloc-free-2t.png", "alloc-free-4t.png", "trace.png",
                "current-handler.png", "statistics.png", "first-touch.png", "random-access.png", "streaming.png",
                "array-lifecycle.png"), page.charts());
        assertTrue(md.contains("## Allocate + free, 2 threads"), md);
        assertTrue(md.contains("## Allocate + free, 4 threads"), md);
        assertTrue(md.contains("**4 threads on 2 cores: oversubscribed.**"), md);
        assertFalse(md.contains("**2 threads on 2 cores"), md);
        assertTrue(md.contains("| 16 B | 64 B | 256 B | 4 KiB | 64 KiB | 1 MiB | 16 MiB |"), "seven sizes");
        assertTrue(md.contains("| C, own process: tcmalloc (LD_PRELOAD) | 10.0 ± 0.50 |"), md);
        assertTrue(md.contains("**Headline: `pool(aligned64)` 30.0 ± 1.50 ns per allocation, glibc in C 50.0 ± 2.50"
                + " ns: 0.60× ± 0.04 glibc's time.**"), md);
        assertTrue(md.contains("| datamem: pool(aligned64) | 30.0 ± 1.50 | 0.60× | 1.00× |"), md);
        assertTrue(md.contains("| C, own process: mimalloc (LD_PRELOAD) | 20.0 ± 1.00 | 0.40× | 0.67× |"), md);
        assertTrue(md.contains("| datamem: pool(aligned64) | 22.0 MiB ± 0.22 MiB | 1.10× |"), md);
        assertTrue(md.contains("| C, own process: jemalloc (LD_PRELOAD) | 24.0 MiB | 1.20× |"), md);
        assertTrue(goalRow(md, "mixed-size trace: peak RSS").contains("22.0 MiB against 20.0 MiB: 1.10× ± 0.02"),
                goalRow(md, "mixed-size trace: peak RSS"));
        for (String chart : page.charts()) {
            Path png = dir.resolve("performance").resolve(chart);
            assertTrue(md.contains("](performance/" + chart + ")"), chart + " is embedded");
            byte[] head = Arrays.copyOf(Files.readAllBytes(png), 8);
            assertArrayEquals(new byte[] {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}, head, chart);
        }
    }

    @Test
    void missedGoalsSayWhy() {
        Map<String, Double> f = new HashMap<>();
        f.put("C: glibc malloc + free (the floor)", 10.0);
        f.put("FFM: malloc + free downcalls", 18.0);
        f.put("datamem: default_allocator", 20.0);
        f.put("datamem: pool(aligned64)", 30.0);
        f.put("Netty pooled direct@64", 25.0);
        f.put("currentScopedLoop", 3.0);
        f.put("threadLocalLoop", 1.5);
        f.put("stats", 50.0);
        f.put("gups-thp", 95.0);
        String md = render(run(f), "0.1, 0.1, 0.1", List.of("RandomAccess thp 4 GiB\tno huge pages")).markdown();
        assertTrue(goalRow(md, "`default_allocator` within").contains("**missed**"));
        assertTrue(md.contains("The FFM calls alone exceed the goal"), md);
        assertTrue(md.contains("datamem's own share is 2.00 ns per pair"), md);
        assertTrue(goalRow(md, "`pool(aligned64)` faster").contains("**missed**"));
        assertTrue(md.contains("not faster than Netty pooled direct at 64 B (30.0 ns against 25.0 ns)"), md);
        assertTrue(md.contains("not faster than C: glibc malloc + free at 16 B (30.0 ns against 10.0 ns), 64 B"), md);
        assertFalse(md.contains("not faster than C: glibc malloc + free at 16 B (30.0 ns against 10.0 ns), 64 B (30.0"
                + " ns against 10.0 ns), 256 B (30.0 ns against 10.0 ns), 4 KiB (30.0 ns against 10.0 ns), 64 KiB (30.0"
                + " ns against 10.0 ns), 1 MiB"), "C is a goal only up to 64 KiB");
        assertTrue(goalRow(md, "`DataMem.current()`").contains("**missed**"));
        assertTrue(md.contains("3.00 ns in a loop where `ThreadLocal.get()` takes 1.50 ns"), md);
        assertTrue(goalRow(md, "`+stats` adds").contains("**missed**"));
        assertTrue(goalRow(md, "`+stats` adds").contains("on pool(aligned64): 30.0 ± 0.71 ns"));
        assertTrue(goalRow(md, "transparent huge pages ≥").contains("**missed**"));
        assertTrue(md.contains("the block's residency after touching it was: no huge pages"), md);
        assertTrue(md.contains("**Netty pooled direct** | ") || md.contains("| **0.83×** |"),
                "a peer that beats the pool is in bold");
    }

    @Test
    void computeGoalsCompareKernelsWithJavaInTheSameRun() {
        String md = render(run(Map.of()), "0.1, 0.1, 0.1", List.of()).markdown();
        assertTrue(goalRow(md, "every kernel through `NDArray`").contains("fill 1.10× ± 0.02"),
                goalRow(md, "every kernel through `NDArray`"));
        assertTrue(md.contains("| matrix multiply, 256 × 256 | 110 ± 1.10 | 100 ± 1.00 | 100 ± 1.00 | 1.10×"), md);
        assertTrue(md.contains("| written lifecycle in a `workspace(pool(aligned64))` scope | 10.0 ± 0.20 |"), md);
        assertTrue(md.contains("| fresh Python: `import numpy` (ms) | 90.0 ± 4.00 |"), md);

        Map<String, Double> f = new HashMap<>();
        f.put("ndarrayParallel-rows", 100.0);   // no faster on 2 threads than on 1
        f.put("heap", 160.0);
        f.put("ndarray-dot", 200.0);
        f.put("ws-lifecycleInWorkspace", 20.0);
        md = render(run(f), "0.1, 0.1, 0.1", List.of()).markdown();
        String k = goalRow(md, "every kernel through `NDArray`");
        assertTrue(k.contains("dot 2.00×") && k.endsWith("| **missed** |"), k);
        String p = goalRow(md, "`Parallel.forRange` on 2 threads");
        assertTrue(p.contains("rows: ") && p.endsWith("| **missed** |"), p);
        String h = goalRow(md, "≤ 96 B of Java heap");
        assertTrue(h.contains("default_allocator 160 B") && h.contains("**missed**"), h);
        String w = goalRow(md, "in a workspace");
        assertTrue(w.contains("0.67×") && w.endsWith("| **missed** |"), w);
    }

    @Test
    void computeGoalsUnmeasuredSaySo() {
        List<Result> rs = new ArrayList<>(run(Map.of()));
        rs.removeIf(r -> r.benchmark().startsWith("ComputeKernels.") || r.benchmark().startsWith("WorkspaceCycle.")
                || r.benchmark().startsWith("ColdStart."));
        String md = render(rs, "0.1, 0.1, 0.1", List.of()).markdown();
        for (String goal : List.of("every kernel through `NDArray`", "`Parallel.forRange` on 2 threads",
                "in a fresh JVM", "in a workspace")) {
            assertTrue(goalRow(md, goal).endsWith("| not measured |"), goalRow(md, goal));
        }
        assertTrue(md.contains("_Not measured in this run._"), md);
    }

    @Test
    void arrayGoalsMissedSayWhereTheTimeGoes() {
        Map<String, Double> f = new HashMap<>();
        f.put("written", 150_000.0);
        f.put("written-2t", 300_000.0);
        f.put("neverWritten", 400.0);
        f.put("neverWritten-2t", 400.0);
        f.put("mallocFree", 20.0);
        f.put("ndarrayGet1d", 5.0);
        String md = render(run(f), "0.1, 0.1, 0.1", List.of()).markdown();
        String a = goalRow(md, "written-array lifecycle on");
        assertTrue(a.contains("**missed**"), a);
        assertTrue(a.contains("64 B: 150,000 ± 7,500 ns against NumPy's 190 ± 2.00 ns (median): 789.47× ± 40.3"), a);
        assertTrue(md.contains("64 B on default_allocator: 150,000 ns = malloc + free 20.0 + the array 380 + the access"
                + " 149,600, where NumPy's whole lifecycle takes 190 ns; "), md);
        assertTrue(md.contains("(in ns per lifecycle: *the array* is `empty` + `close` of an array never written, less"
                + " the handler's pair;"), md);
        String c = goalRow(md, "element access");
        assertTrue(c.contains("**missed**") && c.contains("get, 1-D index 5.00× ± 0.05"), c);
        assertTrue(md.contains("get, 1-D index: 5.00 ns through `NDArray` against 1.00 ns through the segment"), md);
        String d = goalRow(md, "on 2 threads");
        assertTrue(d.contains("**missed**") && d.contains("aligned64 1 MiB 2.00× ± 0.14"), d);
        assertTrue(md.contains("pool(aligned64) at 64 B: 300,000 ns per thread against 150,000 ns alone; on the same 2"
                + " threads `empty` + `close` takes 1.00× its 1-thread time and the handler's malloc + free 1.00×"), md);
    }

    @Test
    void arrayGoalsNeedThreeForksAndATargetOutsideTheError() {
        String md = render(run(Map.of("forks", 1.0)), "0.1, 0.1, 0.1", List.of()).markdown();
        for (String goal : List.of("written-array lifecycle on", "element access", "on 2 threads")) {
            assertTrue(goalRow(md, goal).endsWith("| **undecided** (1 fork; a verdict needs at least 3) |"),
                    goalRow(md, goal));
        }
        Map<String, Double> f = new HashMap<>();
        f.put("written", 48.0);   // 0.253× NumPy's 190 ns, with an error of 2.4 ns: straddles 0.25×
        f.put("mallocFree", 20.0);
        f.put("neverWritten", 30.0);
        f.put("written-2t", 48.0);
        md = render(run(f), "0.1, 0.1, 0.1", List.of()).markdown();
        assertTrue(goalRow(md, "written-array lifecycle on").endsWith("| **undecided** (the target lies within the"
                + " error) |"), goalRow(md, "written-array lifecycle on"));
        assertEquals("**undecided** (2 forks; a verdict needs at least 3)",
                Verdicts.strictVerdict(List.of(new Check(true, false)), 2));
        assertEquals("**missed**", Verdicts.strictVerdict(List.of(new Check(false, false),
                new Check(false, true)), 3));
        assertEquals("**undecided** (the target lies within the error)", Verdicts.strictVerdict(List.of(
                new Check(false, true), new Check(true, false)), 5));
    }

    @Test
    void theFasterOfNumPysTwoTimingsIsTheOneCompared() {
        List<Result> rs = new ArrayList<>(run(Map.of()));
        for (long n : Report.ARRAY_ELEMENTS) {   // a timing in a slow phase, listed first
            rs.addFirst(new Result("NumPy.lifecycle", Map.of("elements", "" + n, "repeats", "51", "loops", "100000"), 1,
                    "timeit", 400.0, 2.0, "ns/op", "NumPy 2.4.6 on CPython 3.11.7", 1,
                    Map.of(0.0, 395.0, 25.0, 399.0, 50.0, 400.0, 75.0, 401.0, 100.0, 409.0)));
        }
        String md = render(rs, "0.1, 0.1, 0.1", List.of()).markdown();
        assertTrue(md.contains("| NumPy: `a = np.empty(n); a[0] = 1.0; b = a[0]; del a` | 190 ± 2.00 | — | 190 ± 2.00"),
                md);
        assertFalse(md.contains("400 ± 2.00"), md);
    }

    @Test
    void figuresWithoutAnErrorLeaveArrayGoalsUndecided() {
        List<Result> rs = new ArrayList<>(run(Map.of()));
        rs.replaceAll(r -> r.benchmark().startsWith("NDArrayAccess.")
                ? new Result(r.benchmark(), r.params(), 1, "avgt", r.score(), Double.NaN, "ns/op", JDK, 3, Map.of()) : r);
        String c = goalRow(render(rs, "0.1, 0.1, 0.1", List.of()).markdown(), "element access");
        assertTrue(c.contains("get, 1-D index 1.20× ± n/a"), c);
        assertTrue(c.endsWith("| **undecided** (the target lies within the error) |"), c);
    }

    @Test
    void missingNumPyIsSaidNotInvented() {
        Map<String, Double> f = new HashMap<>();
        f.put("no-numpy", 1.0);
        String md = render(run(f), "0.1, 0.1, 0.1", List.of("NumPy\tnot measured: NumPy cannot be imported by python3"
                + " (CPython 3.11.7): ModuleNotFoundError: No module named 'numpy'"))
                .markdown();
        String a = goalRow(md, "written-array lifecycle on");
        assertTrue(a.endsWith("| NumPy not measured: NumPy cannot be imported by python3 (CPython 3.11.7):"
                + " ModuleNotFoundError: No module named 'numpy' | not measured |"), a);
        assertTrue(md.contains("NumPy, timed by `benchmarks/run` in the same run: not measured: NumPy cannot be"
                + " imported"), md);
        assertTrue(md.contains("| NumPy: `a = np.empty(n); a[0] = 1.0; b = a[0]; del a` | n/a | — | n/a | — |"), md);
        assertFalse(md.contains("* NumPy:"), "said once, beside the figures, not again in the notes");
    }

    @Test
    void aGoalWithinTheErrorSaysSo() {
        List<Result> rs = new ArrayList<>(run(Map.of("stats", 30.0)));
        rs.replaceAll(r -> r.benchmark().equals("StatisticsOverhead.pair") && r.param("observer").equals("stats")
                ? new Result(r.benchmark(), r.params(), 1, "avgt", 29.0, 5.0, "ns/op", JDK, 3, Map.of()) : r);
        String md = render(rs, "0.1, 0.1, 0.1", List.of()).markdown();
        assertTrue(goalRow(md, "`+stats` adds").endsWith("| **undecided** (the target lies within the error) |"),
                goalRow(md, "`+stats` adds"));
    }

    static final List<String> ALLOCATOR_GOALS = List.of("`default_allocator` within", "`pool(aligned64)` faster",
            "`pool(aligned64)` per-pair cost on 2 and 4 threads", "`aligned64` ≤", "`+stats` adds",
            "the Micrometer binder adds");

    @Test
    void allocatorGoalsNeedThreeForks() {
        String md = render(run(Map.of("forks", 1.0, "rss-forks", 1.0)), "0.1, 0.1, 0.1", List.of()).markdown();
        for (String goal : ALLOCATOR_GOALS) {
            assertTrue(goalRow(md, goal).endsWith("| **undecided** (1 fork; a verdict needs at least 3) |"),
                    goalRow(md, goal));
        }
        assertTrue(goalRow(md, "mixed-size trace: peak RSS").endsWith("| **undecided** (1 fork; a verdict needs at"
                + " least 3) |"), goalRow(md, "mixed-size trace: peak RSS"));
    }

    @Test
    void allocatorGoalsStraddlingTheirTargetAreUndecidedAndPrintTheirError() {
        Map<String, Double> f = new HashMap<>();
        f.put("datamem: pool(aligned64)", 10.0);   // = C's 10 ns ± 5%: straddles 1.00×
        f.put("datamem: pool(aligned64)@2t", 12.0);   // 1.20× ± 0.08: straddles 1.2×
        f.put("datamem: aligned64", 13.0);   // 1.30× ± 0.09 of default's 10: straddles 1.3×
        f.put("datamem: default_allocator", 13.0);   // 1.30× of C: straddles 1.3×
        f.put("rss-pool(aligned64)", 24.0 * (1 << 20));   // 1.20× of glibc's 20 MiB
        f.put("rss-error", 1.0 * (1 << 20));
        f.put("stats", 30.0);   // + 10 ns ± 0.71
        f.put("micrometer", 45.0);   // + 15 ns ± 0.71
        String md = render(run(f), "0.1, 0.1, 0.1", List.of()).markdown();
        for (String goal : List.of("`default_allocator` within", "`pool(aligned64)` faster",
                "`pool(aligned64)` per-pair cost on 2 and 4 threads", "`+stats` adds", "the Micrometer binder adds",
                "mixed-size trace: peak RSS")) {
            assertTrue(goalRow(md, goal).endsWith("| **undecided** (the target lies within the error) |"),
                    goalRow(md, goal));
        }
        assertTrue(goalRow(md, "`pool(aligned64)` faster").contains("÷ C: glibc malloc + free: worst 1.00× ± 0.07 at"),
                goalRow(md, "`pool(aligned64)` faster"));
        assertTrue(goalRow(md, "`pool(aligned64)` per-pair cost").contains("2 threads 64 B 1.20× ± 0.08"),
                goalRow(md, "`pool(aligned64)` per-pair cost"));
        assertTrue(goalRow(md, "`aligned64` ≤").contains("16 B 1.00× ± 0.07"), goalRow(md, "`aligned64` ≤"));
        assertTrue(goalRow(md, "`+stats` adds").contains("on default_allocator: 10.0 ± 0.71 ns"),
                goalRow(md, "`+stats` adds"));
        assertTrue(goalRow(md, "the Micrometer binder adds").contains("on pool(aligned64): 15.0 ± 0.71 ns"),
                goalRow(md, "the Micrometer binder adds"));
    }

    @Test
    void threadsAreHeldToTheMeanOfTheOneThreadRunsOnEachCpu() {
        Map<String, Double> f = new HashMap<>();
        f.put("datamem: pool(aligned64)@2t", 14.0);   // 1.40× the first CPU's 10 ns: missed on it alone
        List<Result> rs = new ArrayList<>(run(f));
        for (long size : Report.SIZES) {   // the second CPU takes 14 ns alone: the mean is 12, and 14 is 1.17×
            Map<String, String> p = new HashMap<>(Map.of("byteSize", Long.toString(size), Row.POOL.paramName(),
                    Row.POOL.handler(), Result.FIRST_CPU, "1"));
            rs.add(new Result(Row.POOL.benchmark(), p, 1, "avgt", 14.0, 0.01, "ns/op", JDK, 3, Map.of()));
        }
        String md = render(rs, "0.1, 0.1, 0.1", List.of()).markdown();
        String g = goalRow(md, "`pool(aligned64)` per-pair cost on 2 and 4 threads");
        assertTrue(g.contains("2 threads 64 B 1.17× ± 0.06"), g);
        assertTrue(md.contains("The 1-thread cost is the mean of the pool's 1-thread runs on each CPU the threads run on"
                + " (16 B 10.0 ns on the first CPU, 14.0 ns on the second; 64 B 10.0 ns"), md);
        // The 1-thread tables show the first CPU's runs only.
        assertTrue(md.contains("| datamem: pool(aligned64) | 10.0 ± 0.50 |"), md);
        String without = goalRow(render(run(f), "0.1, 0.1, 0.1", List.of()).markdown(),
                "`pool(aligned64)` per-pair cost on 2 and 4 threads");
        assertTrue(without.contains("2 threads 64 B 1.40×"), without);
    }

    @Test
    void oversubscribedThreadsAreJudgedOnTheirShareOfTheCores() {
        Map<String, Double> f = new HashMap<>();
        f.put("datamem: pool(aligned64)@4t", 16.0);   // per thread 1.60× of 10 ns, on 4 threads over 2 cores: 0.80×
        String md = render(run(f), "0.1, 0.1, 0.1", List.of()).markdown();
        String g = goalRow(md, "`pool(aligned64)` per-pair cost on 2 and 4 threads");
        assertTrue(g.contains("4 threads 64 B 0.80× ± 0.06 (per thread 1.60×)"), g);
        assertTrue(g.endsWith("| **met** |"), g);
        f.put("datamem: pool(aligned64)@4t", 30.0);
        md = render(run(f), "0.1, 0.1, 0.1", List.of()).markdown();
        g = goalRow(md, "`pool(aligned64)` per-pair cost on 2 and 4 threads");
        assertTrue(g.endsWith("| **missed** |"), g);
        assertTrue(md.contains("4 threads at 64 B: 30.0 ns per pair on each thread against 10.0 ns alone"), md);
    }

    @Test
    void aMissingCAllocatorIsSaid() {
        List<Result> rs = new ArrayList<>(run(Map.of()));
        rs.removeIf(r -> r.benchmark().startsWith("CPeers.") && "mimalloc".equals(r.param("allocator")));
        String md = render(rs, "0.1, 0.1, 0.1", List.of("C allocators\tmimalloc: not measured:"
                + " /usr/lib/x86_64-linux-gnu/libmimalloc.so.2 is missing (Debian: apt-get install libmimalloc2.0)",
                "C allocators\ttcmalloc: malloc from /usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4 (LD_PRELOAD)"))
                .markdown();
        assertTrue(md.contains("**Not measured here:** mimalloc: not measured: /usr/lib/x86_64-linux-gnu/libmimalloc.so.2"
                + " is missing (Debian: apt-get install libmimalloc2.0)."), md);
        assertFalse(md.contains("| C, own process: mimalloc"), md);
        assertTrue(md.contains("* C allocators: tcmalloc: malloc from"), md);
    }

    @Test
    void verdictsAreQualifiedOnlyWhenARerunCouldFlipThem() {
        assertEquals("**missed**", Verdicts.verdict(List.of(new Check(false, false),
                new Check(false, true), new Check(true, true))));
        assertEquals("**missed** (within the error)", Verdicts.verdict(List.of(new Check(false, true),
                new Check(true, false))));
        assertEquals("**met** (within the error)", Verdicts.verdict(List.of(new Check(true, true),
                new Check(true, false))));
        assertEquals("**met**", Verdicts.verdict(List.of(new Check(true, false))));
    }

    @Test
    void aCLoopSlowerThanFfmIsCalledAReference() {
        Map<String, Double> f = new HashMap<>();
        f.put("C: glibc malloc + free (the floor)", 10.0);
        f.put("C: glibc malloc + free (the floor)@4096", 80.0);
        f.put("FFM: malloc + free downcalls", 11.0);
        String md = render(run(f), "0.1, 0.1, 0.1", List.of()).markdown();
        assertTrue(md.contains("At 4 KiB the C loop took longer than the same two calls made one at a time from Java"),
                md);
    }

    @Test
    void aBusyMachineIsSaid() {
        String md = render(run(Map.of()), "7.30, 5.02, 4.78", List.of()).markdown();
        assertTrue(md.contains("**This machine was busy with other work while the suite ran** (a load average of"
                + " 7.30 on 2 cores when the suite started)"), md);
    }

    @Test
    void theSuitesOwnLoadAtItsEndIsNotOtherWork() {
        Instant start = Instant.parse("2026-11-22T01:00:00Z");
        Report.Run quietStart = new Report.Run("quick", "benchmarks/run", start, start.plusSeconds(754),
                "0.37, 1.15, 1.53", "1.22, 1.41, 1.52", 2, List.of());
        String md = Report.render(List.of(), MACHINE, quietStart, dir.resolve("performance"), "performance").markdown();
        assertFalse(md.contains("busy with other work"), md);
        assertTrue(md.contains("| load average (1, 5, 15 min) | before: 0.37, 1.15, 1.53; after: 1.22, 1.41, 1.52 |"),
                md);

        Report.Run busyEnd = new Report.Run("quick", "benchmarks/run", start, start.plusSeconds(754),
                "0.37, 1.15, 1.53", "2.60, 2.10, 1.90", 2, List.of());
        md = Report.render(List.of(), MACHINE, busyEnd, dir.resolve("performance"), "performance").markdown();
        assertTrue(md.contains("(a load average of 2.60 on 2 cores at its end, where the suite's own benchmark thread"
                + " accounts for about 1)"), md);
    }

    @Test
    void nothingMeasuredIsNotAnError() {
        Report.Page page = render(List.of(), "0, 0, 0", List.of());
        String md = page.markdown();
        assertFalse(md.contains("{{"));
        assertEquals(List.of(), page.charts());
        assertTrue(goalRow(md, "`default_allocator` within").endsWith("| not measured | not measured |"));
        assertTrue(md.contains("_Not measured in this run._"));
    }

    @Test
    void templatesNeedEverySlot() {
        assertEquals("a 1 b", Report.fill("a {{x}} b", Map.of("x", "1")));
        assertEquals("$1 \\", Report.fill("{{x}}", Map.of("x", "$1 \\")), "values are literal");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Report.fill("{{missing}}", Map.of()));
        assertEquals("template slot {{missing}} has no value", e.getMessage());
    }

    @Test
    void formatsSizesAndFigures() {
        assertEquals("64 B", Format.sizeName(64));
        assertEquals("4 KiB", Format.sizeName(4096));
        assertEquals("1 MiB", Format.sizeName(1 << 20));
        assertEquals("16 MiB", Format.sizeName(16L << 20));
        assertEquals("4 GiB", Format.sizeName(4L << 30));
        assertEquals("1.23", Format.fmt(1.234));
        assertEquals("12.3", Format.fmt(12.34));
        assertEquals("1,235", Format.fmt(1234.5));
        assertEquals("n/a", Format.fmt(Double.NaN));
        assertEquals("1.30×", Format.ratio(1.3));
        assertEquals(2 * Math.hypot(0.1, 0.05), Verdicts.ratioError(10, 1, 5, 0.25), 1e-9);
        assertEquals(2.0 * 3 * (1L << 20) / 1.0, 2 * StreamingSection.gbPerSecond(1024, 1.0));
    }

    @Test
    void ucxPutsAreJudgedAgainstMemcpyAndASocketCopy() throws IOException {
        String fast = render(run(Map.of()), "0.1, 0.1, 0.1", List.of()).markdown();
        assertTrue(goalRow(fast, "UCX shared-memory put at 64 MiB").contains("50.0% ±"),
                goalRow(fast, "UCX shared-memory put at 64 MiB"));
        assertTrue(goalRow(fast, "UCX put ≥ 2.00× a socket copy").contains("**met**"),
                goalRow(fast, "UCX put ≥ 2.00× a socket copy"));
        assertTrue(goalRow(fast, "a cached UCX registration").contains("**met**"), goalRow(fast, "a cached UCX registration"));
        assertTrue(fast.contains("| 64 MiB | 5.00 ± 0.10 | 10.0 ± 0.20 | 1.00 ± 0.02 | 0.50× ±"), fast);
        // a slow put at 64 KiB: 1.5x the socket there, so the socket goal is missed at that size
        String slow = render(run(Map.of("ucx-UcxTransferBenchmark.put-65536", 65536 / 1.5,
                "ucx-UcxTransferBenchmark.put-67108864", (64 << 20) / 2.0)), "0.1, 0.1, 0.1", List.of()).markdown();
        String socket = goalRow(slow, "UCX put ≥ 2.00× a socket copy");
        assertTrue(socket.contains("**missed**") && socket.contains("64 KiB 1.50×"), socket);
        assertTrue(goalRow(slow, "UCX shared-memory put at 64 MiB").contains("**missed**"),
                goalRow(slow, "UCX shared-memory put at 64 MiB"));
    }

    @Test
    void theCachedIpcOpenIsJudgedAgainstOneMicrosecond() throws IOException {
        String fast = render(run(Map.of()), "0.1, 0.1, 0.1", List.of()).markdown();
        assertTrue(goalRow(fast, "a cached IPC open").contains("**met**"), goalRow(fast, "a cached IPC open"));
        assertTrue(fast.contains("| open + close with nothing cached"), "the IPC table is on the page");
        String slow = render(run(Map.of("ipc-openCached", 2500.0)), "0.1, 0.1, 0.1", List.of()).markdown();
        assertTrue(goalRow(slow, "a cached IPC open").contains("2,500 ± 50.0 ns"), goalRow(slow, "a cached IPC open"));
        assertTrue(goalRow(slow, "a cached IPC open").contains("**missed**"), goalRow(slow, "a cached IPC open"));
    }

    @Test
    void slowExchangesMissTheirGoalsAndSayWhy() throws IOException {
        String md = render(run(Map.of("exchange-dlpackVersioned", 400.0, "exchange-arrowCData", 300.0,
                "exchange-nep49Pair", 200.0)), "0.1, 0.1, 0.1", List.of()).markdown();
        assertTrue(goalRow(md, "each exchange").contains("arrowCData 300 ± 6.00 ns"), goalRow(md, "each exchange"));
        assertTrue(goalRow(md, "each exchange").contains("**missed**"), goalRow(md, "each exchange"));
        assertTrue(goalRow(md, "each exchange").contains("dlpackVersioned 400 ± 8.00 ns"), goalRow(md, "each exchange"));
        assertTrue(goalRow(md, "a pair through an exported NEP 49 handler").contains("200 ± 4.00 ns against 60.0 ns"),
                goalRow(md, "a pair through an exported NEP 49 handler"));
        assertTrue(md.contains("live-block table"), "the miss says why");
    }
}
