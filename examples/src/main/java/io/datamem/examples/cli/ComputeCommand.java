package io.datamem.examples.cli;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.array.Parallel;
import io.datamem.array.Workspace;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.concurrent.Callable;
import java.util.stream.IntStream;

/**
 * {@code datamem compute}: a compute block written the way the user guide says, timed against the
 * same loops over {@code double[][]} in the same JVM: a matrix multiply through {@code NDArray}'s
 * accessors under a scoped {@code aligned64} handler, on the calling thread and in
 * {@link Parallel#forRange} (against a parallel {@link IntStream}), then a loop of temporaries in a
 * workspace. Each figure is the median of the repetitions; nothing is warmed up beyond them.
 */
@Command(name = "compute", mixinStandardHelpOptions = true,
        description = "Multiplies two matrices through NDArray accessors under a scoped aligned64 handler, on one"
                + " thread and with Parallel.forRange, and prints each time beside the same loops over double[][];"
                + " then runs temporaries in a workspace.")
public final class ComputeCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    int size;
    int repeat;

    /** Creates the command (picocli instantiates it). */
    public ComputeCommand() {
    }

    /**
     * Sets the matrices' side ({@code --size}).
     *
     * @param size rows and columns, 1 to 4096
     * @throws picocli.CommandLine.ParameterException if {@code size} is out of range (a usage error)
     */
    @Option(names = "--size", paramLabel = "N", defaultValue = "384",
            description = "Rows and columns of each matrix, 1 to 4096 (default: ${DEFAULT-VALUE}).")
    void size(int size) {
        if (size < 1 || size > 4096) {
            throw UsageErrors.invalid(spec, "--size", size, "1 to 4096");
        }
        this.size = size;
    }

    /**
     * Sets the repetitions of each kernel ({@code --repeat}).
     *
     * @param repeat repetitions, 1 to 100
     * @throws picocli.CommandLine.ParameterException if {@code repeat} is out of range (a usage error)
     */
    @Option(names = "--repeat", paramLabel = "R", defaultValue = "5",
            description = "Repetitions of each kernel, 1 to 100; the median is printed (default: ${DEFAULT-VALUE}).")
    void repeat(int repeat) {
        if (repeat < 1 || repeat > 100) {
            throw UsageErrors.invalid(spec, "--repeat", repeat, "1 to 100");
        }
        this.repeat = repeat;
    }

    /**
     * Runs the kernels and prints the comparison.
     *
     * @return {@value DatamemCli#OK} if every kernel computed the same product as {@code double[][]}
     *         and the workspace gave its memory back; {@value DatamemCli#FAILURE} if not
     * @throws IllegalStateException if the process default handler cannot be used
     * @throws io.datamem.AllocationException if an allocation fails
     */
    @Override
    public Integer call() {
        PrintStream out = System.out;
        int n = size;
        out.printf("datamem compute: %d x %d matrix multiply, %d repetitions each, median ms (%d processors)%n%n", n,
                n, repeat, Runtime.getRuntime().availableProcessors());

        double[][] as = new double[n][n];
        double[][] bs = new double[n][n];
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                as[i][j] = (i + 2.0 * j) / n;
                bs[i][j] = (i - j) / (double) n;
            }
        }
        double[][] cs = new double[n][n];
        double javaOne = median(() -> {
            for (int i = 0; i < n; i++) {
                for (int j = 0; j < n; j++) {
                    double s = 0;
                    for (int k = 0; k < n; k++) {
                        s += as[i][k] * bs[k][j];
                    }
                    cs[i][j] = s;
                }
            }
        });
        double javaPar = median(() -> IntStream.range(0, n).parallel().forEach(i -> {
            for (int j = 0; j < n; j++) {
                double s = 0;
                for (int k = 0; k < n; k++) {
                    s += as[i][k] * bs[k][j];
                }
                cs[i][j] = s;
            }
        }));

        // The compute block, as docs/getting-started.md writes it
        DataMemHandler aligned = DataMem.handler("aligned64");
        double[] times = new double[2];
        boolean same = DataMem.callWith(aligned, () -> {
            try (NDArray a = NDArray.empty(DType.FLOAT64, n, n);
                 NDArray b = NDArray.empty(DType.FLOAT64, n, n);
                 NDArray c = NDArray.zeros(DType.FLOAT64, n, n)) {
                for (int i = 0; i < n; i++) {
                    for (int j = 0; j < n; j++) {
                        a.setDouble(as[i][j], i, j);
                        b.setDouble(bs[i][j], i, j);
                    }
                }
                times[0] = median(() -> {
                    for (int i = 0; i < n; i++) {
                        for (int j = 0; j < n; j++) {
                            double s = 0;
                            for (int k = 0; k < n; k++) {
                                s += a.getDouble(i, k) * b.getDouble(k, j);
                            }
                            c.setDouble(s, i, j);
                        }
                    }
                });
                boolean ok = equal(c, cs, n);
                times[1] = median(() -> Parallel.forRange(0, n, i -> {
                    for (int j = 0; j < n; j++) {
                        double s = 0;
                        for (int k = 0; k < n; k++) {
                            s += a.getDouble(i, k) * b.getDouble(k, j);
                        }
                        c.setDouble(s, i, j);
                    }
                }));
                return ok && equal(c, cs, n);
            }
        });
        out.printf("%-44s %10s %12s %8s%n", "kernel", "NDArray", "double[][]", "ratio");
        row(out, "matrix multiply, 1 thread", times[0], javaOne);
        row(out, "matrix multiply, Parallel.forRange / IntStream", times[1], javaPar);
        out.printf("%-44s %9.2fx %11.2fx%n", "  speed-up over 1 thread", times[0] / times[1], javaOne / javaPar);
        out.println();

        // Temporaries in a workspace: each iteration's arrays go back when its cycle ends
        DataMemHandler workspace = DataMem.handler("workspace(pool(aligned64))");
        Workspace w = (Workspace) workspace.allocator();
        double[] sum = new double[1];
        double cycles = median(() -> {
            for (int it = 0; it < 1000; it++) {
                Workspace.run(workspace, () -> {
                    NDArray row = NDArray.empty(DType.FLOAT64, n);
                    NDArray scaled = NDArray.empty(DType.FLOAT64, n);
                    for (int j = 0; j < n; j++) {
                        row.setDouble(cs[0][j], j);
                        scaled.setDouble(2 * row.getDouble(j), j);
                    }
                    sum[0] += scaled.getDouble(n - 1);
                });
            }
        });
        Workspace.Figures f = w.figures();
        out.printf("workspace: 1,000 cycles of 2 temporaries of %d float64: %.2f ms (%.0f ns a cycle); each cycle"
                + " %d bytes, region %d bytes, %d cycles, %d spills beyond it%n", n, cycles, cycles * 1e3, f.lastCycleBytes(),
                f.regionBytes(), f.cycles(), f.spills());
        boolean released = f.currentCycleBytes() == 0 && w.trim();
        out.println();
        out.println(same && released ? "ok: every kernel computed the product double[][] did, and the workspace gave"
                + " its memory back" : "FAILED: " + (same ? "the workspace kept memory" : "the products differ"));
        return same && released ? DatamemCli.OK : DatamemCli.FAILURE;
    }

    private static void row(PrintStream out, String what, double ours, double java) {
        out.printf("%-44s %10.2f %12.2f %7.2fx%n", what, ours, java, ours / java);
    }

    private double median(Runnable kernel) {
        double[] ms = new double[repeat];
        for (int r = 0; r < repeat; r++) {
            long t = System.nanoTime();
            kernel.run();
            ms[r] = (System.nanoTime() - t) / 1e6;
        }
        Arrays.sort(ms);
        return ms[repeat / 2];
    }

    private static boolean equal(NDArray c, double[][] cs, int n) {
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                if (c.getDouble(i, j) != cs[i][j]) {
                    return false;
                }
            }
        }
        return true;
    }
}
