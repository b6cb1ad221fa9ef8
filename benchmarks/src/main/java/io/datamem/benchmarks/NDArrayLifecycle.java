package io.datamem.benchmarks;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
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
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.PhantomReference;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.util.concurrent.TimeUnit;

/**
 * The whole life of a float64 array of {@link #elements} elements, as a user writes it, against the
 * handler's own {@code malloc} + {@code free} pair of the same bytes, with {@link #handler} the process
 * default (as {@code -Ddatamem.handler=NAME} makes it). The suite runs it on 1 and on 2 threads; on 2,
 * each thread makes its own arrays and the time is per lifecycle on each thread.
 *
 * <p>The written lifecycle is the Java side of NumPy's {@code a = np.empty(n); a[0] = 1.0; b = a[0];
 * del a}, which {@link NumPyTiming} times in CPython in the same run.
 *
 * <p>{@link #minimalArray} is not datamem: it is the least that any array type over native memory costs on
 * this JVM once it keeps the two promises no design can drop, leak detection and a close that runs
 * once, with none of datamem's other checks. It tells how much of a lifecycle's cost is left to
 * datamem's own protocol.
 */
@Fork(jvmArgsAppend = Suite.TOUCHED_HEAP)
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class NDArrayLifecycle {

    /** The handler bound as the process default. */
    @Param({"default_allocator", "aligned64", "pool(aligned64)"})
    public String handler;

    /** The array's length in float64 elements: 8 (64 B) and 131072 (1 MiB). */
    @Param({"8", "131072"})
    public long elements;

    private long byteSize;
    private DataMemHandler previous;

    /** Creates the state (JMH does). */
    public NDArrayLifecycle() {
    }

    /** Makes {@link #handler} the process default. */
    @Setup(Level.Trial)
    public void setUp() {
        byteSize = Math.multiplyExact(elements, DType.FLOAT64.itemSize());
        previous = DataMem.setDefaultHandler(DataMem.handler(handler));
    }

    /** Restores the previous default. */
    @TearDown(Level.Trial)
    public void tearDown() {
        DataMem.setDefaultHandler(previous);
    }

    /**
     * {@code NDArray.empty(FLOAT64, elements)}, {@code setDouble(1.0, 0)}, {@code getDouble(0)},
     * {@code close()}: the written lifecycle.
     *
     * @return the element read
     */
    @Benchmark
    public double written() {
        try (NDArray a = NDArray.empty(DType.FLOAT64, elements)) {
            a.setDouble(1.0, 0);
            return a.getDouble(0);
        }
    }

    /**
     * {@code NDArray.empty(FLOAT64, elements)} + {@code close()}: an array whose memory Java code
     * never touched.
     *
     * @return the array's size in bytes
     */
    @Benchmark
    public long neverWritten() {
        try (NDArray a = NDArray.empty(DType.FLOAT64, elements)) {
            return a.byteSize();
        }
    }

    /**
     * A minimal array's written lifecycle, for comparison, not datamem: the handler's {@code malloc} +
     * {@code free} of the array's bytes (through {@code DataMem.current()}, as {@code NDArray.empty}
     * allocates), around the least an array object over native memory needs on a JVM: the object with
     * its shape, a phantom reference that would free the block if the object were dropped unclosed
     * (kept reachable by a per-thread registry slot, as every leak-detecting design must), one
     * element written and read through a segment over the block, and a close that claims the block by
     * one compare-and-set so that it runs once. None of datamem's checks: no generation, no
     * use-after-close refusal, no views, exports, confinement or retiring.
     *
     * @param registry this thread's registry slot
     * @return the element read
     * @throws OutOfMemoryError      if the handler returned NULL
     * @throws IllegalStateException if the close's claim failed (it cannot: nothing else closes it)
     */
    @Benchmark
    public double minimalArray(MinimalRegistry registry) {
        DataMemAllocator allocator = DataMem.current().allocator();
        long[] shape = {elements};
        MemorySegment block = allocator.malloc(byteSize);
        if (block.address() == 0) {
            throw new OutOfMemoryError("malloc(" + byteSize + ")");
        }
        MinimalArray array = new MinimalArray(block.address(), byteSize, shape);
        MinimalReference leak = new MinimalReference(array);
        registry.open = leak;
        MemorySegment data = MemorySegment.ofAddress(array.address).reinterpret(array.byteSize);
        data.set(ValueLayout.JAVA_DOUBLE, 0, 1.0);
        double v = data.get(ValueLayout.JAVA_DOUBLE, 0);
        if (!MinimalReference.STATE.compareAndSet(leak, MinimalReference.OPEN, MinimalReference.CLOSED)) {
            throw new IllegalStateException("closed twice");
        }
        leak.clear();
        registry.open = null;
        allocator.free(MemorySegment.ofAddress(leak.address), leak.byteSize);
        Reference.reachabilityFence(array);   // open until its close, as an array in use is
        return v;
    }

    /** The registry slot of one thread for {@link #minimalArray}: what keeps an open array's reference reachable. */
    @State(Scope.Thread)
    public static class MinimalRegistry {

        /** The open array's leak reference, or null. */
        Object open;

        /** Creates the state (JMH does). */
        public MinimalRegistry() {
        }
    }

    /** {@link #minimalArray}'s array: the block, its size, its shape. */
    private record MinimalArray(long address, long byteSize, long[] shape) {
    }

    /** {@link #minimalArray}'s leak reference: what a leak action frees, and the close's claim. */
    private static final class MinimalReference extends PhantomReference<MinimalArray> {

        static final ReferenceQueue<MinimalArray> QUEUE = new ReferenceQueue<>();
        static final int OPEN = 1;
        static final int CLOSED = 0;
        static final VarHandle STATE;

        static {
            try {
                STATE = MethodHandles.lookup().findVarHandle(MinimalReference.class, "state", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        final long address;
        final long byteSize;
        volatile int state = OPEN;

        MinimalReference(MinimalArray array) {
            super(array, QUEUE);
            this.address = array.address();
            this.byteSize = array.byteSize();
        }
    }

    /**
     * The handler's own pair: {@code DataMem.current().allocator()} {@code malloc} + {@code free} of
     * the array's bytes.
     *
     * @return the block's address
     */
    @Benchmark
    public long mallocFree() {
        DataMemAllocator a = DataMem.current().allocator();
        MemorySegment p = a.malloc(byteSize);
        if (p.address() == 0) {
            throw new OutOfMemoryError("malloc(" + byteSize + ")");
        }
        a.free(p, byteSize);
        return p.address();
    }
}
