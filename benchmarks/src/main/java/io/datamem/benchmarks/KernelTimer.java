package io.datamem.benchmarks;

import java.lang.reflect.Method;

/**
 * Times one {@link ComputeKernels} benchmark in this JVM after the suite's mixed use, without JMH:
 * to see, one fresh JVM at a time, how a JVM's compile history changes a kernel's speed (run it
 * in a loop, with {@code -Xlog:deoptimization=debug} or {@code -XX:+LogCompilation} to see why).
 *
 * <pre>
 * java --enable-native-access=ALL-UNNAMED -cp 'benchmarks/target/datamem-benchmarks.jar:benchmarks/target/lib/*' \
 *      io.datamem.benchmarks.KernelTimer dotNDArray
 * </pre>
 * prints the mean time per call of each of 6 rounds of 300 calls.
 */
public final class KernelTimer {

    private KernelTimer() {
    }

    /**
     * Runs the mixed use, then the benchmark method named by the first argument.
     *
     * @param args the name of a {@code ComputeKernels} benchmark method, optionally the rounds and the calls per round
     * @throws Exception if the method does not exist or fails
     */
    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: KernelTimer BENCHMARK [ROUNDS [CALLS]]   (a ComputeKernels method, e.g. dotNDArray)");
            System.exit(2);
        }
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 6;
        int calls = args.length > 2 ? Integer.parseInt(args[2]) : 300;
        Method m = ComputeKernels.class.getMethod(args[0]);
        ComputeKernels k = new ComputeKernels();
        k.setUp();
        double sink = 0;
        try {
            for (int r = 0; r < rounds; r++) {
                long t0 = System.nanoTime();
                for (int i = 0; i < calls; i++) {
                    sink += ((Number) m.invoke(k)).doubleValue();
                }
                System.out.printf("%s round %d: %.1f us per call%n", args[0], r, (System.nanoTime() - t0) / 1e3 / calls);
            }
        } finally {
            k.tearDown();
        }
        System.out.println("(sum of results " + sink + ")");
    }
}
