package io.datamem.benchmarks;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

/**
 * The allocator's own malloc + free pair, in a loop of {@link AllocFreePeers#C_LOOP} pairs per
 * invocation: the same shape as the C baseline ({@code AllocFreePeers.cMallocFree}), so that the
 * comparison with glibc (and with the C allocators run under {@code LD_PRELOAD}) leaves out JMH's
 * per-invocation cost and the lookup of the current handler, as the C loop does.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class AllocFreeLoop {

    /** The handler whose allocator runs the loop. */
    @Param({"default_allocator", "pool(aligned64)"})
    public String handler;

    /** The block size in bytes. */
    @Param({"16", "64", "256", "4096", "65536", "1048576", "16777216"})
    public long byteSize;

    private DataMemAllocator allocator;

    /** Creates the state (JMH does). */
    public AllocFreeLoop() {
    }

    /** Resolves the handler's allocator. */
    @Setup(Level.Trial)
    public void setUp() {
        allocator = DataMem.handler(handler).allocator();
    }

    /**
     * {@link AllocFreePeers#C_LOOP} pairs of {@code malloc} + {@code free}.
     *
     * @return the addresses, combined
     */
    @Benchmark
    @OperationsPerInvocation(AllocFreePeers.C_LOOP)
    public long loop() {
        DataMemAllocator a = allocator;
        long size = byteSize;
        long sum = 0;
        for (int i = 0; i < AllocFreePeers.C_LOOP; i++) {
            MemorySegment p = a.malloc(size);
            if (p.address() == 0) {
                throw new OutOfMemoryError("malloc(" + size + ")");
            }
            sum += p.address();
            a.free(p, size);
        }
        return sum;
    }
}
