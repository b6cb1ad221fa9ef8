package io.datamem.benchmarks.report;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One JMH result: a benchmark method with its parameters and thread count, and its score.
 *
 * @param benchmark the class and method, without the package ({@code AllocFreePeers.cMallocFree})
 * @param params    the parameters ({@code byteSize=64}, ...)
 * @param threads   the threads that ran it
 * @param mode      JMH's mode ({@code avgt}, {@code ss}, ...)
 * @param score     the mean
 * @param error     the half-width of the 99.9% confidence interval; NaN when JMH could not compute
 *                  one (a single iteration)
 * @param unit      the unit of {@code score} ({@code ns/op}, {@code ms/op})
 * @param jdk       the JDK that ran it ({@code JDK 25.0.1, OpenJDK 64-Bit Server VM, 25.0.1+8-LTS})
 * @param forks     the JVMs the measured iterations came from (JMH's {@code forks}; 0 when not recorded)
 * @param percentiles the distribution of the measurements, by percentile ({@code 50.0} is the median);
 *                  empty when not recorded
 */
public record Result(String benchmark, Map<String, String> params, int threads, String mode, double score,
                     double error, String unit, String jdk, int forks, Map<Double, Double> percentiles) {

    /**
     * The parameter that marks a result whose JMH workers started on another CPU than the first:
     * the value of the JVM's {@code -Ddatamem.bench.firstCpu}, when not 0.
     */
    public static final String FIRST_CPU = "datamem.bench.firstCpu";

    /**
     * Validates and copies.
     *
     * @throws NullPointerException if a reference is null
     */
    public Result {
        Objects.requireNonNull(benchmark, "benchmark");
        params = Map.copyOf(params);
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(unit, "unit");
        Objects.requireNonNull(jdk, "jdk");
        percentiles = Map.copyOf(percentiles);
    }

    /**
     * A result from one fork, without percentiles.
     *
     * @param benchmark the class and method, without the package
     * @param params    the parameters
     * @param threads   the threads that ran it
     * @param mode      JMH's mode
     * @param score     the mean
     * @param error     the half-width of the 99.9% confidence interval, or NaN
     * @param unit      the unit of {@code score}
     * @param jdk       the JDK that ran it
     * @throws NullPointerException if a reference is null
     */
    public Result(String benchmark, Map<String, String> params, int threads, String mode, double score, double error,
                  String unit, String jdk) {
        this(benchmark, params, threads, mode, score, error, unit, jdk, 1, Map.of());
    }

    /**
     * A percentile of the measurements.
     *
     * @param percentile the percentile, 0 to 100
     * @return its value, or NaN if not recorded
     */
    public double percentile(double percentile) {
        return percentiles.getOrDefault(percentile, Double.NaN);
    }

    /**
     * A parameter's value.
     *
     * @param name the parameter
     * @return its value, or null if the benchmark has no such parameter
     */
    public String param(String name) {
        return params.get(name);
    }

    /**
     * Reads the results of a JMH JSON result file.
     *
     * @param json the file's text
     * @return its results
     * @throws IllegalArgumentException if it is not a JMH result file
     */
    public static List<Result> parseAll(String json) {
        if (!(Json.parse(json) instanceof List<?> list)) {
            throw new IllegalArgumentException("not a JMH JSON result file: the top level is not an array");
        }
        List<Result> all = new java.util.ArrayList<>();
        for (Object o : list) {
            Result r = of(o);
            all.add(r);
            all.addAll(secondary(r, (Map<?, ?>) o));
        }
        return all;
    }

    /**
     * A result's secondary metrics (a profiler's, such as the GC profiler's
     * {@code gc.alloc.rate.norm}), each as a result of its own named {@code BENCHMARK:METRIC}.
     */
    private static List<Result> secondary(Result r, Map<?, ?> m) {
        if (!(m.get("secondaryMetrics") instanceof Map<?, ?> metrics)) {
            return List.of();
        }
        List<Result> out = new java.util.ArrayList<>();
        metrics.forEach((k, v) -> {
            if (v instanceof Map<?, ?> metric && metric.get("score") != null) {
                String key = String.valueOf(k).replace("\u00b7", "");
                out.add(new Result(r.benchmark() + ":" + key, r.params(), r.threads(), r.mode(),
                        number(metric.get("score")), number(metric.get("scoreError")),
                        String.valueOf(metric.get("scoreUnit")), r.jdk(), r.forks(), Map.of()));
            }
        });
        return out;
    }

    private static Result of(Object o) {
        if (!(o instanceof Map<?, ?> m)) {
            throw new IllegalArgumentException("not a JMH result: " + o);
        }
        String full = (String) m.get("benchmark");
        if (full == null) {
            throw new IllegalArgumentException("a JMH result without a benchmark name");
        }
        int dot = full.lastIndexOf('.');
        int classDot = dot < 0 ? -1 : full.lastIndexOf('.', dot - 1);
        String shortName = full.substring(classDot + 1);
        Map<String, String> params = new java.util.TreeMap<>();
        if (m.get("params") instanceof Map<?, ?> p) {
            p.forEach((k, v) -> params.put(String.valueOf(k), String.valueOf(v)));
        }
        if (m.get("jvmArgs") instanceof List<?> args) {
            // Forks whose workers started on another CPU than the first (PinnedWorkers).
            String prefix = "-D" + FIRST_CPU + "=";
            args.stream().map(String::valueOf).filter(a -> a.startsWith(prefix)).map(a -> a.substring(prefix.length()))
                    .filter(v -> !v.equals("0")).findFirst().ifPresent(v -> params.put(FIRST_CPU, v));
        }
        Map<?, ?> primary = (Map<?, ?>) m.get("primaryMetric");
        if (primary == null) {
            throw new IllegalArgumentException("JMH result " + full + " without primaryMetric");
        }
        String jdk = "JDK " + m.get("jdkVersion") + ", " + m.get("vmName") + " " + m.get("vmVersion");
        Map<Double, Double> percentiles = new java.util.TreeMap<>();
        if (primary.get("scorePercentiles") instanceof Map<?, ?> p) {
            p.forEach((k, v) -> {
                try {
                    percentiles.put(Double.valueOf(String.valueOf(k)), number(v));
                } catch (NumberFormatException e) {
                    // not a percentile: ignored
                }
            });
        }
        Double forks = number(m.get("forks"));
        return new Result(shortName, params, number(m.get("threads")).intValue(), String.valueOf(m.get("mode")),
                number(primary.get("score")), number(primary.get("scoreError")), String.valueOf(primary.get("scoreUnit")),
                jdk, forks.isNaN() ? 0 : forks.intValue(), percentiles);
    }

    private static Double number(Object o) {
        if (o instanceof Double d) {
            return d;
        }
        if (o instanceof String s) {   // JMH writes "NaN" and "Infinity" as strings
            try {
                return Double.valueOf(s);
            } catch (NumberFormatException e) {
                return Double.NaN;
            }
        }
        return Double.NaN;
    }
}
