package io.datamem.benchmarks;

import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Results measured outside JMH (in processes of their own), written in JMH's JSON result format so
 * that the report reads them as it reads JMH's: the score is the median of the repeats, the error the
 * larger distance from the median to the ends of its distribution-free 99.9% confidence interval
 * ({@link NumPyTiming.Spread}), the percentiles the spread of the repeats.
 */
final class ExternalResults {

    private ExternalResults() {
    }

    /**
     * One result.
     *
     * @param benchmark the full benchmark name ({@code io.datamem.benchmarks.Class.method})
     * @param mode      the mode to record
     * @param params    its parameters
     * @param forks     the processes the values came from
     * @param values    the repeats' values, at least one
     * @param unit      their unit
     * @param version   what ran them (recorded as the JDK version)
     * @return a JSON object
     */
    static String result(String benchmark, String mode, Map<String, String> params, int forks, double[] values,
                         String unit, String version) {
        NumPyTiming.Spread s = NumPyTiming.Spread.of(values);
        double error = values.length > 1 ? s.error() : Double.NaN;
        return "{\"jmhVersion\": \"\", \"benchmark\": " + quote(benchmark) + ", \"mode\": " + quote(mode)
                + ", \"threads\": 1, \"forks\": " + forks + ", \"jdkVersion\": " + quote(version)
                + ", \"vmName\": \"\", \"vmVersion\": \"\", \"params\": {"
                + params.entrySet().stream().map(e -> quote(e.getKey()) + ": " + quote(e.getValue()))
                .collect(Collectors.joining(", ")) + "},"
                + " \"primaryMetric\": {\"score\": " + num(s.median()) + ", \"scoreError\": " + num(error)
                + ", \"scorePercentiles\": {\"0.0\": " + num(s.min()) + ", \"25.0\": " + num(s.q1()) + ", \"50.0\": "
                + num(s.median()) + ", \"75.0\": " + num(s.q3()) + ", \"100.0\": " + num(s.max()) + "},"
                + " \"scoreUnit\": " + quote(unit) + ", \"rawData\": [[" + Arrays.stream(values)
                .mapToObj(ExternalResults::num).collect(Collectors.joining(", ")) + "]]}}";
    }

    static String num(double v) {
        return Double.isFinite(v) ? String.format(Locale.ROOT, "%.4f", v) : "\"NaN\"";
    }

    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }
}
