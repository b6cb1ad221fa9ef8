package io.datamem.benchmarks;

import io.datamem.DataMem;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
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
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;

/**
 * One element read or written, as a user writes it: through {@link NDArray}'s accessors for one
 * and two indices ({@code a.getDouble(i)}, {@code a.setDouble(v, i, j)}: no index array), through the
 * array's raw {@link MemorySegment} ({@code segment.getAtIndex(JAVA_DOUBLE, i)}) and through a Java
 * {@code double[]}. A 1-D index addresses a float64 vector of {@value #ROWS} × {@value #COLUMNS}
 * elements; a 2-D index a {@value #ROWS} × {@value #COLUMNS}
 * matrix, which the raw variants address as {@code i * columns + j}. Both fit the L1 cache.
 *
 * <p>The indices and the value live in fields, so that the compiler cannot fold them into constants;
 * the benchmark itself allocates nothing.
 *
 * <p>The {@code Sum} and {@code Fill} benchmarks are the loops users write: every element of the
 * vector (1-D) or the matrix (2-D, row by row) read and summed, or written, in one operation of
 * {@value #ROWS} × {@value #COLUMNS} accesses. A single access measures the accessor's checks end
 * to end; a loop shows what is left of them once the compiler has hoisted what does not change.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class NDArrayAccess {

    /** Rows of the matrix. */
    public static final int ROWS = 32;
    /** Columns of the matrix. */
    public static final int COLUMNS = 32;

    /** The 1-D index. */
    public int index = 517;
    /** The 2-D index's row. */
    public int row = 17;
    /** The 2-D index's column. */
    public int column = 21;
    /** The matrix's row length, as raw code holds it. */
    public int columns = COLUMNS;
    /** The value written. */
    public double value = 2.5;

    private NDArray vector;
    private NDArray matrix;
    private MemorySegment vectorSegment;
    private MemorySegment matrixSegment;
    private double[] vectorArray;
    private double[] matrixArray;

    /** Creates the state (JMH does). */
    public NDArrayAccess() {
    }

    /** Makes the arrays through {@code default_allocator} and fills them. */
    @Setup(Level.Trial)
    public void setUp() {
        vector = DataMem.callWith(DataMem.builtinDefault(), () -> NDArray.empty(DType.FLOAT64, ROWS * COLUMNS));
        matrix = DataMem.callWith(DataMem.builtinDefault(), () -> NDArray.empty(DType.FLOAT64, ROWS, COLUMNS));
        vectorSegment = vector.segment();
        matrixSegment = matrix.segment();
        vectorArray = new double[ROWS * COLUMNS];
        matrixArray = new double[ROWS * COLUMNS];
        for (int i = 0; i < ROWS * COLUMNS; i++) {
            vectorArray[i] = i;
            matrixArray[i] = i;
            vectorSegment.setAtIndex(JAVA_DOUBLE, i, i);
            matrixSegment.setAtIndex(JAVA_DOUBLE, i, i);
        }
    }

    /** Closes the arrays. */
    @TearDown(Level.Trial)
    public void tearDown() {
        vector.close();
        matrix.close();
    }

    /**
     * {@code a.getDouble(i)}.
     *
     * @return the element
     */
    @Benchmark
    public double ndarrayGet1d() {
        return vector.getDouble(index);
    }

    /**
     * {@code segment.getAtIndex(JAVA_DOUBLE, i)}.
     *
     * @return the element
     */
    @Benchmark
    public double segmentGet1d() {
        return vectorSegment.getAtIndex(JAVA_DOUBLE, index);
    }

    /**
     * {@code array[i]}.
     *
     * @return the element
     */
    @Benchmark
    public double arrayGet1d() {
        return vectorArray[index];
    }

    /** {@code a.setDouble(v, i)}. */
    @Benchmark
    public void ndarraySet1d() {
        vector.setDouble(value, index);
    }

    /** {@code segment.setAtIndex(JAVA_DOUBLE, i, v)}. */
    @Benchmark
    public void segmentSet1d() {
        vectorSegment.setAtIndex(JAVA_DOUBLE, index, value);
    }

    /** {@code array[i] = v}. */
    @Benchmark
    public void arraySet1d() {
        vectorArray[index] = value;
    }

    /**
     * {@code a.getDouble(i, j)}.
     *
     * @return the element
     */
    @Benchmark
    public double ndarrayGet2d() {
        return matrix.getDouble(row, column);
    }

    /**
     * {@code segment.getAtIndex(JAVA_DOUBLE, i * columns + j)}.
     *
     * @return the element
     */
    @Benchmark
    public double segmentGet2d() {
        return matrixSegment.getAtIndex(JAVA_DOUBLE, (long) row * columns + column);
    }

    /**
     * {@code array[i * columns + j]}.
     *
     * @return the element
     */
    @Benchmark
    public double arrayGet2d() {
        return matrixArray[row * columns + column];
    }

    /** {@code a.setDouble(v, i, j)}. */
    @Benchmark
    public void ndarraySet2d() {
        matrix.setDouble(value, row, column);
    }

    /** {@code segment.setAtIndex(JAVA_DOUBLE, i * columns + j, v)}. */
    @Benchmark
    public void segmentSet2d() {
        matrixSegment.setAtIndex(JAVA_DOUBLE, (long) row * columns + column, value);
    }

    /** {@code array[i * columns + j] = v}. */
    @Benchmark
    public void arraySet2d() {
        matrixArray[row * columns + column] = value;
    }

    /**
     * {@code for (i) s += a.getDouble(i)} over the vector.
     *
     * @return the sum
     */
    @Benchmark
    public double ndarraySum1d() {
        NDArray a = vector;
        double s = 0;
        for (int i = 0; i < ROWS * COLUMNS; i++) {
            s += a.getDouble(i);
        }
        return s;
    }

    /**
     * {@code for (i) s += segment.getAtIndex(JAVA_DOUBLE, i)} over the vector.
     *
     * @return the sum
     */
    @Benchmark
    public double segmentSum1d() {
        MemorySegment m = vectorSegment;
        double s = 0;
        for (int i = 0; i < ROWS * COLUMNS; i++) {
            s += m.getAtIndex(JAVA_DOUBLE, i);
        }
        return s;
    }

    /**
     * {@code for (i) s += array[i]} over the vector.
     *
     * @return the sum
     */
    @Benchmark
    public double arraySum1d() {
        double[] a = vectorArray;
        double s = 0;
        for (int i = 0; i < ROWS * COLUMNS; i++) {
            s += a[i];
        }
        return s;
    }

    /** {@code for (i) a.setDouble(v, i)} over the vector. */
    @Benchmark
    public void ndarrayFill1d() {
        NDArray a = vector;
        double v = value;
        for (int i = 0; i < ROWS * COLUMNS; i++) {
            a.setDouble(v, i);
        }
    }

    /** {@code for (i) segment.setAtIndex(JAVA_DOUBLE, i, v)} over the vector. */
    @Benchmark
    public void segmentFill1d() {
        MemorySegment m = vectorSegment;
        double v = value;
        for (int i = 0; i < ROWS * COLUMNS; i++) {
            m.setAtIndex(JAVA_DOUBLE, i, v);
        }
    }

    /** {@code for (i) array[i] = v} over the vector. */
    @Benchmark
    public void arrayFill1d() {
        double[] a = vectorArray;
        double v = value;
        for (int i = 0; i < ROWS * COLUMNS; i++) {
            a[i] = v;
        }
    }

    /**
     * {@code for (i) for (j) s += a.getDouble(i, j)} over the matrix.
     *
     * @return the sum
     */
    @Benchmark
    public double ndarraySum2d() {
        NDArray a = matrix;
        double s = 0;
        for (int i = 0; i < ROWS; i++) {
            for (int j = 0; j < COLUMNS; j++) {
                s += a.getDouble(i, j);
            }
        }
        return s;
    }

    /**
     * {@code for (i) for (j) s += segment.getAtIndex(JAVA_DOUBLE, i * columns + j)} over the matrix.
     *
     * @return the sum
     */
    @Benchmark
    public double segmentSum2d() {
        MemorySegment m = matrixSegment;
        int c = columns;
        double s = 0;
        for (int i = 0; i < ROWS; i++) {
            for (int j = 0; j < COLUMNS; j++) {
                s += m.getAtIndex(JAVA_DOUBLE, (long) i * c + j);
            }
        }
        return s;
    }

    /**
     * {@code for (i) for (j) s += array[i * columns + j]} over the matrix.
     *
     * @return the sum
     */
    @Benchmark
    public double arraySum2d() {
        double[] a = matrixArray;
        int c = columns;
        double s = 0;
        for (int i = 0; i < ROWS; i++) {
            for (int j = 0; j < COLUMNS; j++) {
                s += a[i * c + j];
            }
        }
        return s;
    }

    /** {@code for (i) for (j) a.setDouble(v, i, j)} over the matrix. */
    @Benchmark
    public void ndarrayFill2d() {
        NDArray a = matrix;
        double v = value;
        for (int i = 0; i < ROWS; i++) {
            for (int j = 0; j < COLUMNS; j++) {
                a.setDouble(v, i, j);
            }
        }
    }

    /** {@code for (i) for (j) segment.setAtIndex(JAVA_DOUBLE, i * columns + j, v)} over the matrix. */
    @Benchmark
    public void segmentFill2d() {
        MemorySegment m = matrixSegment;
        int c = columns;
        double v = value;
        for (int i = 0; i < ROWS; i++) {
            for (int j = 0; j < COLUMNS; j++) {
                m.setAtIndex(JAVA_DOUBLE, (long) i * c + j, v);
            }
        }
    }

    /** {@code for (i) for (j) array[i * columns + j] = v} over the matrix. */
    @Benchmark
    public void arrayFill2d() {
        double[] a = matrixArray;
        int c = columns;
        double v = value;
        for (int i = 0; i < ROWS; i++) {
            for (int j = 0; j < COLUMNS; j++) {
                a[i * c + j] = v;
            }
        }
    }
}
