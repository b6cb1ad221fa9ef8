package io.datamem.benchmarks;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.array.Parallel;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

/**
 * Compute kernels as users write them, in one JVM after mixed use: a fill, a dot product, a 2-D
 * matrix multiply through {@code getDouble(i, k)} and {@code setDouble(v, i, j)}, and a row loop
 * ({@link Parallel#forEachRow}-style: a row view per index). Each kernel runs through
 * {@link NDArray}'s accessors, over {@code double[]}/{@code double[][]}, and over the arrays' raw
 * segments, on the benchmark thread (the arrays' owner) and in parallel on the machine's threads
 * (2 here): {@link Parallel#forRange} for the arrays, a parallel {@link IntStream} for the Java
 * arrays and the segments.
 *
 * <p><b>Mixed use.</b> Before any measurement, every kernel runs once through each way an array
 * is used in a real program, from the same call sites as the measured ones: first on worker threads
 * (which shares the arrays, as {@code Parallel} does), then on the owner, then on workers again; a
 * small unshared array and a transposed (strided) view go through the same kernels too, and an
 * int32 array through the same accessors from kernels of its own (as the rest of a program uses other
 * dtypes). The kernels are static methods called by every benchmark, so each call site has seen all
 * of it when the measured code compiles.
 *
 * <p><b>Two dtypes at one call site.</b> {@code fillNDArrayTwoDtypes} and {@code dotNDArrayTwoDtypes}
 * measure float64 vectors through kernels that the mixed use also ran on an int32 array (one generic
 * {@code dot(NDArray, NDArray)} for every dtype, which Java arrays cannot express): the JIT then
 * compiles both dtypes' paths into the loop.
 *
 * <p>Sizes: vectors of {@value #LENGTH} float64 (4 MiB), matrices of {@value #N} × {@value #N}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class ComputeKernels {

    /** The vectors' length. */
    public static final int LENGTH = 1 << 19;
    /** The matrices' side. */
    public static final int N = 256;

    private static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED;

    private NDArray x;
    private NDArray y;
    private NDArray a;
    private NDArray b;
    private NDArray c;
    private double[] xs;
    private double[] ys;
    private double[][] as;
    private double[][] bs;
    private double[][] cs;
    private MemorySegment xSeg;
    private MemorySegment ySeg;
    private MemorySegment aSeg;
    private MemorySegment bSeg;
    private MemorySegment cSeg;
    /** The value the fills write, in a field so that nothing folds it. */
    public double value = 1.5;

    /** Creates the state (JMH does). */
    public ComputeKernels() {
    }

    /** Makes the arrays through {@code aligned64} (the benchmark thread owns them) and runs the mixed use. */
    @Setup(Level.Trial)
    public void setUp() {
        DataMemHandler aligned = DataMem.handler("aligned64");
        DataMem.runWith(aligned, () -> {
            x = NDArray.zeros(DType.FLOAT64, LENGTH);
            y = NDArray.zeros(DType.FLOAT64, LENGTH);
            a = NDArray.zeros(DType.FLOAT64, N, N);
            b = NDArray.zeros(DType.FLOAT64, N, N);
            c = NDArray.zeros(DType.FLOAT64, N, N);
        });
        xs = new double[LENGTH];
        ys = new double[LENGTH];
        as = new double[N][N];
        bs = new double[N][N];
        cs = new double[N][N];
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < N; j++) {
                as[i][j] = i + j;
                bs[i][j] = i - j;
            }
        }
        mixedUse(aligned);
        xSeg = x.segment();
        ySeg = y.segment();
        aSeg = a.segment();
        bSeg = b.segment();
        cSeg = c.segment();
    }

    /**
     * Every kernel through each way arrays are used: on workers first (Parallel shares what it
     * captures), then on this thread, then on workers again, and through other kinds of arrays.
     */
    private void mixedUse(DataMemHandler aligned) {
        for (int round = 0; round < 3; round++) {
            boolean workers = round != 1;
            for (int rep = 0; rep < 3; rep++) {
                if (workers) {
                    fillParallel(x, value);
                    fillParallel(y, value);
                    dotParallel(x, y);
                    matmulParallel(a, b, c);
                    rowsParallel(a);
                } else {
                    fill(x, value);
                    fill(y, value);
                    dot(x, y);
                    matmul(a, b, c);
                    rows(a);
                }
            }
        }
        // Other kinds of arrays through the same call sites: small and unshared, strided, int32
        DataMem.runWith(aligned, () -> {
            try (NDArray sx = NDArray.zeros(DType.FLOAT64, 64); NDArray sy = NDArray.zeros(DType.FLOAT64, 64);
                 NDArray sm = NDArray.zeros(DType.FLOAT64, 8, 8); NDArray si = NDArray.zeros(DType.INT32, 64)) {
                NDArray t = sm.transpose();
                for (int rep = 0; rep < 200; rep++) {
                    fill(sx, rep);
                    fillOther(si, rep);
                    fillTwoDtypes(sx, rep);
                    fillTwoDtypes(si, rep);
                    dot(sx, sy);
                    dotOther(si, sx);
                    dotTwoDtypes(sx, sy);
                    dotTwoDtypes(si, sx);
                    matmul(t, sm, sm);
                    rows(t);
                }
            }
        });
        // and the owner again
        fill(x, 0.5);
        dot(x, y);
        fillTwoDtypes(x, 0.5);
        dotTwoDtypes(x, y);
        matmul(a, b, c);
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < N; j++) {
                a.setDouble(i + j, i, j);
                b.setDouble(i - j, i, j);
            }
        }
    }

    /** Closes the arrays. */
    @TearDown(Level.Trial)
    public void tearDown() {
        x.close();
        y.close();
        a.close();
        b.close();
        c.close();
    }

    // ---------------------------------------------------------------------------------------------
    // The kernels, as users write them

    static void fill(NDArray v, double value) {
        long n = v.shape()[0];
        for (long i = 0; i < n; i++) {
            v.setDouble(value, i);
        }
    }

    static double dot(NDArray u, NDArray v) {
        long n = u.shape()[0];
        double s = 0;
        for (long i = 0; i < n; i++) {
            s += u.getDouble(i) * v.getDouble(i);
        }
        return s;
    }

    // The same kernels, for the other dtypes of the program (fillOther, dotOther) and for both
    // (fillTwoDtypes, dotTwoDtypes): copies, so that each has call sites of its own.

    static void fillOther(NDArray v, double value) {
        long n = v.shape()[0];
        for (long i = 0; i < n; i++) {
            v.setDouble(value, i);
        }
    }

    static double dotOther(NDArray u, NDArray v) {
        long n = u.shape()[0];
        double s = 0;
        for (long i = 0; i < n; i++) {
            s += u.getDouble(i) * v.getDouble(i);
        }
        return s;
    }

    static void fillTwoDtypes(NDArray v, double value) {
        long n = v.shape()[0];
        for (long i = 0; i < n; i++) {
            v.setDouble(value, i);
        }
    }

    static double dotTwoDtypes(NDArray u, NDArray v) {
        long n = u.shape()[0];
        double s = 0;
        for (long i = 0; i < n; i++) {
            s += u.getDouble(i) * v.getDouble(i);
        }
        return s;
    }

    static double matmul(NDArray a, NDArray b, NDArray c) {
        long n = a.shape()[0];
        for (long i = 0; i < n; i++) {
            for (long j = 0; j < n; j++) {
                double s = 0;
                for (long k = 0; k < n; k++) {
                    s += a.getDouble(i, k) * b.getDouble(k, j);
                }
                c.setDouble(s, i, j);
            }
        }
        return c.getDouble(n - 1, n - 1);
    }

    static double rows(NDArray m) {
        long n = m.shape()[0];
        double s = 0;
        for (long i = 0; i < n; i++) {
            NDArray row = m.select(0, i);
            long cols = row.shape()[0];
            for (long j = 0; j < cols; j++) {
                s += row.getDouble(j);
            }
        }
        return s;
    }

    static void fillParallel(NDArray v, double value) {
        long n = v.shape()[0];
        long chunk = 1 << 14;
        Parallel.forRange(0, Math.ceilDiv(n, chunk), p -> {
            for (long i = p * chunk, end = Math.min(n, i + chunk); i < end; i++) {
                v.setDouble(value, i);
            }
        });
    }

    static double dotParallel(NDArray u, NDArray v) {
        long n = u.shape()[0];
        long chunk = 1 << 14;
        double[] partial = new double[(int) Math.ceilDiv(n, chunk)];
        Parallel.forRange(0, partial.length, p -> {
            double s = 0;
            for (long i = p * chunk, end = Math.min(n, i + chunk); i < end; i++) {
                s += u.getDouble(i) * v.getDouble(i);
            }
            partial[(int) p] = s;
        });
        double s = 0;
        for (double d : partial) {
            s += d;
        }
        return s;
    }

    static double matmulParallel(NDArray a, NDArray b, NDArray c) {
        long n = a.shape()[0];
        Parallel.forRange(0, n, i -> {
            for (long j = 0; j < n; j++) {
                double s = 0;
                for (long k = 0; k < n; k++) {
                    s += a.getDouble(i, k) * b.getDouble(k, j);
                }
                c.setDouble(s, i, j);
            }
        });
        return c.getDouble(n - 1, n - 1);
    }

    static double rowsParallel(NDArray m) {
        double[] sums = new double[(int) m.shape()[0]];
        Parallel.forEachRow(m, (row, i) -> {
            double s = 0;
            for (long j = 0, cols = row.shape()[0]; j < cols; j++) {
                s += row.getDouble(j);
            }
            sums[(int) i] = s;
        });
        double s = 0;
        for (double d : sums) {
            s += d;
        }
        return s;
    }

    // ---------------------------------------------------------------------------------------------
    // Benchmarks: NDArray, on the owner thread

    /**
     * Fill of a float64 vector through {@code setDouble(v, i)}.
     *
     * @return an element, so the work stays
     */
    @Benchmark
    public double fillNDArray() {
        fill(x, value);
        return x.getDouble(7);
    }

    /**
     * Dot product of two vectors through {@code getDouble(i)}.
     *
     * @return the product
     */
    @Benchmark
    public double dotNDArray() {
        return dot(x, y);
    }

    /**
     * Matrix multiply through {@code getDouble(i, k)} and {@code setDouble(v, i, j)}.
     *
     * @return an element of the product
     */
    @Benchmark
    public double matmulNDArray() {
        return matmul(a, b, c);
    }

    /**
     * Sum of every row, one row view per row.
     *
     * @return the sum
     */
    @Benchmark
    public double rowsNDArray() {
        return rows(a);
    }

    /**
     * {@link #fillNDArray} through a kernel that also filled an int32 array.
     *
     * @return an element
     */
    @Benchmark
    public double fillNDArrayTwoDtypes() {
        fillTwoDtypes(x, value);
        return x.getDouble(7);
    }

    /**
     * {@link #dotNDArray} through a kernel that also read an int32 array.
     *
     * @return the product
     */
    @Benchmark
    public double dotNDArrayTwoDtypes() {
        return dotTwoDtypes(x, y);
    }

    // Parallel (Parallel.forRange / forEachRow)

    /**
     * {@link #fillNDArray} in {@link Parallel#forRange}.
     *
     * @return an element
     */
    @Benchmark
    public double fillNDArrayParallel() {
        fillParallel(x, value);
        return x.getDouble(7);
    }

    /**
     * {@link #dotNDArray} in {@link Parallel#forRange}.
     *
     * @return the product
     */
    @Benchmark
    public double dotNDArrayParallel() {
        return dotParallel(x, y);
    }

    /**
     * {@link #matmulNDArray} in {@link Parallel#forRange}, a row per index.
     *
     * @return an element of the product
     */
    @Benchmark
    public double matmulNDArrayParallel() {
        return matmulParallel(a, b, c);
    }

    /**
     * {@link #rowsNDArray} in {@link Parallel#forEachRow}.
     *
     * @return the sum
     */
    @Benchmark
    public double rowsNDArrayParallel() {
        return rowsParallel(a);
    }

    // ---------------------------------------------------------------------------------------------
    // Java arrays

    /**
     * The fill over {@code double[]}.
     *
     * @return an element
     */
    @Benchmark
    public double fillJava() {
        double[] v = xs;
        for (int i = 0; i < v.length; i++) {
            v[i] = value;
        }
        return v[7];
    }

    /**
     * The dot product over {@code double[]}.
     *
     * @return the product
     */
    @Benchmark
    public double dotJava() {
        double[] u = xs;
        double[] v = ys;
        double s = 0;
        for (int i = 0; i < u.length; i++) {
            s += u[i] * v[i];
        }
        return s;
    }

    /**
     * The matrix multiply over {@code double[][]}.
     *
     * @return an element of the product
     */
    @Benchmark
    public double matmulJava() {
        double[][] a = as;
        double[][] b = bs;
        double[][] c = cs;
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < N; j++) {
                double s = 0;
                for (int k = 0; k < N; k++) {
                    s += a[i][k] * b[k][j];
                }
                c[i][j] = s;
            }
        }
        return c[N - 1][N - 1];
    }

    /**
     * The row sums over {@code double[][]}.
     *
     * @return the sum
     */
    @Benchmark
    public double rowsJava() {
        double s = 0;
        for (double[] row : as) {
            for (double d : row) {
                s += d;
            }
        }
        return s;
    }

    /**
     * The fill over {@code double[]} in a parallel {@link IntStream}, in chunks as the NDArray one.
     *
     * @return an element
     */
    @Benchmark
    public double fillJavaParallel() {
        double[] v = xs;
        int chunk = 1 << 14;
        double w = value;
        IntStream.range(0, Math.ceilDiv(v.length, chunk)).parallel().forEach(p -> {
            for (int i = p * chunk, end = Math.min(v.length, i + chunk); i < end; i++) {
                v[i] = w;
            }
        });
        return v[7];
    }

    /**
     * The dot product over {@code double[]} in a parallel {@link IntStream}.
     *
     * @return the product
     */
    @Benchmark
    public double dotJavaParallel() {
        double[] u = xs;
        double[] v = ys;
        int chunk = 1 << 14;
        double[] partial = new double[Math.ceilDiv(u.length, chunk)];
        IntStream.range(0, partial.length).parallel().forEach(p -> {
            double s = 0;
            for (int i = p * chunk, end = Math.min(u.length, i + chunk); i < end; i++) {
                s += u[i] * v[i];
            }
            partial[p] = s;
        });
        double s = 0;
        for (double d : partial) {
            s += d;
        }
        return s;
    }

    /**
     * The matrix multiply over {@code double[][]} in a parallel {@link IntStream}, a row per index.
     *
     * @return an element of the product
     */
    @Benchmark
    public double matmulJavaParallel() {
        double[][] a = as;
        double[][] b = bs;
        double[][] c = cs;
        IntStream.range(0, N).parallel().forEach(i -> {
            for (int j = 0; j < N; j++) {
                double s = 0;
                for (int k = 0; k < N; k++) {
                    s += a[i][k] * b[k][j];
                }
                c[i][j] = s;
            }
        });
        return c[N - 1][N - 1];
    }

    /**
     * The row sums over {@code double[][]} in a parallel {@link IntStream}.
     *
     * @return the sum
     */
    @Benchmark
    public double rowsJavaParallel() {
        double[][] m = as;
        double[] sums = new double[m.length];
        IntStream.range(0, m.length).parallel().forEach(i -> {
            double s = 0;
            for (double d : m[i]) {
                s += d;
            }
            sums[i] = s;
        });
        double s = 0;
        for (double d : sums) {
            s += d;
        }
        return s;
    }

    // ---------------------------------------------------------------------------------------------
    // The arrays' raw segments

    /**
     * The fill through the vector's segment.
     *
     * @return an element
     */
    @Benchmark
    public double fillSegment() {
        MemorySegment v = xSeg;
        for (long i = 0; i < LENGTH; i++) {
            v.setAtIndex(F64, i, value);
        }
        return v.getAtIndex(F64, 7);
    }

    /**
     * The dot product through the vectors' segments.
     *
     * @return the product
     */
    @Benchmark
    public double dotSegment() {
        MemorySegment u = xSeg;
        MemorySegment v = ySeg;
        double s = 0;
        for (long i = 0; i < LENGTH; i++) {
            s += u.getAtIndex(F64, i) * v.getAtIndex(F64, i);
        }
        return s;
    }

    /**
     * The matrix multiply through the matrices' segments, indexed {@code i * N + k}.
     *
     * @return an element of the product
     */
    @Benchmark
    public double matmulSegment() {
        MemorySegment a = aSeg;
        MemorySegment b = bSeg;
        MemorySegment c = cSeg;
        for (long i = 0; i < N; i++) {
            for (long j = 0; j < N; j++) {
                double s = 0;
                for (long k = 0; k < N; k++) {
                    s += a.getAtIndex(F64, i * N + k) * b.getAtIndex(F64, k * N + j);
                }
                c.setAtIndex(F64, i * N + j, s);
            }
        }
        return c.getAtIndex(F64, N * N - 1);
    }

    /**
     * The row sums through the matrix's segment.
     *
     * @return the sum
     */
    @Benchmark
    public double rowsSegment() {
        MemorySegment m = aSeg;
        double s = 0;
        for (long i = 0; i < N; i++) {
            for (long j = 0; j < N; j++) {
                s += m.getAtIndex(F64, i * N + j);
            }
        }
        return s;
    }
}
