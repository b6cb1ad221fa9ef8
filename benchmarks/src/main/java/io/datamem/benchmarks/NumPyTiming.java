package io.datamem.benchmarks;

import io.datamem.benchmarks.report.Json;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Times NumPy's array lifecycle, {@code a = np.empty(n); a[0] = 1.0; b = a[0]; del a}, in a
 * {@code python3} subprocess with {@code timeit} (the script is {@code numpy_lifecycle.py} next to
 * this class), for the report to compare with {@link NDArrayLifecycle#written()} measured in the
 * same run.
 *
 * <p>Each length gives one result, written in JMH's JSON format as benchmark
 * {@code io.datamem.benchmarks.NumPy.lifecycle} with parameter {@code elements}: its score is the
 * median of the repeats' ns per lifecycle, its error the larger distance from the median to the ends
 * of the median's distribution-free 99.9% confidence interval, and its percentiles the spread of the
 * repeats. Where Python or NumPy is missing, or the script fails, no result is written and the notes
 * say why.
 */
public final class NumPyTiming {

    /** The benchmark name the results carry (JMH's form: package, class, method). */
    public static final String BENCHMARK = "io.datamem.benchmarks.NumPy.lifecycle";

    /** The key of the notes line that describes the measurement, or why there is none. */
    public static final String NOTE = "NumPy";

    private NumPyTiming() {
    }

    /**
     * Runs the script and writes its results.
     *
     * @param python          the Python interpreter to run
     * @param repeats         timeit repeats per length (at most 1000)
     * @param secondsPerRepeat the length of each repeat
     * @param lengths         the array lengths, in float64 elements
     * @param out             the JSON result file to write (JMH's format)
     * @param notes           the notes file to append the description to
     * @return whether NumPy was measured
     * @throws IOException          if a file cannot be written
     * @throws InterruptedException if interrupted while waiting for Python
     */
    public static boolean run(String python, int repeats, double secondsPerRepeat, long[] lengths, Path out,
                              Path notes) throws IOException, InterruptedException {
        if (repeats < 1 || repeats > 1000) {
            throw new IllegalArgumentException("repeats: " + repeats + " (expected: 1 to 1000)");
        }
        String script;
        try (InputStream in = NumPyTiming.class.getResourceAsStream("numpy_lifecycle.py")) {
            if (in == null) {
                throw new IllegalStateException("numpy_lifecycle.py is missing from the class path");
            }
            script = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        List<String> command = new ArrayList<>(List.of(python, "-", Integer.toString(repeats),
                Double.toString(secondsPerRepeat)));
        for (long n : lengths) {
            command.add(Long.toString(n));
        }
        String stdout;
        int exit;
        Path stderr = Files.createTempFile("datamem-numpy", ".err");
        try {
            Process p;
            try {
                p = new ProcessBuilder(command).redirectError(stderr.toFile()).start();
            } catch (IOException e) {
                note(notes, "not measured: cannot run " + python + " (" + e.getMessage() + ")");
                return false;
            }
            try (OutputStream in = p.getOutputStream()) {
                in.write(script.getBytes(StandardCharsets.UTF_8));
            }
            stdout = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(10, TimeUnit.MINUTES)) {
                p.destroyForcibly();
                note(notes, "not measured: " + python + " did not finish in 10 minutes");
                return false;
            }
            exit = p.exitValue();
            if (exit != 0) {
                String err = Files.readString(stderr).strip();
                String last = err.isEmpty() ? "no message" : err.substring(err.lastIndexOf('\n') + 1);
                note(notes, "not measured: " + python + " exited with " + exit + " (" + last + ")");
                return false;
            }
        } finally {
            Files.deleteIfExists(stderr);
        }
        Map<?, ?> o = (Map<?, ?>) Json.parse(stdout.strip());
        String pythonVersion = String.valueOf(o.get("python"));
        if (o.get("numpy") == null) {
            note(notes, "not measured: NumPy cannot be imported by " + python + " (" + pythonVersion + "): "
                    + o.get("reason"));
            return false;
        }
        String version = "NumPy " + o.get("numpy") + " on " + pythonVersion;
        StringBuilder json = new StringBuilder("[\n");
        List<?> cases = (List<?>) o.get("cases");
        long loopsMin = Long.MAX_VALUE;
        long loopsMax = 0;
        for (Object c : cases) {
            Map<?, ?> m = (Map<?, ?>) c;
            double[] ns = ((List<?>) m.get("ns")).stream().mapToDouble(v -> ((Number) v).doubleValue()).toArray();
            long loops = ((Number) m.get("loops")).longValue();
            loopsMin = Math.min(loopsMin, loops);
            loopsMax = Math.max(loopsMax, loops);
            Spread s = Spread.of(ns);
            long elements = ((Number) m.get("elements")).longValue();
            json.append(json.length() > 2 ? ",\n" : "").append(result(version, elements, loops, s, ns));
        }
        json.append("\n]\n");
        Files.writeString(out, json, StandardCharsets.UTF_8);
        note(notes, version + ", timeit with garbage collection off: " + repeats + " repeats of "
                + (loopsMin == loopsMax ? loopsMin : loopsMin + " to " + loopsMax) + " loops (about "
                + secondsPerRepeat + " s each) per length");
        return true;
    }

    private static void note(Path notes, String text) throws IOException {
        System.out.println("# datamem suite: NumPy: " + text);
        Files.writeString(notes, NOTE + "\t" + text.replace('\n', ' ') + "\n", StandardCharsets.UTF_8,
                StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    private static String result(String version, long elements, long loops, Spread s, double[] ns) {
        return "{\"jmhVersion\": \"\", \"benchmark\": \"" + BENCHMARK + "\", \"mode\": \"timeit\", \"threads\": 1,"
                + " \"forks\": 1, \"jdkVersion\": " + ExternalResults.quote(version)
                + ", \"vmName\": \"\", \"vmVersion\": \"\","
                + " \"params\": {\"elements\": \"" + elements + "\", \"repeats\": \"" + ns.length
                + "\", \"loops\": \"" + loops + "\"},"
                + " \"primaryMetric\": {\"score\": " + num(s.median()) + ", \"scoreError\": " + num(s.error())
                + ", \"scoreConfidence\": [" + num(s.low()) + ", " + num(s.high()) + "],"
                + " \"scorePercentiles\": {\"0.0\": " + num(s.min()) + ", \"25.0\": " + num(s.q1()) + ", \"50.0\": "
                + num(s.median()) + ", \"75.0\": " + num(s.q3()) + ", \"100.0\": " + num(s.max()) + "},"
                + " \"scoreUnit\": \"ns/op\", \"rawData\": [" + Arrays.stream(ns).mapToObj(NumPyTiming::num)
                .reduce((a, b) -> a + ", " + b).map(r -> "[" + r + "]").orElse("") + "]}}";
    }

    private static String num(double v) {
        return Double.isFinite(v) ? String.format(Locale.ROOT, "%.3f", v) : "\"NaN\"";
    }

    /**
     * The spread of repeated timings, and the distribution-free confidence interval of their median.
     *
     * @param median the median
     * @param low    the lower end of the median's 99.9% confidence interval
     * @param high   the upper end
     * @param q1     the first quartile
     * @param q3     the third quartile
     * @param min    the smallest
     * @param max    the largest
     */
    public record Spread(double median, double low, double high, double q1, double q3, double min, double max) {

        /**
         * Computes the spread. The median's interval lies between the order statistics {@code k} and
         * {@code n + 1 - k}, {@code k} the largest with {@code P(B < k) <= 0.0005} for {@code B} of
         * binomial distribution {@code (n, 1/2)}; with fewer than 11 values it is the whole range.
         *
         * @param values the timings, at least one
         * @return their spread
         * @throws IllegalArgumentException if there are no values
         */
        public static Spread of(double[] values) {
            if (values.length == 0) {
                throw new IllegalArgumentException("values: empty (expected: at least one)");
            }
            double[] v = values.clone();
            Arrays.sort(v);
            int n = v.length;
            // P(B <= j) for j = 0, 1, ...: find the largest k with P(B <= k - 1) <= alpha / 2
            double p = Math.pow(0.5, n);
            double cumulative = p;
            int k = 0;
            for (int j = 0; j < n && cumulative <= 0.0005; j++) {
                k = j + 1;
                p = p * (n - j) / (j + 1);
                cumulative += p;
            }
            double low = k == 0 ? v[0] : v[k - 1];
            double high = k == 0 ? v[n - 1] : v[n - k];
            return new Spread(quantile(v, 0.5), low, high, quantile(v, 0.25), quantile(v, 0.75), v[0], v[n - 1]);
        }

        /**
         * The half-width that covers the whole interval on both sides of the median.
         *
         * @return the larger distance from the median to an end of its interval
         */
        public double error() {
            return Math.max(median - low, high - median);
        }

        private static double quantile(double[] sorted, double q) {
            double pos = q * (sorted.length - 1);
            int i = (int) Math.floor(pos);
            int j = Math.min(i + 1, sorted.length - 1);
            return sorted[i] + (pos - i) * (sorted[j] - sorted[i]);
        }
    }
}
