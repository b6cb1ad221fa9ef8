package io.datamem.benchmarks;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.arrow.ArrowCData;
import io.datamem.buffer.BufferFlags;
import io.datamem.buffer.BufferView;
import io.datamem.dlpack.DLPack;
import io.datamem.numpy.ExportedHandler;
import io.datamem.numpy.PyDataMem;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.Arena;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * What handing memory to another runtime costs, one exchange per operation, on a float64[8] array
 * of {@code default_allocator} memory made once: a DLPack export and its import back (the legacy
 * {@code DLManagedTensor} and the versioned one; the imported array's close runs the producer's
 * deleter), the same round trip through Arrow's C Data Interface ({@code ArrowSchema} and
 * {@code ArrowArray}; the import's close runs the release callback), a {@code Py_buffer} request
 * and its release, and a 64-byte allocate + free pair made
 * through the {@code PyDataMem_Handler} that {@code datamem-numpy} exports, called as C calls it
 * (a downcall to its {@code malloc} and {@code free} function pointers, each an upcall into the
 * handler), against the same pair made on the handler directly.
 */
@Fork(jvmArgsAppend = Suite.TOUCHED_HEAP)
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class Exchanges {

    /** Offset of {@code malloc} in {@code PyDataMem_Handler}: name[127], version, then ctx. */
    private static final long MALLOC_OFFSET = 136;
    /** Offset of {@code free}. */
    private static final long FREE_OFFSET = 160;
    private static final long PAIR_BYTES = 64;

    private final DataMemHandler handler = DataMem.builtinDefault();
    private NDArray array;
    private ExportedHandler exported;
    private MemorySegment ctx;
    private MethodHandle malloc;
    private MethodHandle free;
    private MethodHandle echo;
    private Arena stubs;
    private MemorySegment arrowSchema;
    private MemorySegment arrowArray;

    /** Creates the state (JMH does). */
    public Exchanges() {
    }

    /** Makes the array and the exported handler. */
    @Setup(Level.Trial)
    public void setUp() {
        array = DataMem.callWith(handler, () -> NDArray.zeros(DType.FLOAT64, 8));
        exported = PyDataMem.export(handler);
        MemorySegment struct = exported.struct().reinterpret(PyDataMem.HANDLER_LAYOUT.byteSize());
        ctx = struct.get(ADDRESS, 128);
        Linker linker = Linker.nativeLinker();
        malloc = linker.downcallHandle(struct.get(ADDRESS, MALLOC_OFFSET),
                FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG));
        free = linker.downcallHandle(struct.get(ADDRESS, FREE_OFFSET),
                FunctionDescriptor.ofVoid(ADDRESS, ADDRESS, JAVA_LONG));
        stubs = Arena.ofShared();
        arrowSchema = stubs.allocate(ArrowCData.ARROW_SCHEMA);
        arrowArray = stubs.allocate(ArrowCData.ARROW_ARRAY);
        FunctionDescriptor shape = FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG);
        try {
            MethodHandle target = MethodHandles.lookup().findStatic(Exchanges.class, "echo",
                    MethodType.methodType(MemorySegment.class, MemorySegment.class, long.class));
            echo = linker.downcallHandle(linker.upcallStub(target, shape, stubs), shape);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The upcall of {@link #emptyUpcall}: returns its pointer. */
    private static MemorySegment echo(MemorySegment ctx, long size) {
        return ctx;
    }

    /** Closes the array and the export. */
    @TearDown(Level.Trial)
    public void tearDown() {
        array.close();
        exported.close();
        stubs.close();
    }

    /**
     * Legacy DLPack export, import back, and the import's close (which runs the deleter).
     *
     * @return the imported array's address
     */
    @Benchmark
    public long dlpackLegacy() {
        MemorySegment managed = DLPack.toDLPack(array, 0);
        try (NDArray back = DLPack.fromDLPack(managed, false)) {
            return back.address();
        }
    }

    /**
     * Versioned DLPack export, import back, and the import's close.
     *
     * @return the imported array's address
     */
    @Benchmark
    public long dlpackVersioned() {
        MemorySegment managed = DLPack.toDLPack(array, 1);
        try (NDArray back = DLPack.fromDLPack(managed, true)) {
            return back.address();
        }
    }

    /**
     * Arrow C Data export ({@code ArrowSchema} + {@code ArrowArray}), import back (which releases
     * the schema and moves the array), and the import's close (which calls the array's release
     * callback).
     *
     * @return the imported array's address
     */
    @Benchmark
    public long arrowCData() {
        ArrowCData.exportArray(array, arrowSchema, arrowArray);
        try (NDArray back = ArrowCData.importArray(arrowSchema, arrowArray)) {
            return back.address();
        }
    }

    /**
     * A {@code Py_buffer} request with strides and format, and its release.
     *
     * @return the buffer's address
     */
    @Benchmark
    public long pyBuffer() {
        try (BufferView view = array.getBuffer(BufferFlags.FULL_RO)) {
            return view.address();
        }
    }

    /**
     * A 64-byte pair through the exported {@code PyDataMem_Handler}'s function pointers.
     *
     * @return the block's address
     * @throws Throwable never (the downcalls declare it)
     */
    @Benchmark
    public long nep49Pair() throws Throwable {
        MemorySegment p = (MemorySegment) malloc.invokeExact(ctx, PAIR_BYTES);
        free.invokeExact(ctx, p, PAIR_BYTES);
        return p.address();
    }

    /**
     * A downcall to an upcall stub of a method that does nothing, with {@code malloc}'s shape: the
     * cost of one crossing into native code and back into Java, which {@link #nep49Pair} pays twice.
     *
     * @return the pointer passed through
     * @throws Throwable never (the downcall declares it)
     */
    @Benchmark
    public long emptyUpcall() throws Throwable {
        MemorySegment p = (MemorySegment) echo.invokeExact(ctx, PAIR_BYTES);
        return p.address();
    }

    /**
     * The same pair on the handler's allocator directly.
     *
     * @return the block's address
     */
    @Benchmark
    public long javaPair() {
        DataMemAllocator a = handler.allocator();
        MemorySegment p = a.malloc(PAIR_BYTES);
        a.free(p, PAIR_BYTES);
        return p.address();
    }
}
