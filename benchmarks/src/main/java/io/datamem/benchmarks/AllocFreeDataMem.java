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
 * One allocate + free pair of {@link #byteSize} bytes through datamem, with {@link #handler} the
 * process default (as {@code -Ddatamem.handler=NAME} makes it): through
 * {@code DataMem.current().allocator()}, and as an {@link NDArray} ({@code empty} + {@code close}).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class AllocFreeDataMem {

    /** The handler bound as the process default. */
    @Param({"default_allocator", "aligned64", "pool(aligned64)"})
    public String handler;

    /** The block size in bytes. */
    @Param({"16", "64", "256", "4096", "65536", "1048576", "16777216"})
    public long byteSize;

    private DataMemHandler previous;

    /** Creates the state (JMH does). */
    public AllocFreeDataMem() {
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
     * {@code DataMem.current().allocator()}: {@code malloc} + {@code free}.
     *
     * @return the block's address
     */
    @Benchmark
    public long allocator() {
        DataMemAllocator a = DataMem.current().allocator();
        MemorySegment p = a.malloc(byteSize);
        if (p.address() == 0) {
            throw new OutOfMemoryError("malloc(" + byteSize + ")");
        }
        a.free(p, byteSize);
        return p.address();
    }

    /**
     * {@code NDArray.empty(INT8, byteSize)} + {@code close()}.
     *
     * @return the array's address
     */
    @Benchmark
    @Fork(jvmArgsAppend = Suite.TOUCHED_HEAP)
    public long ndarray() {
        try (NDArray a = NDArray.empty(DType.INT8, byteSize)) {
            return a.address();
        }
    }
}
