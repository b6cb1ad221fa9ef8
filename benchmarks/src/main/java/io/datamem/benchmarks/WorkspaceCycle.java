package io.datamem.benchmarks;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.array.Workspace;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.util.concurrent.TimeUnit;

/**
 * A workspace's costs: a written small-array lifecycle ({@code empty(FLOAT64, 8)}, one
 * {@code setDouble}, one {@code getDouble}, {@code close}) in a loop inside an open scope of
 * {@code workspace(pool(aligned64))}, against the same loop on {@code pool(aligned64)}, each with the
 * handler bound once per {@value #BATCH} lifecycles; and a scope's enter + exit, empty, and a
 * {@link Workspace#run} cycle with one array in it.
 */
@Fork(jvmArgsAppend = Suite.TOUCHED_HEAP)
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class WorkspaceCycle {

    private DataMemHandler workspace;
    private DataMemHandler pool;
    private Workspace.Scope open;

    /** Creates the state (JMH does). */
    public WorkspaceCycle() {
    }

    /** Resolves the handlers and opens the scope the lifecycle benchmark runs in. */
    @Setup(Level.Trial)
    public void setUp() {
        workspace = DataMem.handler("workspace(pool(aligned64))");
        pool = DataMem.handler("pool(aligned64)");
        open = Workspace.open(workspace);
    }

    /** Ends the scope. */
    @TearDown(Level.Trial)
    public void tearDown() {
        open.close();
    }

    /**
     * The written small-array lifecycle in the open workspace scope, {@value #BATCH} to a binding of
     * the handler (a compute block's loop, not the binding, is what is timed).
     *
     * @return the sum of the elements read
     */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public double lifecycleInWorkspace() {
        return DataMem.callWith(workspace, WorkspaceCycle::batch);
    }

    /**
     * The same lifecycles on {@code pool(aligned64)}.
     *
     * @return the sum of the elements read
     */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public double lifecycleOnPool() {
        return DataMem.callWith(pool, WorkspaceCycle::batch);
    }

    /** Lifecycles per binding in the lifecycle benchmarks. */
    static final int BATCH = 100;

    private static double batch() {
        double sum = 0;
        for (int i = 0; i < BATCH; i++) {
            try (NDArray a = NDArray.empty(DType.FLOAT64, 8)) {
                a.setDouble(i, 3);
                sum += a.getDouble(3);
            }
        }
        return sum;
    }

    /**
     * A scope's enter and exit with nothing allocated in it.
     *
     * @return whether it ended
     */
    @Benchmark
    public boolean scopeEnterExit() {
        Workspace.Scope s = Workspace.open(workspace);
        s.close();
        return s.isClosed();
    }

    /**
     * A cycle as a loop body runs it: {@link Workspace#run} (a scope, the handler bound) with one
     * written array left open for the scope to close.
     *
     * @return nothing; the array's element is written and read
     */
    @Benchmark
    public double cycleWithOneArray() {
        double[] out = new double[1];
        Workspace.run(workspace, () -> {
            NDArray a = NDArray.empty(DType.FLOAT64, 8);
            a.setDouble(2.0, 3);
            out[0] = a.getDouble(3);
        });
        return out[0];
    }
}
