package io.datamem.benchmarks;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
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
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_DOUBLE_UNALIGNED;

/**
 * A streaming kernel (STREAM's triad, {@code a[i] = b[i] + 3 * c[i]} over float64) on arrays that
 * start {@link #offset} bytes past a 64-byte boundary: 0 is what {@code aligned64} gives, 16 what
 * {@code malloc} typically gives (16-byte aligned), 1 is not even element-aligned. Each array is
 * {@link #kib} KiB: 256 KiB stays in the L2 cache, where alignment matters most; 64 MiB streams
 * from memory.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class Streaming {

    /** Bytes past a 64-byte boundary where each array starts. */
    @Param({"0", "16", "1"})
    public long offset;

    /** The size of each array in KiB. */
    @Param({"256", "65536"})
    public long kib;

    private final DataMemAllocator allocator = DataMem.handler("aligned64").allocator();
    private final MemorySegment[] raw = new MemorySegment[3];
    private MemorySegment a;
    private MemorySegment b;
    private MemorySegment c;
    private int n;

    /** Creates the state (JMH does). */
    public Streaming() {
    }

    /** Allocates the arrays (64-byte aligned, then shifted by {@link #offset}) and fills them. */
    @Setup(Level.Trial)
    public void setUp() {
        long bytes = kib << 10;
        n = Math.toIntExact(bytes / 8);
        MemorySegment[] s = new MemorySegment[3];
        for (int i = 0; i < 3; i++) {
            raw[i] = allocator.malloc(bytes + 64);
            if (raw[i].address() == 0) {
                throw new OutOfMemoryError("malloc(" + (bytes + 64) + ")");
            }
            s[i] = raw[i].reinterpret(bytes + 64).asSlice(offset, bytes);
            for (int j = 0; j < n; j++) {
                s[i].set(JAVA_DOUBLE_UNALIGNED, (long) j * 8, j * 0.5 + i);
            }
        }
        a = s[0];
        b = s[1];
        c = s[2];
    }

    /** Frees the arrays. */
    @TearDown(Level.Trial)
    public void tearDown() {
        long bytes = kib << 10;
        for (MemorySegment r : raw) {
            allocator.free(r, bytes + 64);
        }
    }

    /**
     * One pass of the triad over the arrays.
     *
     * @return an element of the result
     */
    @Benchmark
    public double triad() {
        MemorySegment x = a;
        MemorySegment y = b;
        MemorySegment z = c;
        int count = n;
        for (int i = 0; i < count; i++) {
            long off = (long) i * 8;
            x.set(JAVA_DOUBLE_UNALIGNED, off, y.get(JAVA_DOUBLE_UNALIGNED, off) + 3.0 * z.get(JAVA_DOUBLE_UNALIGNED, off));
        }
        return x.get(JAVA_DOUBLE_UNALIGNED, 0);
    }
}
