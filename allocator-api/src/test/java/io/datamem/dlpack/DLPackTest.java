package io.datamem.dlpack;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.Device;
import io.datamem.DeviceType;
import io.datamem.MemoryKind;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.array.Slice;
import io.datamem.buffer.BufferException;
import io.datamem.format.CustomDTypes;
import io.datamem.buffer.DeviceInfo;
import io.datamem.testing.CountingAllocator;
import io.datamem.testing.FakeDeviceAllocator;
import io.datamem.testing.NativeToolchain;
import io.datamem.testing.Nep49SampleAllocator;
import io.datamem.testing.Rounds;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.function.Consumer;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * DLPack against a real consumer and producer: C compiled at test time against Debian's
 * libdlpack-dev {@code dlpack/dlpack.h}, which checks every element of exported tensors and calls
 * their deleters (on its thread or a new native one), and produces tensors whose deleters count
 * their calls; plus Java to native to Java round trips.
 */
class DLPackTest {

    @TempDir
    static Path dir;

    private static Arena library;
    private static MethodHandle probeLayout;
    private static MethodHandle consumeLegacy;
    private static MethodHandle consumeVersioned;
    private static MethodHandle makeTensor;
    private static MethodHandle deleterCalls;
    private static MethodHandle resetDeleterCalls;
    private static final MethodHandle CALL = Linker.nativeLinker().downcallHandle(FunctionDescriptor.ofVoid(ADDRESS));

    private final Nep49SampleAllocator sample = new Nep49SampleAllocator();
    private final CountingAllocator counting = new CountingAllocator(sample);
    private final DataMemHandler h = DataMemHandler.of("dlpack-test", counting);

    @BeforeAll
    static void compile() {
        NativeToolchain.requireDlpackHeader();
        Path so = NativeToolchain.compileSharedLibrary("native/dlpack_probe.c", dir, List.of());
        library = Arena.ofShared();
        SymbolLookup lookup = SymbolLookup.libraryLookup(so, library);
        Linker linker = Linker.nativeLinker();
        probeLayout = linker.downcallHandle(lookup.findOrThrow("probe_layout"), FunctionDescriptor.of(JAVA_INT, ADDRESS));
        consumeLegacy = linker.downcallHandle(lookup.findOrThrow("consume_legacy"),
                FunctionDescriptor.of(JAVA_LONG, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT));
        consumeVersioned = linker.downcallHandle(lookup.findOrThrow("consume_versioned"),
                FunctionDescriptor.of(JAVA_LONG, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT));
        makeTensor = linker.downcallHandle(lookup.findOrThrow("make_tensor"), FunctionDescriptor.of(ADDRESS,
                JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG,
                JAVA_INT, JAVA_INT));
        deleterCalls = linker.downcallHandle(lookup.findOrThrow("deleter_calls"), FunctionDescriptor.of(JAVA_INT));
        resetDeleterCalls = linker.downcallHandle(lookup.findOrThrow("reset_deleter_calls"),
                FunctionDescriptor.ofVoid());
    }

    @AfterAll
    static void unload() {
        if (library != null) {
            library.close();
        }
    }

    @BeforeEach
    void reset() throws Throwable {
        resetDeleterCalls.invokeExact();
    }

    @AfterEach
    void nothingLeaks() {
        assertEquals(0, DLPack.outstandingExports(), "every exported tensor deleted");
        assertEquals(List.of(), sample.violations());
        assertEquals(0, counting.liveBlocks(), "every array closed and freed");
    }

    private static int deleterCalls() throws Throwable {
        return (int) deleterCalls.invokeExact();
    }

    // ---------------------------------------------------------------------------------------------
    // Layout

