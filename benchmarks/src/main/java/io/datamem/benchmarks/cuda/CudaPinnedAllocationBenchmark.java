package io.datamem.benchmarks.cuda;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.impl.pool.PoolingAllocator;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

/**
 * The time to allocate and free a block of pinned memory: {@code cuda:pinned} ({@code cudaHostAlloc}
 * and {@code cudaFreeHost} every time) against {@code pool(cuda:pinned):max=1g} (the pool's fast path
 * once its slab exists), from 64 KiB to 1 GiB.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"})
public class CudaPinnedAllocationBenchmark {

    /** The handler allocating. */
    @Param({"cuda:pinned", "pool(cuda:pinned):max=1g"})
    public String handler;

    /** The bytes per block. */
    @Param({"64k", "256k", "1m", "4m", "16m", "64m", "256m", "1g"})
    public String size;

    private DataMemAllocator allocator;
    private long bytes;

    /** Creates the state (JMH instantiates it). */
    public CudaPinnedAllocationBenchmark() {
    }

    /** Builds the allocator. */
    @Setup(Level.Trial)
    public void setUp() {
        CudaBenchmarks.requireGpu();
        allocator = DataMem.createHandler(handler).allocator();
        bytes = CudaBenchmarks.bytes(size);
    }

    /** Returns the pool's memory. */
    @TearDown(Level.Trial)
    public void tearDown() {
        if (allocator instanceof PoolingAllocator pool) {
            pool.close();
        }
    }

    /**
     * One allocation and its free.
     *
     * @return the block's address, so the allocation is not optimised away
     */
    @Benchmark
    public long allocateAndFree() {
        MemorySegment p = allocator.malloc(bytes);
        if (p.address() == 0) {
            throw new IllegalStateException(handler + " could not allocate " + bytes + " bytes");
        }
        allocator.free(p, bytes);
        return p.address();
    }
}
