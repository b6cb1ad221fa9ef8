package io.datamem.benchmarks;

import io.datamem.benchmarks.report.Trace;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import java.util.concurrent.TimeUnit;

/**
 * The mixed-size {@link Trace} replayed against each allocator: a window of 4096 live blocks of 16 B
 * to 64 KiB, each step freeing a random live block and allocating a new one; the first byte of every
 * block is written. The score is ns per allocation, its free included (the replay frees every block
 * it allocates). {@code c} replays the very same arrays in C with glibc ({@code dm_bench_trace}).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class TraceReplay {

    /** The allocator, one of {@link TraceHeaps#NAMES}. */
    @Param({"c", "default_allocator", "aligned64", "pool(aligned64)", "ffm", "jna", "nettyPooled", "nettyAdaptive",
            "arenaConfined"})
    public String allocator;

    private TraceHeaps.Replayer replayer;

    /** Creates the state (JMH does). */
    public TraceReplay() {
    }

    /** Generates the trace and builds the allocator. */
    @Setup(Level.Trial)
    public void setUp() {
        replayer = TraceHeaps.of(allocator, Trace.standard());
    }

    /**
     * One replay of the whole trace. On a touched heap ({@link Suite#TOUCHED_HEAP}): the Netty and
     * {@code Arena} peers allocate Java objects for every block.
     *
     * @return the bytes allocated
     */
    @Benchmark
    @Fork(jvmArgsAppend = Suite.TOUCHED_HEAP)
    @OperationsPerInvocation(Trace.ALLOCATIONS)
    public long replay() {
        return replayer.replay(1);
    }
}