    @Test
    void layoutsMatchDlpackH() throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG, 64);
            int n = (int) probeLayout.invokeExact(out);
            long[] v = out.asSlice(0, 8L * n).toArray(JAVA_LONG);
            assertEquals(DLPack.DL_TENSOR.byteSize(), v[0], "sizeof(DLTensor)");
            String[] fields = {"data", "device", "ndim", "dtype", "shape", "strides", "byte_offset"};
            for (int i = 0; i < fields.length; i++) {
                assertEquals(DLPack.DL_TENSOR.byteOffset(groupElement(fields[i])), v[1 + i], "DLTensor." + fields[i]);
            }
            assertEquals(DLPack.DL_MANAGED_TENSOR.byteSize(), v[8], "sizeof(DLManagedTensor)");
            assertEquals(DLPack.DL_MANAGED_TENSOR.byteOffset(groupElement("dl_tensor")), v[9]);
            assertEquals(DLPack.DL_MANAGED_TENSOR.byteOffset(groupElement("manager_ctx")), v[10]);
            assertEquals(DLPack.DL_MANAGED_TENSOR.byteOffset(groupElement("deleter")), v[11]);
            assertEquals(DLPack.DL_MANAGED_TENSOR_VERSIONED.byteSize(), v[12], "sizeof(DLManagedTensorVersioned)");
            String[] versioned = {"version", "manager_ctx", "deleter", "flags", "dl_tensor"};
            for (int i = 0; i < versioned.length; i++) {
                assertEquals(DLPack.DL_MANAGED_TENSOR_VERSIONED.byteOffset(groupElement(versioned[i])), v[13 + i],
                        "DLManagedTensorVersioned." + versioned[i]);
            }
            assertEquals(DLPack.DL_DEVICE.byteSize(), v[18]);
            assertEquals(DLPack.DL_DEVICE.byteOffset(groupElement("device_id")), v[19]);
            assertEquals(DLPack.DL_DATA_TYPE.byteSize(), v[20]);
            assertEquals(DLPack.DL_DATA_TYPE.byteOffset(groupElement("bits")), v[21]);
            assertEquals(DLPack.DL_DATA_TYPE.byteOffset(groupElement("lanes")), v[22]);
            assertArrayEquals(new long[] {DeviceType.CPU.code(), DeviceType.CUDA.code(), DeviceType.CUDA_HOST.code(),
                DeviceType.CUDA_MANAGED.code(), DType.DL_INT, DType.DL_UINT, DType.DL_FLOAT, DType.DL_BFLOAT,
                DType.DL_COMPLEX, DType.DL_OPAQUE_HANDLE}, java.util.Arrays.copyOfRange(v, 23, 33));
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Export to the C consumer

    static List<DType> dtypes() {
        List<DType> all = new ArrayList<>(DType.builtins());
        all.addAll(CustomDTypes.float8());
        return all;
    }

    /** Writes the consumer's pattern into an array, in its C order: element k holds k. */
    private static void pattern(NDArray a) {
        DType d = a.dtype();
        long[] shape = a.shape();
        long[] index = new long[shape.length];
        for (long k = 0; k < a.size(); k++) {
            switch (d.kind()) {
                case COMPLEX -> a.setComplex(k, k + 0.5, index);
                case BOOL -> a.setLong(k % 2, index);
                case CUSTOM -> a.segment().set(JAVA_BYTE, elementOffset(a, index) - lowest(a), (byte) k);
                default -> a.setLong(k, index);
            }
            for (int i = shape.length - 1; i >= 0; i--) {
                if (++index[i] < shape[i]) {
                    break;
                }
                index[i] = 0;
            }
        }
    }

    private static long elementOffset(NDArray a, long[] index) {
        long o = 0;
        long[] strides = a.strides();
        for (int i = 0; i < index.length; i++) {
            o += index[i] * strides[i];
        }
        return o;
    }

    private static long lowest(NDArray a) {
        long lo = 0;
        long[] strides = a.strides();
        long[] shape = a.shape();
        for (int i = 0; i < shape.length; i++) {
            lo += Math.min(0, strides[i] * (shape[i] - 1));
        }
        return lo;
    }

    private NDArray array(DType dtype, long... shape) {
        return DataMem.callWith(h, () -> NDArray.zeros(dtype, shape));
    }

    private static long consume(MemorySegment managed, boolean versioned, int deleteMode) throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment err = arena.allocate(256);
            long n = versioned ? (long) consumeVersioned.invokeExact(managed, deleteMode, err, 256)
                    : (long) consumeLegacy.invokeExact(managed, deleteMode, err, 256);
            assertTrue(n >= 0, "the C consumer says: " + err.getString(0));
            return n;
        }
    }

    @ParameterizedTest
    @MethodSource("dtypes")
    void everyDtypeReachesTheCConsumerIntact(DType dtype) throws Throwable {
        try (NDArray a = array(dtype, 3, 4)) {
            pattern(a);
            MemorySegment versioned = DLPack.toDLPack(a, 1);
            assertEquals(12, consume(versioned, true, 1));
            if (dtype.dlpackCode() >= 7) {
                BufferException e = assertThrows(BufferException.class, () -> DLPack.toDLPack(a, 0));
                assertTrue(e.getMessage().contains("DLPack 1.1"), e.getMessage());
            } else {
                MemorySegment legacy = DLPack.toDLPack(a, 0);
                assertEquals(12, consume(legacy, false, 1));
            }
        }
    }

    @Test
    void deletersRacingOnOneTensorReleaseItOnceAndForgedPointersNothing() throws Throwable {
        try (NDArray a = array(DType.FLOAT64, 8)) {
            // a pointer inside a live tensor's block, or one past it: never a tensor, never read
            MemorySegment live = DLPack.toDLPack(a, 1);
            MemorySegment deleter = live.get(ADDRESS, 16);
            CALL.invokeExact(deleter, MemorySegment.ofAddress(live.address() + 8));
            CALL.invokeExact(deleter, MemorySegment.ofAddress(live.address() + 256 * 1024 * 1024L));
            assertEquals(1, DLPack.outstandingExports(), "forged pointers released nothing");
            CALL.invokeExact(deleter, live);
            CALL.invokeExact(deleter, live);   // stale: logged, nothing released
            assertEquals(0, DLPack.outstandingExports());

            int threads = 4;
            int rounds = 2000;
            MemorySegment[] tensor = new MemorySegment[1];
            List<Throwable> failures = Rounds.run(threads, rounds, () -> tensor[0] = DLPack.toDLPack(a, 1), null,
                    t -> {
                        CALL.invokeExact(deleter, tensor[0]);   // a statement: invokeExact's type is (..)void
                    });
            assertEquals(List.of(), failures);
            assertEquals(0, DLPack.outstandingExports(), "every tensor released once");
        }   // closes: every pin was released exactly once, or close would refuse (or fail to count)
    }

    @Test
    void aTensorTooLargeForTheExportTableGetsABlockOfItsOwn() {
        long[] shape = new long[12];
        java.util.Arrays.fill(shape, 1);
        shape[11] = 3;
        try (NDArray a = array(DType.INT16, shape)) {
            MemorySegment m = DLPack.toDLPack(a, 0);
            assertEquals(12, m.get(JAVA_INT, 16));
            try (NDArray back = DLPack.fromDLPack(m, false)) {
                assertEquals(a.address(), back.address());
                assertEquals(1, DLPack.outstandingExports());
            }
            assertEquals(0, DLPack.outstandingExports());
        }
    }

    @Test
    void theVersionedStructAsWritten() {
        try (NDArray base = array(DType.INT32, 4, 6)) {
            NDArray a = base.slice(Slice.range(1, 4), Slice.range(1, 6, 2));
            MemorySegment m = DLPack.toDLPack(a, 1);
            assertEquals(1, m.get(JAVA_INT, 0), "major");
            assertEquals(DLPack.MINOR_VERSION, m.get(JAVA_INT, 4), "minor");
            assertNotEquals(0, m.get(JAVA_LONG, 8), "manager_ctx");
            assertNotEquals(0, m.get(JAVA_LONG, 16), "deleter");
            assertEquals(0, m.get(JAVA_LONG, 24), "flags");
            long t = 32;
            assertEquals(base.address() + 28, m.get(JAVA_LONG, t), "data: element [0, 0] of the CPU view");
            assertEquals(a.address(), m.get(JAVA_LONG, t));
            assertEquals(DeviceType.CPU.code(), m.get(JAVA_INT, t + 8));
            assertEquals(0, m.get(JAVA_INT, t + 12));
            assertEquals(2, m.get(JAVA_INT, t + 16));
            assertEquals(DType.DL_INT, m.get(JAVA_BYTE, t + 20));
            assertEquals(32, m.get(JAVA_BYTE, t + 21));
            assertEquals(1, m.get(JAVA_SHORT, t + 22));
            assertArrayEquals(new long[] {3, 3}, MemorySegment.ofAddress(m.get(JAVA_LONG, t + 24)).reinterpret(16)
                    .toArray(JAVA_LONG));
            assertArrayEquals(new long[] {6, 2}, MemorySegment.ofAddress(m.get(JAVA_LONG, t + 32)).reinterpret(16)
                    .toArray(JAVA_LONG), "strides in elements");
            assertEquals(0, m.get(JAVA_LONG, t + 40), "byte_offset 0 for CPU memory, as NumPy exports");
            assertEquals(28, a.byteOffset());
            assertEquals(1, DLPack.outstandingExports());
            IllegalStateException e = assertThrows(IllegalStateException.class, base::close);
            assertTrue(e.getMessage().contains("export"), e.getMessage());
            DLPack.release(m, true);
            assertEquals(0, DLPack.outstandingExports());
        }
    }

    @Test
    void nonContiguousOffsetAndReversedViews() throws Throwable {
        try (NDArray base = array(DType.FLOAT64, 5, 6)) {
            List<NDArray> views = List.of(base.transpose(), base.slice(Slice.range(1, 5, 2), Slice.range(2, 6)),
                    base.slice(Slice.every(-1), Slice.every(-2)), base.select(1, 4), base.slice(Slice.range(3, 3)));
            for (NDArray v : views) {
                pattern(v);
                assertEquals(v.size(), consume(DLPack.toDLPack(v, 1), true, 1), v.toString());
                assertEquals(v.size(), consume(DLPack.toDLPack(v, 0), false, 1), v.toString());
            }
        }
    }

    @Test
    void zeroSizeArraysExportNullData() throws Throwable {
        try (NDArray a = array(DType.COMPLEX64, 0, 5)) {
            MemorySegment m = DLPack.toDLPack(a, 1);
            assertEquals(0, m.get(JAVA_LONG, 32), "data is NULL for a zero-size tensor");
            assertEquals(0, m.get(JAVA_LONG, 32 + 40));
            assertEquals(0, consume(m, true, 1));
        }
        try (NDArray scalar = array(DType.FLOAT32)) {
            scalar.setDouble(0);
            MemorySegment m = DLPack.toDLPack(scalar, 0);
            assertEquals(0, m.get(JAVA_INT, 16), "ndim");
            assertEquals(1, consume(m, false, 1));
        }
    }

    @Test
    void deletersRunFromNativeThreads() throws Throwable {
        try (NDArray a = array(DType.INT16, 7)) {
            pattern(a);
            for (int i = 0; i < 20; i++) {
                assertEquals(7, consume(DLPack.toDLPack(a, i % 2), i % 2 == 1, 2));
            }
        }
    }

    @Test
    void theDeleterWorksAfterJavaDroppedTheArray() throws Throwable {
        long leaksBefore = NDArray.leakCount();
        MemorySegment m = exportAndForget();
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(20);
        }
        assertEquals(1, counting.liveBlocks(), "the export keeps the array alive");
        assertEquals(10, consume(m, true, 2), "the data is intact");
        for (int i = 0; i < 200 && counting.liveBlocks() > 0; i++) {
            System.gc();
            Thread.sleep(20);
            NDArray.reclaim();   // the leak is handed to this thread, which touched the array's elements
        }
        assertEquals(0, counting.liveBlocks(), "the unreachable, unclosed array was collected after the deleter");
        assertTrue(NDArray.leakCount() > leaksBefore, "and reported as a leak");
    }

    private MemorySegment exportAndForget() {
        NDArray a = array(DType.UINT32, 10);
        pattern(a);
        return DLPack.toDLPack(a, 1);
    }

    @Test
    void aSecondDeleterCallIsIgnored() throws Throwable {
        try (NDArray a = array(DType.INT8, 3)) {
            MemorySegment m = DLPack.toDLPack(a, 0);
            MemorySegment deleter = m.get(ADDRESS, 56);
            CALL.invokeExact(deleter, m);
            assertEquals(0, DLPack.outstandingExports());
            CALL.invokeExact(deleter, m); // logged, not a double release
            assertEquals(0, DLPack.outstandingExports());
        }
    }

    @Test
    void readOnlyArraysAndLegacyConsumers() throws Throwable {
        try (NDArray a = array(DType.FLOAT32, 4)) {
            pattern(a);
            NDArray ro = a.asReadOnly();
            MemorySegment m = DLPack.toDLPack(ro, 1);
            assertEquals(DLPack.FLAG_READ_ONLY, m.get(JAVA_LONG, 24));
            try (NDArray back = DLPack.fromDLPack(m, true)) {
                assertTrue(back.isReadOnly());
                assertThrows(UnsupportedOperationException.class, () -> back.setDouble(1, 0));
                assertEquals(3.0, back.getDouble(3));
            }
            BufferException e = assertThrows(BufferException.class, () -> DLPack.toDLPack(ro, 0));
            assertTrue(e.getMessage().contains("read-only") && e.getMessage().contains("legacy"), e.getMessage());
            MemorySegment copy = DLPack.toDLPack(ro, DLPackOptions.defaults().withMaxVersion(DLPackVersion.LEGACY)
                    .withCopy(CopyMode.ALWAYS));
            assertEquals(4, consume(copy, false, 1), "a copy may go to a legacy consumer");
        }
    }

    @Test
    void copies() throws Throwable {
        try (NDArray base = array(DType.INT64, 3, 4)) {
            NDArray t = base.transpose();
            pattern(t);
            MemorySegment copied = DataMem.callWith(h, () -> DLPack.toDLPack(t.asReadOnly(),
                    DLPackOptions.defaults().withCopy(CopyMode.ALWAYS)));
            assertEquals(DLPack.FLAG_IS_COPIED, copied.get(JAVA_LONG, 24), "copied, and not read-only: the consumer"
                    + " owns it");
            assertNotEquals(base.address(), copied.get(JAVA_LONG, 32));
            assertArrayEquals(new long[] {3, 1}, MemorySegment.ofAddress(copied.get(JAVA_LONG, 32 + 32))
                    .reinterpret(16).toArray(JAVA_LONG), "the copy is C-contiguous");
            assertEquals(2, counting.liveBlocks(), "the copy was allocated through the current handler");
            base.close(); // the copy does not pin the source
            assertEquals(12, consume(copied, true, 1));
        }
        try (NDArray a = array(DType.UINT8, 2)) {
            MemorySegment never = DLPack.toDLPack(a, DLPackOptions.defaults().withCopy(CopyMode.NEVER));
            assertEquals(0, never.get(JAVA_LONG, 24));
            DLPack.release(never, true);
        }
    }

    @Test
    void versionNegotiation() {
        try (NDArray a = array(DType.BOOL, 2)) {
            MemorySegment v10 = DLPack.toDLPack(a, DLPackOptions.defaults().withMaxVersion(DLPackVersion.V1_0));
            assertEquals(1, v10.get(JAVA_INT, 0));
            assertEquals(0, v10.get(JAVA_INT, 4), "a 1.0 consumer gets 1.0");
            DLPack.release(v10, true);
            MemorySegment v2 = DLPack.toDLPack(a, DLPackOptions.defaults().withMaxVersion(new DLPackVersion(2, 3)));
            assertEquals(1, v2.get(JAVA_INT, 0));
            assertEquals(DLPack.MINOR_VERSION, v2.get(JAVA_INT, 4), "a 2.3 consumer gets our highest, 1.3");
            DLPack.release(v2, true);
            MemorySegment v3 = DLPack.toDLPack(a, 3);
            assertEquals(1, v3.get(JAVA_INT, 0));
            DLPack.release(v3, true);
        }
        try (NDArray f8 = array(CustomDTypes.FLOAT8_E5M2, 2)) {
            assertThrows(BufferException.class, () -> DLPack.toDLPack(f8,
                    DLPackOptions.defaults().withMaxVersion(DLPackVersion.V1_0)));
        }
        assertThrows(IllegalArgumentException.class, () -> new DLPackVersion(-1, 0));
    }

    @Test
    void callerMistakes() {
        NDArray closed = array(DType.INT8, 1);
        closed.close();
        assertThrows(IllegalStateException.class, () -> DLPack.toDLPack(closed, 1));
        assertThrows(IllegalStateException.class, () -> DLPack.dlpackDevice(closed));
        try (NDArray a = array(DType.INT8, 1)) {
            assertThrows(IllegalArgumentException.class, () -> DLPack.toDLPack(a, -1));
            assertThrows(NullPointerException.class, () -> DLPack.toDLPack(a, null));
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> DLPack.toDLPack(a, DLPackOptions.defaults().withStream(1)));
            assertTrue(e.getMessage().contains("stream"), e.getMessage());
            BufferException other = assertThrows(BufferException.class, () -> DLPack.toDLPack(a,
                    DLPackOptions.defaults().withDlDevice(new Device(DeviceType.CUDA, 0))));
            assertTrue(other.getMessage().contains("only to the CPU"), other.getMessage());
            assertEquals(Device.CPU, DLPack.dlpackDevice(a));
        }
        assertThrows(NullPointerException.class, () -> DLPack.fromDLPack(null, true));
        assertThrows(IllegalArgumentException.class, () -> DLPack.fromDLPack(MemorySegment.NULL, true));
        assertThrows(IllegalArgumentException.class, () -> DLPack.fromDLPack(MemorySegment.ofArray(new byte[80]), true));
        assertThrows(IllegalArgumentException.class, () -> DLPack.release(MemorySegment.NULL, false));
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment odd = arena.allocate(64);
            NDArray wrapped = NDArray.wrap(odd, DType.INT16, new long[] {3}, new long[] {3}, 0);
            BufferException e = assertThrows(BufferException.class, () -> DLPack.toDLPack(wrapped, 1));
            assertTrue(e.getMessage().contains("not a multiple of the item size"), e.getMessage());
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Device memory, through the backend hook

    private static void fillDevice(NDArray a) {
        MemorySegment raw = MemorySegment.ofAddress(a.address() - a.byteOffset()).reinterpret(a.size() * 4L);
        for (int k = 0; k < a.size(); k++) {
            raw.setAtIndex(ValueLayout.JAVA_FLOAT, k, k);
        }
    }

    @Test
    void deviceTensorsSynchroniseAndCopy() throws Throwable {
        FakeDeviceAllocator cuda = FakeDeviceAllocator.cudaDevice(counting);
        DataMemHandler dev = DataMemHandler.of("fake-cuda", cuda);
        try (NDArray a = DataMem.callWith(dev, () -> NDArray.empty(DType.FLOAT32, 3, 4))) {
            fillDevice(a);
            assertEquals(new Device(DeviceType.CUDA, 1), DLPack.dlpackDevice(a));
            MemorySegment m = DLPack.toDLPack(a, 1);
            assertEquals(DeviceType.CUDA.code(), m.get(JAVA_INT, 32 + 8));
            assertEquals(1, m.get(JAVA_INT, 32 + 12));
            assertEquals(a.address(), m.get(JAVA_LONG, 32));
            DLPack.release(m, true);
            DLPack.release(DLPack.toDLPack(a, DLPackOptions.defaults().withStream(7)), true);
            DLPack.release(DLPack.toDLPack(a, DLPackOptions.defaults().withStream(-1)), true);
            assertEquals(List.of(OptionalLong.empty(), OptionalLong.of(7)), cuda.synchronizations(),
                    "None and 7 synchronise; -1 asks for nothing");
            NDArray view = a.slice(Slice.range(1, 3), Slice.range(1, 4));
            MemorySegment v = DLPack.toDLPack(view, DLPackOptions.defaults().withStream(-1));
            assertEquals(a.address(), v.get(JAVA_LONG, 32), "a device view's data is its allocation (the spec's form)");
            assertEquals(view.byteOffset(), v.get(JAVA_LONG, 32 + 40), "and byte_offset reaches element [0, 0]");
            assertEquals(20, view.byteOffset());
            DLPack.release(v, true);
            MemorySegment legacy = DLPack.toDLPack(view, DLPackOptions.defaults().withStream(-1).withMaxVersion(DLPackVersion.LEGACY));
            assertEquals(20, legacy.get(JAVA_LONG, 40), "legacy struct too");
            DLPack.release(legacy, false);
            assertThrows(IllegalArgumentException.class, () -> DLPack.toDLPack(a,
                    DLPackOptions.defaults().withStream(0)), "the backend refuses stream 0 for CUDA");
            assertEquals(0, DLPack.outstandingExports());

            Device cpu = Device.CPU;
            MemorySegment onHost = DLPack.toDLPack(a, DLPackOptions.defaults().withDlDevice(cpu));
            assertEquals(DLPack.FLAG_IS_COPIED, onHost.get(JAVA_LONG, 24));
            assertEquals(DeviceType.CPU.code(), onHost.get(JAVA_INT, 32 + 8));
            assertEquals(48, cuda.copiedBytes());
            try (NDArray back = DLPack.fromDLPack(onHost, true)) {
                assertEquals(11.0, back.getDouble(2, 3));
            }
            NDArray t = a.transpose();
            MemorySegment transposed = DLPack.toDLPack(t, DLPackOptions.defaults().withDlDevice(cpu)
                    .withCopy(CopyMode.IF_NEEDED));
            try (NDArray back = DLPack.fromDLPack(transposed, true)) {
                assertEquals(4.0, back.getDouble(0, 1), "the staged strided copy keeps the transposed order");
                assertTrue(back.isCContiguous());
            }
            BufferException never = assertThrows(BufferException.class, () -> DLPack.toDLPack(a,
                    DLPackOptions.defaults().withDlDevice(cpu).withCopy(CopyMode.NEVER)));
            assertTrue(never.getMessage().contains("NEVER"), never.getMessage());
            assertThrows(BufferException.class, () -> DLPack.toDLPack(a, DLPackOptions.defaults()
                    .withCopy(CopyMode.ALWAYS)), "a copy on the device itself has no backend operation");
            assertThrows(IllegalArgumentException.class, () -> DLPack.toDLPack(a,
                    DLPackOptions.defaults().withDlDevice(cpu).withStream(5)), "a CPU tensor takes no stream");
        }
    }

    @Test
    void hostAccessibleDeviceMemoryIsSharedWithACpuConsumer() throws Throwable {
        FakeDeviceAllocator pinned = new FakeDeviceAllocator(counting, DeviceInfo.CUDA_DEVICE_ID,
                new Device(DeviceType.CUDA_HOST, 0), MemoryKind.HOST_PINNED);
        try (NDArray a = DataMem.callWith(DataMemHandler.of("fake-pinned", pinned),
                () -> NDArray.zeros(DType.INT32, 5))) {
            pattern(a);
            MemorySegment own = DLPack.toDLPack(a, 1);
            assertEquals(DeviceType.CUDA_HOST.code(), own.get(JAVA_INT, 32 + 8));
            assertEquals(5, consume(own, true, 1));
            MemorySegment cpu = DLPack.toDLPack(a, DLPackOptions.defaults().withDlDevice(Device.CPU));
            assertEquals(DeviceType.CPU.code(), cpu.get(JAVA_INT, 32 + 8));
            assertEquals(0, cpu.get(JAVA_LONG, 24), "shared, not copied");
            assertEquals(a.address(), cpu.get(JAVA_LONG, 32));
            assertEquals(5, consume(cpu, true, 1));
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Import

    @ParameterizedTest
    @MethodSource("dtypes")
    void javaNativeJavaRoundTripOfEveryDtype(DType dtype) {
        try (NDArray a = array(dtype, 2, 3)) {
            pattern(a);
            NDArray view = a.slice(Slice.every(-1));
            for (boolean versioned : new boolean[] {true, false}) {
                if (!versioned && dtype.dlpackCode() >= 7) {
                    continue;
                }
                MemorySegment m = DLPack.toDLPack(view, versioned ? 1 : 0);
                try (NDArray back = DLPack.fromDLPack(m, versioned)) {
                    assertEquals(DLPack.HANDLER_NAME, back.handler().name());
                    assertTrue(back.ownsData());
                    assertEquals(dtype, back.dtype());
                    assertArrayEquals(view.shape(), back.shape());
                    assertArrayEquals(view.strides(), back.strides());
                    assertEquals(view.address(), back.address(), "no copy");
                    if (dtype.kind() != DType.Kind.CUSTOM && dtype.kind() != DType.Kind.COMPLEX) {
                        assertArrayEquals(view.toDoubleArray(), back.toDoubleArray());
                    }
                    assertThrows(IllegalStateException.class, a::close, "the export still pins the source");
                }
                assertEquals(0, DLPack.outstandingExports(), "closing the import called our deleter");
            }
        }
    }

    private MemorySegment cTensor(boolean versioned, long[] shape, long[] strides, int code, int bits, int lanes,
                                  int deviceType, long flags, boolean nullData, boolean numpyStyle) throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = arena.allocateFrom(JAVA_LONG, shape.length == 0 ? new long[1] : shape);
            MemorySegment st = strides == null ? MemorySegment.NULL : arena.allocateFrom(JAVA_LONG, strides);
            MemorySegment t = (MemorySegment) makeTensor.invokeExact(versioned ? 1 : 0, shape.length, s, st, code, bits,
                    lanes, deviceType, 0, flags, nullData ? 1 : 0, numpyStyle ? 1 : 0);
            return t.reinterpret(versioned ? 80 : 64);
        }
    }

    private MemorySegment cFloat64(boolean versioned, long[] shape, long[] strides) throws Throwable {
        return cTensor(versioned, shape, strides, DType.DL_FLOAT, 64, 1, 1, 0, false, false);
    }

    @Test
    void importingACProducersTensors() throws Throwable {
        for (boolean versioned : new boolean[] {true, false}) {
            reset();
            NDArray a = DLPack.fromDLPack(cFloat64(versioned, new long[] {2, 3}, null), versioned);
            assertEquals("dlpack", a.handler().name());
            assertArrayEquals(new double[] {0, 1, 2, 3, 4, 5}, a.toDoubleArray());
            assertArrayEquals(new long[] {24, 8}, a.strides(), "NULL strides mean C order");
            assertEquals(0, deleterCalls());
            a.close();
            assertEquals(1, deleterCalls());
            a.close();
            assertEquals(1, deleterCalls(), "exactly once");

            NDArray f = DLPack.fromDLPack(cFloat64(versioned, new long[] {3, 2}, new long[] {1, 3}), versioned);
            assertTrue(f.isFContiguous());
            assertArrayEquals(new double[] {0, 1, 2, 3, 4, 5}, f.toDoubleArray());
            f.close();
            NDArray reversed = DLPack.fromDLPack(cTensor(versioned, new long[] {4}, new long[] {-2}, DType.DL_INT,
                    32, 1, 1, 0, false, true), versioned);
            assertArrayEquals(new long[] {0, 1, 2, 3}, reversed.toLongArray(), "data at element 0, NumPy style");
            assertArrayEquals(new long[] {-8}, reversed.strides());
            reversed.close();
            NDArray offset = DLPack.fromDLPack(cTensor(versioned, new long[] {2, 2}, new long[] {-2, -1},
                    DType.DL_INT, 32, 1, 1, 0, false, false), versioned);
            assertArrayEquals(new long[] {0, 1, 2, 3}, offset.toLongArray(), "byte_offset reaches element 0");
            offset.close();
            NDArray empty = DLPack.fromDLPack(cTensor(versioned, new long[] {0, 3}, null, DType.DL_FLOAT, 64, 1, 1,
                    0, true, false), versioned);
            assertEquals(0, empty.size());
            empty.close();
            NDArray scalar = DLPack.fromDLPack(cTensor(versioned, new long[0], null, DType.DL_FLOAT, 64, 1, 1, 0,
                    false, false), versioned);
            assertEquals(0.0, scalar.getDouble());
            scalar.close();
            assertEquals(6, deleterCalls());
        }
    }

    @Test
    void importedTensorsAreReleasedWhenCollected() throws Throwable {
        importAndForget();
        for (int i = 0; i < 200 && deleterCalls() == 0; i++) {
            System.gc();
            Thread.sleep(20);
            NDArray.reclaim();   // the leak is handed to this thread, which touched the array's elements
        }
        assertEquals(1, deleterCalls(), "the cleaner called the producer's deleter");
    }

    private void importAndForget() throws Throwable {
        NDArray a = DLPack.fromDLPack(cFloat64(true, new long[] {8}, null), true);
        assertEquals(7.0, a.getDouble(7));
    }

    @Test
    void theImportHandlerOnlyReleases() throws Throwable {
        try (NDArray a = DLPack.fromDLPack(cFloat64(true, new long[] {4}, null), true)) {
            UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
                    () -> DataMem.callWith(a.handler(), () -> NDArray.empty(DType.INT8, 1)));
            assertTrue(e.getMessage().contains("dlpack"), e.getMessage());
            assertThrows(UnsupportedOperationException.class, () -> a.resize(8));
            assertEquals(3.0, a.getDouble(3), "a refused resize leaves the array intact");
            a.setDouble(42, 0);
            assertEquals(42.0, a.getDouble(0));
        }
        assertEquals(1, deleterCalls());
    }

    @Test
    void deviceTensorsImportAsDeviceMemory() throws Throwable {
        try (NDArray a = DLPack.fromDLPack(cTensor(true, new long[] {4}, null, DType.DL_FLOAT, 32, 1,
                DeviceType.CUDA.code(), 0, false, false), true)) {
            assertEquals(new Device(DeviceType.CUDA, 0), a.traits().device());
            assertFalse(a.traits().hostAccessible());
            assertThrows(UnsupportedOperationException.class, a::segment);
        }
        try (NDArray a = DLPack.fromDLPack(cTensor(true, new long[] {4}, null, DType.DL_FLOAT, 32, 1,
                DeviceType.CUDA_MANAGED.code(), 0, false, false), true)) {
            assertEquals(MemoryKind.MANAGED, a.traits().kind());
            assertEquals(0.0, a.getDouble(0));
        }
        assertEquals(2, deleterCalls());
    }

    /** Corrupts one field of a valid C tensor; the import must refuse it and leave it to us. */
    private void rejected(boolean versioned, String expected, Consumer<MemorySegment> corrupt) throws Throwable {
        reset();
        MemorySegment t = cFloat64(versioned, new long[] {2, 3}, new long[] {3, 1});
        corrupt.accept(t);
        BufferException e = assertThrows(BufferException.class, () -> DLPack.fromDLPack(t, versioned));
        assertTrue(e.getMessage().contains("ownership stays with the caller") && e.getMessage().contains(expected),
                e.getMessage());
        assertEquals(0, deleterCalls(), "a rejected tensor is not deleted");
        DLPack.release(t, versioned);
        assertEquals(1, deleterCalls(), "the caller still can");
    }

    @Test
    void everyRejectionLeavesOwnershipWithTheProducer() throws Throwable {
        long t = 32;
        rejected(true, "major version 2", m -> m.set(JAVA_INT, 0, 2));
        rejected(true, "unknown bits 0x20", m -> m.set(JAVA_LONG, 24, 1L << 5));
        for (boolean v : new boolean[] {true, false}) {
            long o = v ? t : 0;
            rejected(v, "ndim -1", m -> m.set(JAVA_INT, o + 16, -1));
            rejected(v, "ndim 65", m -> m.set(JAVA_INT, o + 16, 65));
            rejected(v, "shape is NULL", m -> m.set(JAVA_LONG, o + 24, 0));
            rejected(v, "shape[1] -3", m -> MemorySegment.ofAddress(m.get(JAVA_LONG, o + 24)).reinterpret(16)
                    .set(JAVA_LONG, 8, -3));
            rejected(v, "code 2, bits 24", m -> m.set(JAVA_BYTE, o + 21, (byte) 24));
            rejected(v, "lanes 4", m -> m.set(JAVA_SHORT, o + 22, (short) 4));
            rejected(v, "code 99", m -> m.set(JAVA_BYTE, o + 20, (byte) 99));
            rejected(v, "data is NULL for 6", m -> m.set(JAVA_LONG, o, 0));
            rejected(v, "device type 99", m -> m.set(JAVA_INT, o + 8, 99));
            rejected(v, "device id -1", m -> m.set(JAVA_INT, o + 12, -1));
            rejected(v, "outside the address space", m -> MemorySegment.ofAddress(m.get(JAVA_LONG, o + 32))
                    .reinterpret(16).set(JAVA_LONG, 0, -(1L << 58)));
            rejected(v, "outside the address space", m -> MemorySegment.ofAddress(m.get(JAVA_LONG, o + 32))
                    .reinterpret(16).set(JAVA_LONG, 8, 1L << 56));
            rejected(v, "overflows", m -> MemorySegment.ofAddress(m.get(JAVA_LONG, o + 32))
                    .reinterpret(16).set(JAVA_LONG, 8, Long.MAX_VALUE / 4));
            rejected(v, "byte_offset", m -> m.set(JAVA_LONG, o + 40, -8));
            rejected(v, "shape", m -> MemorySegment.ofAddress(m.get(JAVA_LONG, o + 24)).reinterpret(16)
                    .set(JAVA_LONG, 0, Long.MAX_VALUE));
        }
    }
}
