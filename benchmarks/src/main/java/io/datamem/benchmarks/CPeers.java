package io.datamem.benchmarks;

import io.datamem.benchmarks.report.Trace;
import io.datamem.benchmarks.report.Json;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The fastest C allocators as peers: {@code dmbench-pairs} (built from {@code src/main/c} with the C
 * baseline) runs the C pair loop per block size, the {@link Trace} replay and its peak resident memory,
 * once with glibc and once under {@code LD_PRELOAD} of each of mimalloc, jemalloc and tcmalloc (Debian's
 * {@code libmimalloc2.0}, {@code libjemalloc2}, {@code libtcmalloc-minimal4}). A process of its own: a
 * preloaded allocator must not reach a JVM.
 *
 * <p>Writes, in JMH's JSON format, {@code CPeers.pair} (parameters {@code allocator}, {@code byteSize};
 * ns per pair), {@code CPeers.trace} ({@code allocator}; ns per allocation with its free) and
 * {@code CPeers.rss} ({@code allocator}; bytes of peak growth, one measurement): medians of the repeats
 * with their spread as the error. A library that is missing, or that the preload did not install, is
 * named in the notes instead.
 */
public final class CPeers {

    /** The key of the notes lines. */
    public static final String NOTE = "C allocators";

    /** The allocators and the libraries preloaded for them (glibc: none). */
    public static final Map<String, String> LIBRARIES = Map.of(
            "mimalloc", "/usr/lib/x86_64-linux-gnu/libmimalloc.so.2",
            "jemalloc", "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2",
            "tcmalloc", "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4");

    /** Every allocator, in the report's order. */
    public static final List<String> NAMES = List.of("glibc", "mimalloc", "jemalloc", "tcmalloc");

    /** The Debian package of each preloaded library. */
    static final Map<String, String> PACKAGES = Map.of("mimalloc", "libmimalloc2.0", "jemalloc", "libjemalloc2",
            "tcmalloc", "libtcmalloc-minimal4");

    private CPeers() {
    }

    /**
     * Runs the program for every allocator and writes the results.
     *
     * @param program the {@code dmbench-pairs} executable
     * @param trace   the trace file ({@link Trace#write})
     * @param repeats repeats of each timing
     * @param millis  each repeat's length
     * @param sizes   the pair loop's block sizes
     * @param out     the JSON result file
     * @param notes   the notes file
     * @throws IOException          if a file cannot be written
     * @throws InterruptedException if interrupted while waiting
     */
    public static void run(Path program, Path trace, int repeats, double millis, List<String> sizes, Path out,
                           Path notes) throws IOException, InterruptedException {
        StringBuilder json = new StringBuilder("[\n");
        if (!Files.isExecutable(program)) {
            note(notes, "not measured: " + program + " is missing (benchmarks/run builds it with gcc)");
        }
        for (String a : Files.isExecutable(program) ? NAMES : List.<String>of()) {
            String library = LIBRARIES.get(a);
            if (library != null && !Files.isRegularFile(Path.of(library))) {
                note(notes, a + ": not measured: " + library + " is missing (Debian: apt-get install "
                        + PACKAGES.get(a) + ")");
                continue;
            }
            List<String> cmd = new ArrayList<>(List.of(program.toString(), trace.toString(), Integer.toString(repeats),
                    Double.toString(millis)));
            cmd.addAll(sizes);
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT);
            pb.environment().remove("LD_PRELOAD");
            if (library != null) {
                pb.environment().put("LD_PRELOAD", library);
            }
            Process p = pb.start();
            String stdout = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            if (!p.waitFor(5, TimeUnit.MINUTES) || p.exitValue() != 0 || stdout.isEmpty()) {
                p.destroyForcibly();
                note(notes, a + ": not measured: " + program.getFileName() + " failed" + (p.isAlive() ? ""
                        : " (exit " + p.exitValue() + ")"));
                continue;
            }
            Map<?, ?> o = (Map<?, ?>) Json.parse(stdout);
            String served = String.valueOf(o.get("malloc"));
            if (library != null && !served.contains(Path.of(library).getFileName().toString().replaceAll("\\.so.*",
                    ""))) {
                note(notes, a + ": not measured: LD_PRELOAD=" + library + " did not replace malloc (served by "
                        + served + ")");
                continue;
            }
            note(notes, a + ": malloc from " + served + (library != null ? " (LD_PRELOAD)" : ""));
            String version = "C, " + served;
            Map<?, ?> pairs = (Map<?, ?>) o.get("pairs");
            for (String s : sizes) {
                append(json, ExternalResults.result("io.datamem.benchmarks.CPeers.pair", "avgt",
                        Map.of("allocator", a, "byteSize", s), 1, doubles(pairs.get(s)), "ns/op", version));
            }
            append(json, ExternalResults.result("io.datamem.benchmarks.CPeers.trace", "avgt", Map.of("allocator", a), 1,
                    doubles(o.get("trace")), "ns/op", version));
            Map<?, ?> rss = (Map<?, ?>) o.get("rss");
            double growth = (((Number) rss.get("peakKiB")).doubleValue()
                    - ((Number) rss.get("baselineKiB")).doubleValue()) * 1024;
            append(json, ExternalResults.result("io.datamem.benchmarks.CPeers.rss", "ss", Map.of("allocator", a), 1,
                    new double[] {growth}, "B", version));
        }
        json.append("\n]\n");
        Files.writeString(out, json, StandardCharsets.UTF_8);
    }

    private static void append(StringBuilder json, String result) {
        json.append(json.length() > 2 ? ",\n" : "").append(result);
    }

    private static double[] doubles(Object list) {
        return ((List<?>) list).stream().mapToDouble(v -> ((Number) v).doubleValue()).toArray();
    }

    private static void note(Path notes, String text) throws IOException {
        System.out.println("# datamem suite: " + NOTE + ": " + text);
        Files.writeString(notes, NOTE + "\t" + text + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                StandardOpenOption.APPEND);
    }
}
