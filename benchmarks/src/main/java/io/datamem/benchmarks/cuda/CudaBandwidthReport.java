package io.datamem.benchmarks.cuda;

import io.datamem.cuda.Cuda;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs the CUDA benchmarks and the C reference, and prints Markdown tables for docs/cuda.md:
 * bandwidth per size and direction for pageable, pinned, pooled pinned and registered memory, next
 * to the C program's {@code cudaMemcpy} from pinned and pageable memory and to PCIe Gen5 x16
 * (63 GB/s per direction), with the two targets checked (pinned at least 85% of C's pinned, and at
 * least twice pageable); then pinned allocation times with and without a pool.
 *
 * <pre>{@code
 * java --enable-native-access=ALL-UNNAMED -cp 'benchmarks/target/benchmarks.jar:benchmarks/target/lib/*' \
 *     io.datamem.benchmarks.cuda.CudaBandwidthReport [--quick]
 * }</pre>
 *
 * <p>The C reference ({@code cuda_bandwidth.cu}, a resource of this package) is compiled with
 * {@code nvcc} ({@code $NVCC}, {@code nvcc} on the {@code PATH}, or {@code /usr/local/cuda/bin/nvcc});
 * without it the C columns say so. Without a GPU the report says why and exits with status 2.
 */
public final class CudaBandwidthReport {

    private CudaBandwidthReport() {
    }

    /**
     * Runs the report.
     *
     * @param args {@code --quick} for fewer JMH iterations
     * @throws RunnerException      if JMH fails
     * @throws IOException          if the C reference cannot be written or run
     * @throws InterruptedException if interrupted while the C reference runs
     */
    public static void main(String[] args) throws RunnerException, IOException, InterruptedException {
        PrintStream out = System.out;
        if (!Cuda.isAvailable()) {
            out.println("CUDA bandwidth report: skipped, no GPU here: " + Cuda.availability().reason());
            System.exit(2);
        }
        boolean quick = List.of(args).contains("--quick");
        out.println("# CUDA transfers on " + Cuda.devices().get(0) + ", driver CUDA "
                + Cuda.driverVersion() / 1000 + "." + Cuda.driverVersion() % 1000 / 10);
        Map<String, Double> reference = reference(out);
        ChainedOptionsBuilder options = new OptionsBuilder()
                .include(CudaTransferBenchmark.class.getName())
                .include(CudaPinnedAllocationBenchmark.class.getName());
        if (quick) {
            options.warmupIterations(1).measurementIterations(2);
        }
        Collection<RunResult> results = new Runner(options.build()).run();
        transferTable(out, results, reference);
        allocationTable(out, results);
    }

    /** Compiles and runs the C reference; keys are {@code "pinned h2d 65536"}, values GB/s. */
    private static Map<String, Double> reference(PrintStream out) throws IOException, InterruptedException {
        Map<String, Double> gbps = new HashMap<>();
        Path nvcc = nvcc();
        if (nvcc == null) {
            out.println("# C reference: skipped, nvcc not found (set NVCC or put the CUDA toolkit on the PATH)");
            return gbps;
        }
        Path dir = Files.createTempDirectory("datamem-cuda-bandwidth");
        Path source = dir.resolve("cuda_bandwidth.cu");
        try (InputStream in = CudaBandwidthReport.class.getResourceAsStream("cuda_bandwidth.cu")) {
            if (in == null) {
                throw new IOException("resource cuda_bandwidth.cu is missing from the benchmarks jar");
            }
            Files.copy(in, source);
        }
        Path binary = dir.resolve("cuda_bandwidth");
        String compiled = run(List.of(nvcc.toString(), "-O2", "-o", binary.toString(), source.toString()));
        if (!Files.isExecutable(binary)) {
            out.println("# C reference: nvcc failed: " + compiled.strip());
            return gbps;
        }
        String output = run(List.of(binary.toString(), "0"));
        for (String line : output.lines().toList()) {
            String[] f = line.strip().split("\\s+");
            if (line.startsWith("#")) {
                out.println("# C reference: " + line.substring(1).strip());
            } else if (f.length == 4) {
                gbps.put(f[0] + " " + f[1] + " " + f[2], Double.parseDouble(f[3]));
            } else if (!line.isBlank()) {
                out.println("# C reference: " + line);
            }
        }
        return gbps;
    }

