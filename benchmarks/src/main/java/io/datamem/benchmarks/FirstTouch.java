package io.datamem.benchmarks;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;

/**
 * First touch: writing one byte in every 4 KiB of a fresh block of {@link #gib} GiB, which makes the
 * kernel fault in (and zero) every page. The mapping is made before and unmapped after each
 * measured invocation, outside the timing.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class FirstTouch {

    /** The block size in GiB. */
    @Param({"1", "4"})
    public int gib;

    /** {@code thp} (transparent huge pages) or {@code 4k} (ordinary pages). */
    @Param({"thp", "4k"})
    public String pages;

    private Pages block;
    private boolean noted;

    /** Creates the state (JMH does). */
    public FirstTouch() {
    }

    /** Maps a fresh block. */
    @Setup(Level.Invocation)
    public void map() {
        block = Pages.map(pages, (long) gib << 30);
    }

    /** Notes what backed the block once, and unmaps it. */
    @TearDown(Level.Invocation)
    public void unmap() {
        if (!noted) {
            Notes.record("FirstTouch " + pages + " " + gib + " GiB", block.residency());
            noted = true;
        }
        block.close();
    }

    /**
     * Touches every 4 KiB of the block.
     *
     * @return a byte read back
     */
    @Benchmark
    public byte touch() {
        MemorySegment s = block.segment();
        long n = s.byteSize();
        for (long off = 0; off < n; off += 4096) {
            s.set(ValueLayout.JAVA_BYTE, off, (byte) 1);
        }
        return s.get(ValueLayout.JAVA_BYTE, n - 4096);
    }
}
