package io.datamem.benchmarks;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

/**
 * The whole life of a float64 array of {@link #elements} elements, as a user writes it, against the
 * handler's own {@code malloc} + {@code free} pair of the same bytes, with {@link #handler} the process
 * default (as {@code -Ddatamem.handler=NAME} makes it). The suite runs it on 1 and on 2 threads; on 2,
 * each thread makes its own arrays and the time is per lifecycle on each thread.
 *
 * <p>The written lifecycle is the Java side of NumPy's {@code a = np.empty(n); a[0] = 1.0; b = a[0];
 * del a}, which {@link NumPyTiming} times in CPython in the same run.
 */
@Fork(jvmArgsAppend = Suite.TOUCHED_HEAP)
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class NDArrayLifecycle {

    /** The handler bound as the process default. */
    @Param({"default_allocator", "aligned64", "pool(aligned64)"})
    public String handler;

    /** The array's length in float64 elements: 8 (64 B) and 131072 (1 MiB). */
    @Param({"8", "131072"})
    public long elements;

    private long byteSize;
    private DataMemHandler previous;

    /** Creates the state (JMH does). */
    public NDArrayLifecycle() {
    }

    /** Makes {@link #handler} the process default. */
    @Setup(Level.Trial)
    public void setUp() {
        byteSize = Math.multiplyExact(elements, DType.FLOAT64.itemSize());
        previous = DataMem.setDefaultHandler(DataMem.handler(handler));
    }

    /** Restores the previous default. */
    @TearDown(Level.Trial)
    public void tearDown() {
        DataMem.setDefaultHandler(previous);
    }

    /**
     * {@code NDArray.empty(FLOAT64, elements)}, {@code setDouble(1.0, 0)}, {@code getDouble(0)},
     * {@code close()}: the written lifecycle.
     *
     * @return the element read
     */
    @Benchmark
    public double written() {
        try (NDArray a = NDArray.empty(DType.FLOAT64, elements)) {
            a.setDouble(1.0, 0);
            return a.getDouble(0);
        }
    }

    /**
     * {@code NDArray.empty(FLOAT64, elements)} + {@code close()}: an array whose memory Java code
     * never touched.
     *
     * @return the array's size in bytes
     */
    @Benchmark
    public long neverWritten() {
        try (NDArray a = NDArray.empty(DType.FLOAT64, elements)) {
            return a.byteSize();
        }
    }

    /**
     * The handler's own pair: {@code DataMem.current().allocator()} {@code malloc} + {@code free} of
     * the array's bytes.
     *
     * @return the block's address
     */
    @Benchmark
    public long mallocFree() {
        DataMemAllocator a = DataMem.current().allocator();
        MemorySegment p = a.malloc(byteSize);
        if (p.address() == 0) {
            throw new OutOfMemoryError("malloc(" + byteSize + ")");
        }
        a.free(p, byteSize);
        return p.address();
    }
}
