package io.datamem.benchmarks;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.Blackhole;

import java.util.concurrent.TimeUnit;

/**
 * What finding the current handler costs: {@link DataMem#current()} with nothing bound (the process
 * default) and inside a scoped binding ({@link DataMem#callWith}), against a {@link ThreadLocal}
 * lookup, the usual alternative. A scoped binding cannot enclose JMH's own loop, so the scoped
 * figures come from a loop of {@value #LOOP} lookups inside one binding; the same loop is
 * measured for the other two, so that like is compared with like.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class CurrentHandler {

    /** Lookups per invocation of the loop benchmarks. */
    public static final int LOOP = 1000;

    private static final ThreadLocal<DataMemHandler> LOCAL = ThreadLocal.withInitial(DataMem::builtinDefault);

    private final DataMemHandler bound = DataMem.handler("aligned64");

    /** Creates the state (JMH does). */
    public CurrentHandler() {
    }

    /**
     * {@code DataMem.current()}, nothing bound.
     *
     * @return the handler
     */
    @Benchmark
    public DataMemHandler current() {
        return DataMem.current();
    }

    /**
     * {@code ThreadLocal.get()}.
     *
     * @return the handler
     */
    @Benchmark
    public DataMemHandler threadLocal() {
        return LOCAL.get();
    }

    /**
     * {@code DataMem.current()} {@value #LOOP} times inside {@code callWith}.
     *
     * @param bh consumes each handler
     */
    @Benchmark
    @OperationsPerInvocation(LOOP)
    public void currentScopedLoop(Blackhole bh) {
        DataMem.callWith(bound, () -> {
            for (int i = 0; i < LOOP; i++) {
                bh.consume(DataMem.current());
            }
            return null;
        });
    }

    /**
     * {@code DataMem.current()} {@value #LOOP} times, nothing bound.
     *
     * @param bh consumes each handler
     */
    @Benchmark
    @OperationsPerInvocation(LOOP)
    public void currentLoop(Blackhole bh) {
        for (int i = 0; i < LOOP; i++) {
            bh.consume(DataMem.current());
        }
    }

    /**
     * {@code ThreadLocal.get()} {@value #LOOP} times.
     *
     * @param bh consumes each handler
     */
    @Benchmark
    @OperationsPerInvocation(LOOP)
    public void threadLocalLoop(Blackhole bh) {
        for (int i = 0; i < LOOP; i++) {
            bh.consume(LOCAL.get());
        }
    }
}
