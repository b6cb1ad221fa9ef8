package io.datamem.benchmarks.ucx;

import io.datamem.ucx.UcxContext;
import io.datamem.ucx.UcxRegistration;
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

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

/**
 * The cost of registering memory for a transfer: {@code uncached} maps and unmaps it
 * ({@code ucp_mem_map} + {@code ucp_mem_unmap}, what a transfer from unregistered memory pays
 * without a cache), {@code cached} finds it in the context's registration cache.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class UcxRegistrationBenchmark {

    /** Creates the state (JMH does). */
    public UcxRegistrationBenchmark() {
    }

    /** {@code UCX_TLS} of the context: what it registers with decides the cost. */
    @Param({"sm", "tcp"})
    public String transport;

    /** Bytes registered. */
    @Param({"4096", "1048576", "67108864"})
    public long byteSize;

    private UcxContext context;
    private Arena arena;
    private MemorySegment memory;

    /** Opens the context, allocates the memory and caches its registration. */
    @Setup(Level.Trial)
    public void setUp() {
        context = UcxContext.open(UcxContext.Options.defaults().withTransports(transport).withProgressThread(false));
        arena = Arena.ofShared();
        memory = arena.allocate(byteSize + 8192, 4096).asSlice(4096, byteSize);
    }

    /** Closes everything. */
    @TearDown(Level.Trial)
    public void tearDown() {
        context.close();
        arena.close();
    }

    /**
     * Map and unmap.
     *
     * @return the registration's address
     */
    @Benchmark
    public long uncached() {
        UcxRegistration r = context.register(memory);
        long address = r.address();
        r.close();
        return address;
    }

    /**
     * A cache hit.
     *
     * @return the registration
     */
    @Benchmark
    public UcxRegistration cached() {
        return context.registrationFor(memory);
    }
}
