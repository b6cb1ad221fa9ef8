package io.datamem.benchmarks;

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
import org.openjdk.jmh.annotations.TearDown;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Random access, GUPS-style: read-modify-write of 64-bit words at random positions in a block of
 * {@link #gib} GiB (touched beforehand), on transparent huge pages or on ordinary 4 KiB pages. The
 * updates are independent, so the processor overlaps their cache and TLB misses; what is left is
 * the memory and page-walk latency that huge pages cut.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class RandomAccess {

    /** Updates per invocation. */
    public static final int UPDATES = 1 << 20;

    /** The block size in GiB. */
    @Param({"1", "4"})
    public int gib;

    /** {@code thp} (transparent huge pages) or {@code 4k} (ordinary pages). */
    @Param({"thp", "4k"})
    public String pages;

    private Pages block;
    private MemorySegment segment;
    private long mask;
    private long seed = 0x9E3779B97F4A7C15L;

    /** Creates the state (JMH does). */
    public RandomAccess() {
    }

    /** Maps the block and touches all of it. */
    @Setup(Level.Trial)
    public void setUp() {
        long bytes = (long) gib << 30;
        block = Pages.map(pages, bytes);
        segment = block.segment();
        segment.fill((byte) 1);
        mask = bytes / 8 - 1;
        Notes.record("RandomAccess " + pages + " " + gib + " GiB", block.residency());
    }

    /** Unmaps the block. */
    @TearDown(Level.Trial)
    public void tearDown() {
        block.close();
    }

    /**
     * {@value #UPDATES} random updates; the time is per update.
     *
     * @return the generator's state
     */
    @Benchmark
    @OperationsPerInvocation(UPDATES)
    public long update() {
        MemorySegment s = segment;
        long m = mask;
        long x = seed;
        for (int i = 0; i < UPDATES; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            long off = (x & m) << 3;
            s.set(JAVA_LONG, off, s.get(JAVA_LONG, off) ^ x);
        }
        seed = x;
        return x;
    }
}
