package io.datamem.benchmarks;

import io.datamem.DataMem;
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

import java.util.concurrent.TimeUnit;

/**
 * An {@link NDArray} whose memory Java code touches: {@code empty}, one element written, then
 * {@code close}. Writing needs the array's segment, whose validity closing must end on every thread
 * (the JDK's shared arena close, a handshake with all threads), unless the array is
 * {@linkplain NDArray#confined() confined} to its thread (a confined arena's close).
 */
@Fork(jvmArgsAppend = Suite.TOUCHED_HEAP)
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class NDArrayWritten {

    /** The handler bound as the process default. */
    @Param({"pool(aligned64)"})
    public String handler;

    /** The block size in bytes. */
    @Param({"16", "64", "256", "4096", "65536", "1048576", "16777216"})
    public long byteSize;

    private DataMemHandler previous;

    /** Creates the state (JMH does). */
    public NDArrayWritten() {
    }

    /** Makes {@link #handler} the process default. */
    @Setup(Level.Trial)
    public void setUp() {
        previous = DataMem.setDefaultHandler(DataMem.handler(handler));
    }

    /** Restores the previous default. */
    @TearDown(Level.Trial)
    public void tearDown() {
        DataMem.setDefaultHandler(previous);
    }

    /**
     * {@code NDArray.empty(INT8, byteSize)}, one element set, {@code close()}.
     *
     * @return the array's address
     */
    @Benchmark
    public long ndarray() {
        try (NDArray a = NDArray.empty(DType.INT8, byteSize)) {
            a.setLong(1, 0);
            return a.address();
        }
    }

    /**
     * {@code NDArray.empty(INT8, byteSize).confined()}, one element set, {@code close()}.
     *
     * @return the array's address
     */
    @Benchmark
    public long confined() {
        try (NDArray a = NDArray.empty(DType.INT8, byteSize).confined()) {
            a.setLong(1, 0);
            return a.address();
        }
    }
}