    private static Path nvcc() {
        List<Path> candidates = new ArrayList<>();
        String env = System.getenv("NVCC");
        if (env != null) {
            candidates.add(Path.of(env));
        }
        for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            if (!dir.isEmpty()) {
                candidates.add(Path.of(dir, "nvcc"));
            }
        }
        candidates.add(Path.of("/usr/local/cuda/bin/nvcc"));
        return candidates.stream().filter(Files::isExecutable).findFirst().orElse(null);
    }

    private static String run(List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.MINUTES)) {
            p.destroyForcibly();
        }
        return output;
    }

    private static double gbps(long bytes, double microseconds) {
        return bytes / (microseconds * 1e3);
    }

    private static void transferTable(PrintStream out, Collection<RunResult> results, Map<String, Double> c) {
        Map<String, Double> java = new HashMap<>();   // "pinned h2d 65536" -> GB/s
        for (RunResult r : results) {
            String benchmark = r.getParams().getBenchmark();
            if (!benchmark.startsWith(CudaTransferBenchmark.class.getName())) {
                continue;
            }
            String dir = benchmark.endsWith("hostToDevice") ? "h2d" : "d2h";
            long bytes = CudaBenchmarks.bytes(r.getParams().getParam("size"));
            java.put(r.getParams().getParam("memory") + " " + dir + " " + bytes,
                    gbps(bytes, r.getPrimaryResult().getScore()));
        }
        out.println();
        out.println("| size | direction | pageable | pinned | pinned, pooled | registered | C pinned | C pageable"
                + " | pinned / C pinned | pinned / pageable | pinned, % of PCIe Gen5 x16 |");
        out.println("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (String size : CudaBenchmarks.SIZES) {
            long bytes = CudaBenchmarks.bytes(size);
            for (String dir : List.of("h2d", "d2h")) {
                Double pageable = java.get("pageable " + dir + " " + bytes);
                Double pinned = java.get("pinned " + dir + " " + bytes);
                Double cPinned = c.get("pinned " + dir + " " + bytes);
                out.printf(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |%n", size,
                        dir.equals("h2d") ? "host to device" : "device to host", f(pageable), f(pinned),
                        f(java.get("pinned-pooled " + dir + " " + bytes)), f(java.get("registered " + dir + " " + bytes)),
                        f(cPinned), f(c.get("pageable " + dir + " " + bytes)),
                        ratio(pinned, cPinned, 0.85), ratio(pinned, pageable, 2.0),
                        pinned == null ? "-" : String.format(Locale.ROOT, "%.0f%%",
                                100 * pinned / CudaBenchmarks.PCIE_GEN5_X16_GBPS));
            }
        }
        out.println();
        out.println("GB/s = 10^9 bytes per second; ratios are marked (ok) when they meet the target (0.85 of C's"
                + " pinned cudaMemcpy, 2x pageable) and (BELOW) when not.");
    }

    private static String f(Double gbps) {
        return gbps == null ? "-" : String.format(Locale.ROOT, "%.2f", gbps);
    }

    private static String ratio(Double a, Double b, double target) {
        if (a == null || b == null) {
            return "-";
        }
        double r = a / b;
        return String.format(Locale.ROOT, "%.2f (%s)", r, r >= target ? "ok" : "BELOW");
    }

    private static void allocationTable(PrintStream out, Collection<RunResult> results) {
        Map<String, Double> micros = new HashMap<>();
        for (RunResult r : results) {
            if (r.getParams().getBenchmark().startsWith(CudaPinnedAllocationBenchmark.class.getName())) {
                micros.put(r.getParams().getParam("handler") + " " + r.getParams().getParam("size"),
                        r.getPrimaryResult().getScore());
            }
        }
        out.println();
        out.println("| size | cuda:pinned (µs per malloc + free) | pool(cuda:pinned):max=1g (µs) | speed-up |");
        out.println("|---:|---:|---:|---:|");
        for (String size : CudaBenchmarks.SIZES) {
            Double plain = micros.get("cuda:pinned " + size);
            Double pooled = micros.get("pool(cuda:pinned):max=1g " + size);
            out.printf(Locale.ROOT, "| %s | %s | %s | %s |%n", size, plain == null ? "-" : String.format(Locale.ROOT,
                    "%.1f", plain), pooled == null ? "-" : String.format(Locale.ROOT, "%.3f", pooled),
                    plain == null || pooled == null ? "-" : String.format(Locale.ROOT, "%.0fx", plain / pooled));
        }
    }
}
