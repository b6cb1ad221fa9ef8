package io.datamem.benchmarks;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.impl.micrometer.DataMemMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
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

/**
 * What observing costs per allocate + free pair of 64 bytes: the {@link #handler} as it is
 * ({@code plain}), with {@code +stats} ({@code stats}), and with {@code +stats} published through
 * the Micrometer binder {@link DataMemMetrics} to a registry, which records every allocation's size
 * in a distribution summary ({@code micrometer}).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class StatisticsOverhead {

    /** The handler observed. */
    @Param({"pool(aligned64)", "default_allocator"})
    public String handler;

    /** {@code plain}, {@code stats} or {@code micrometer}. */
    @Param({"plain", "stats", "micrometer"})
    public String observer;

    /** The block size in bytes. */
    @Param({"64"})
    public long byteSize;

    private DataMemAllocator allocator;
    private DataMemMetrics metrics;

    /** Creates the state (JMH does). */
    public StatisticsOverhead() {
    }

    /**
     * Builds the handler and, for {@code micrometer}, binds it to a registry.
     *
     * @throws IllegalArgumentException if {@link #observer} is unknown
     */
    @Setup(Level.Trial)
    public void setUp() {
        DataMemHandler h = switch (observer) {
            case "plain" -> DataMem.createHandler(handler);
            case "stats", "micrometer" -> DataMem.createHandler(handler + "+stats");
            default -> throw new IllegalArgumentException("observer: " + observer
                    + " (expected: plain, stats or micrometer)");
        };
        if (observer.equals("micrometer")) {
            metrics = DataMemMetrics.of(h);
            metrics.bindTo(new SimpleMeterRegistry());
        }
        allocator = h.allocator();
    }

    /** Unbinds the meters. */
    @TearDown(Level.Trial)
    public void tearDown() {
        if (metrics != null) {
            metrics.close();
        }
    }

    /**
     * {@code malloc} + {@code free}.
     *
     * @return the block's address
     */
    @Benchmark
    public long pair() {
        MemorySegment p = allocator.malloc(byteSize);
        if (p.address() == 0) {
            throw new OutOfMemoryError("malloc(" + byteSize + ")");
        }
        allocator.free(p, byteSize);
        return p.address();
    }
}
