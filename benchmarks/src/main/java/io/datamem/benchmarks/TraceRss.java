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
 * Peak resident memory of each allocator replaying the {@link Trace}, every page of every block
 * written: how much memory the allocator holds beyond what the program asked for (fragmentation,
 * size-class rounding, caches). Each measurement is a fresh JVM ({@link #main}) whose heap is
 * small, fully touched up front ({@code -XX:+AlwaysPreTouch}) so that Java objects do not grow the
 * resident set, and whose code is compiled on a small trace of the same shape first; it then resets
 * the kernel's high-water mark ({@code echo 5 > /proc/self/clear_refs}), reads {@code VmRSS}, replays
 * the trace, and reads {@code VmHWM}: the growth is the peak over the baseline.
 *
 * <p>{@link #run} runs those JVMs, several per allocator, and writes the results in JMH's JSON format
 * as benchmark {@value #BENCHMARK} with parameter {@code allocator}, in bytes.
 */
public final class TraceRss {

    /** The benchmark name the results carry. */
    public static final String BENCHMARK = "io.datamem.benchmarks.TraceRss.peak";

    /** The key of the notes line that describes the measurement. */
    public static final String NOTE = "Peak RSS";

    private TraceRss() {
    }

    /**
     * Measures one allocator and prints one JSON object:
     * {@code {"reset": bool, "baseline": bytes, "peak": bytes, "after": bytes}}.
     *
     * @param args the allocator's name ({@link TraceHeaps#NAMES})
     * @throws Exception if the measurement fails
     */
    public static void main(String[] args) throws Exception {
        String allocator = args[0];
        Trace warm = Trace.generate(Trace.SEED + 1, 64, 20_000);
        TraceHeaps.Replayer w = TraceHeaps.of(allocator, warm);
        for (int i = 0; i < 20; i++) {
            w.replay(i % 2 + 1);
        }
        TraceHeaps.Replayer r = TraceHeaps.of(allocator, Trace.standard());
        Thread.sleep(300); // let queued compilations finish
        boolean reset = resetPeak();
        long baseline = status("VmRSS");
        r.replay(2);
        long peak = status("VmHWM");
        long after = status("VmRSS");
        System.out.println("{\"reset\": " + reset + ", \"baseline\": " + baseline + ", \"peak\": " + peak
                + ", \"after\": " + after + "}");
    }

    /**
     * Resets the kernel's high-water mark of this process's resident set to its current size.
     *
     * @return whether the kernel accepted it
     */
    static boolean resetPeak() {
        try {
            Files.writeString(Path.of("/proc/self/clear_refs"), "5");
            return true;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /**
     * A size field of {@code /proc/self/status}.
     *
     * @param field {@code VmRSS}, {@code VmHWM}, ...
     * @return bytes, or -1 if unknown
     */
    static long status(String field) {
        try {
            for (String l : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (l.startsWith(field + ":")) {
                    return Long.parseLong(l.substring(field.length() + 1).replace("kB", "").strip()) * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            // unknown
        }
        return -1;
    }

    /**
     * Measures every allocator in fresh JVMs and writes the results.
     *
     * @param allocators the allocators
     * @param repeats    JVMs per allocator
     * @param jvmArgs    the JVM arguments every benchmark JVM gets (native access, library, notes)
     * @param out        the JSON result file
     * @param notes      the notes file
     * @throws IOException          if a file cannot be written
     * @throws InterruptedException if interrupted while waiting
     */
    public static void run(List<String> allocators, int repeats, List<String> jvmArgs, Path out, Path notes)
            throws IOException, InterruptedException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        StringBuilder json = new StringBuilder("[\n");
        boolean allReset = true;
        List<String> failed = new ArrayList<>();
        for (String a : allocators) {
            double[] growth = new double[repeats];
            int n = 0;
            for (int i = 0; i < repeats; i++) {
                List<String> cmd = new ArrayList<>(List.of(java));
                cmd.addAll(jvmArgs);
                cmd.addAll(List.of("-Xms64m", "-Xmx64m", "-XX:+AlwaysPreTouch", "-XX:+UseSerialGC", "-cp",
                        System.getProperty("java.class.path"), TraceRss.class.getName(), a));
                Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
                String stdout = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                if (!p.waitFor(2, TimeUnit.MINUTES) || p.exitValue() != 0) {
                    p.destroyForcibly();
                    failed.add(a);
                    break;
                }
                String last = stdout.strip().substring(stdout.strip().lastIndexOf('\n') + 1);
                Map<?, ?> o = (Map<?, ?>) Json.parse(last);
                allReset &= Boolean.TRUE.equals(o.get("reset"));
                growth[n++] = ((Number) o.get("peak")).doubleValue() - ((Number) o.get("baseline")).doubleValue();
            }
            if (n == repeats) {
                json.append(json.length() > 2 ? ",\n" : "").append(ExternalResults.result(BENCHMARK, "ss",
                        Map.of("allocator", a), repeats, growth, "B", Runtime.version().toString()));
            }
        }
        json.append("\n]\n");
        Files.writeString(out, json, StandardCharsets.UTF_8);
        Trace t = Trace.standard();
        note(notes, "the trace holds at most " + t.peakLiveBytes() + " bytes live; " + repeats + " JVMs per allocator"
                + (allReset ? ", each resetting its high-water mark before the replay"
                : "; /proc/self/clear_refs refused a reset of the high-water mark, so peaks include the JVM's start")
                + (failed.isEmpty() ? "" : "; failed: " + String.join(", ", failed)));
    }

    private static void note(Path notes, String text) throws IOException {
        System.out.println("# datamem suite: " + NOTE + ": " + text);
        Files.writeString(notes, NOTE + "\t" + text + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                StandardOpenOption.APPEND);
    }
}
