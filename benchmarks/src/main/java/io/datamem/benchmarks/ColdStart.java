package io.datamem.benchmarks;

import io.datamem.array.DType;
import io.datamem.array.NDArray;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A program's first seconds: in a fresh JVM, the time from {@code main} to the first written
 * small array ({@code empty(FLOAT64, 8)}, one {@code setDouble}, one {@code getDouble},
 * {@code close}, on the process default), then the ns per lifecycle of the next {@value #COUNT};
 * against a fresh Python's {@code import numpy} and the same lifecycle in a plain {@code for} loop
 * ({@code numpy_cold.py}), timed in the same run; and the same JVMs again with the JDK's AOT cache
 * ({@code -XX:AOTCache}, written by one training run of this program). Run by the suite in processes of their own; as a
 * program ({@link #main}) it is one such JVM, and prints {@code firstArrayMillis nextNanos}.
 */
public final class ColdStart {

    /** The lifecycles timed after the first one. */
    public static final int COUNT = 300_000;

    /** The benchmark names the results carry (JMH's form). */
    public static final String JAVA_FIRST = "io.datamem.benchmarks.ColdStart.firstArray";
    /** See {@link #JAVA_FIRST}. */
    public static final String JAVA_NEXT = "io.datamem.benchmarks.ColdStart.nextLifecycles";
    /** See {@link #JAVA_FIRST}: the same in JVMs started with an AOT cache of a training run. */
    public static final String AOT_FIRST = "io.datamem.benchmarks.ColdStart.firstArrayAotCache";
    /** See {@link #AOT_FIRST}. */
    public static final String AOT_NEXT = "io.datamem.benchmarks.ColdStart.nextLifecyclesAotCache";
    /** See {@link #JAVA_FIRST}. */
    public static final String NUMPY_IMPORT = "io.datamem.benchmarks.NumPy.coldImport";
    /** See {@link #JAVA_FIRST}. */
    public static final String NUMPY_FIRST = "io.datamem.benchmarks.NumPy.coldFirstArray";
    /** See {@link #JAVA_FIRST}. */
    public static final String NUMPY_NEXT = "io.datamem.benchmarks.NumPy.coldNextLifecycles";

    private ColdStart() {
    }

    /**
     * One fresh JVM's measurement: prints the milliseconds from {@code main} to the first array's
     * lifecycle's end, and the mean ns of the next {@value #COUNT}.
     *
     * @param args ignored
     */
    public static void main(String[] args) {
        long t0 = System.nanoTime();
        double sink = lifecycle(0);
        long t1 = System.nanoTime();
        for (int i = 1; i <= COUNT; i++) {
            sink += lifecycle(i);
        }
        long t2 = System.nanoTime();
        System.out.println((t1 - t0) / 1e6 + " " + (double) (t2 - t1) / COUNT + " " + (sink > 0 ? "" : "-"));
    }

    private static double lifecycle(int i) {
        try (NDArray a = NDArray.empty(DType.FLOAT64, 8)) {
            a.setDouble(i, 3);
            return a.getDouble(3);
        }
    }

    /**
     * Runs {@code repeats} fresh JVMs and as many fresh Pythons, and writes their results.
     *
     * @param repeats  processes of each kind
     * @param jvmArgs  the JVMs' arguments before the class path
     * @param python   the Python interpreter
     * @param out      the JSON result file (JMH's format)
     * @param notes    the notes file
     * @throws IOException          if a file cannot be written
     * @throws InterruptedException if interrupted while waiting
     */
    static void run(int repeats, List<String> jvmArgs, String python, Path out, Path notes)
            throws IOException, InterruptedException {
        String jdk = "JDK " + System.getProperty("java.version");
        List<String> json = new ArrayList<>();
        Map<String, String> none = Map.of();
        double[][] plain = fresh(repeats, jvmArgs);
        json.add(ExternalResults.result(JAVA_FIRST, "cold", none, repeats, plain[0], "ms/op", jdk));
        json.add(ExternalResults.result(JAVA_NEXT, "cold", none, repeats, plain[1], "ns/op", jdk));
        // The JDK's AOT cache (JEP 483, 514, 515): one training run writes it, the measured JVMs map it
        Path cache = Files.createTempFile("datamem-cold", ".aot");
        try {
            Files.delete(cache);
            List<String> training = new ArrayList<>(jvmArgs);
            training.add("-XX:AOTCacheOutput=" + cache);
            fresh(1, training);
            if (Files.isRegularFile(cache)) {
                List<String> withCache = new ArrayList<>(jvmArgs);
                withCache.add("-XX:AOTCache=" + cache);
                double[][] aot = fresh(repeats, withCache);
                json.add(ExternalResults.result(AOT_FIRST, "cold", none, repeats, aot[0], "ms/op", jdk));
                json.add(ExternalResults.result(AOT_NEXT, "cold", none, repeats, aot[1], "ns/op", jdk));
            } else {
                note(notes, "the training run wrote no AOT cache: the AOT-cache figures are not measured");
            }
        } finally {
            Files.deleteIfExists(cache);
        }
        String script;
        try (InputStream in = ColdStart.class.getResourceAsStream("numpy_cold.py")) {
            script = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        double[] imports = new double[repeats];
        double[] npFirst = new double[repeats];
        double[] npNext = new double[repeats];
        String version = null;
        for (int r = 0; r < repeats; r++) {
            String stdout;
            try {
                stdout = runProcess(List.of(python, "-", Integer.toString(COUNT)), script);
            } catch (IOException e) {
                note(notes, "NumPy not timed: " + e.getMessage());
                version = null;
                break;
            }
            Map<?, ?> o = (Map<?, ?>) io.datamem.benchmarks.report.Json.parse(stdout.strip());
            if (o.get("numpy") == null) {
                note(notes, "NumPy not timed: " + o.get("reason"));
                version = null;
                break;
            }
            version = "NumPy " + o.get("numpy") + " on " + o.get("python");
            imports[r] = ((Number) o.get("importMillis")).doubleValue();
            npFirst[r] = ((Number) o.get("firstArrayMillis")).doubleValue();
            npNext[r] = ((Number) o.get("nextNanos")).doubleValue();
        }
        if (version != null) {
            json.add(ExternalResults.result(NUMPY_IMPORT, "cold", none, repeats, imports, "ms/op", version));
            json.add(ExternalResults.result(NUMPY_FIRST, "cold", none, repeats, npFirst, "ms/op", version));
            json.add(ExternalResults.result(NUMPY_NEXT, "cold", none, repeats, npNext, "ns/op", version));
        }
        Files.writeString(out, "[\n" + String.join(",\n", json) + "\n]\n", StandardCharsets.UTF_8);
        note(notes, repeats + " fresh JVMs (from main: the first written array, then " + COUNT
                + " more), as many with an AOT cache of one training run, and as many fresh Pythons (import numpy,"
                + " then the same loop)");
    }

    /** {@code repeats} fresh JVMs of {@link #main}: their first-array ms and next-lifecycle ns. */
    private static double[][] fresh(int repeats, List<String> jvmArgs) throws IOException, InterruptedException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        double[][] out = new double[2][repeats];
        for (int r = 0; r < repeats; r++) {
            List<String> cmd = new ArrayList<>(List.of(java.toString()));
            cmd.addAll(jvmArgs);
            cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), ColdStart.class.getName()));
            String[] f = runProcess(cmd, null).strip().split("\\s+");
            out[0][r] = Double.parseDouble(f[0]);
            out[1][r] = Double.parseDouble(f[1]);
        }
        return out;
    }

    private static String runProcess(List<String> cmd, String stdin) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        try (OutputStream in = p.getOutputStream()) {
            if (stdin != null) {
                in.write(stdin.getBytes(StandardCharsets.UTF_8));
            }
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(5, TimeUnit.MINUTES) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IOException(String.join(" ", cmd.subList(0, 1)) + " failed (exit " + (p.isAlive() ? "none"
                    : p.exitValue()) + ")");
        }
        return out;
    }

    private static void note(Path notes, String text) throws IOException {
        System.out.println("# datamem suite: cold start: " + text);
        Files.writeString(notes, "cold start\t" + text + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                StandardOpenOption.APPEND);
    }
}
