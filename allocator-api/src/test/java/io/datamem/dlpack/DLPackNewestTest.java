package io.datamem.dlpack;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.Device;
import io.datamem.DeviceType;
import io.datamem.MemoryKind;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.buffer.BufferException;
import io.datamem.format.CustomDTypes;
import io.datamem.testing.CountingAllocator;
import io.datamem.testing.FakeDeviceAllocator;
import io.datamem.testing.NativeToolchain;
import io.datamem.testing.Nep49SampleAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * DLPack's newest specification (1.3): strides on every export, the device types through
 * {@code kDLTrn}, the float6 and float4 dtypes with {@code IS_SUBBYTE_TYPE_PADDED}, and the
 * producer-side {@code DLPackManagedTensorAllocator}, against a C consumer whose declarations are
 * written from the specification ({@code native/dlpack_newest_probe.c}).
 */
class DLPackNewestTest {

    @TempDir
    static Path dir;

    private static Arena library;
    private static MethodHandle probeLayout;
    private static MethodHandle allocateLike;
    private static MethodHandle checkAndFill;
    private static MethodHandle freeTensor;
    private static MethodHandle allocateOnThreads;

    private final Nep49SampleAllocator sample = new Nep49SampleAllocator();
    private final CountingAllocator counting = new CountingAllocator(sample);
    private final DataMemHandler h = DataMemHandler.of("dlpack-newest-test", counting);

    @BeforeAll
    static void compile() {
        Path so = NativeToolchain.compileSharedLibrary("native/dlpack_newest_probe.c", dir, List.of());
        library = Arena.ofShared();
        SymbolLookup lookup = SymbolLookup.libraryLookup(so, library);
        Linker linker = Linker.nativeLinker();
        probeLayout = linker.downcallHandle(lookup.findOrThrow("probe_layout"), FunctionDescriptor.of(JAVA_INT, ADDRESS));
        allocateLike = linker.downcallHandle(lookup.findOrThrow("allocate_like"), FunctionDescriptor.of(ADDRESS,
                ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
        checkAndFill = linker.downcallHandle(lookup.findOrThrow("check_and_fill"), FunctionDescriptor.of(JAVA_INT,
                ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT));
        freeTensor = linker.downcallHandle(lookup.findOrThrow("free_tensor"),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        allocateOnThreads = linker.downcallHandle(lookup.findOrThrow("allocate_on_threads"),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    }

    @AfterAll
    static void unload() {
        if (library != null) {
            library.close();
        }
    }

    @AfterEach
    void nothingLeaks() {
        assertEquals(0, DLPack.outstandingExports(), "every exported tensor deleted");
        assertEquals(List.of(), sample.violations());
        assertEquals(0, counting.liveBlocks(), "every block freed");
    }

    // ---------------------------------------------------------------------------------------------
    // Layout and codes

    @Test
    void layoutAndCodesMatchTheNewestHeader() throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG, 128);
            int n = (int) probeLayout.invokeExact(out);
            long[] v = out.asSlice(0, 8L * n).toArray(JAVA_LONG);
            assertEquals(DLPack.MAJOR_VERSION, v[0], "DLPACK_MAJOR_VERSION");
            assertEquals(DLPack.MINOR_VERSION, v[1], "DLPACK_MINOR_VERSION");
            assertEquals(new DLPackVersion((int) v[0], (int) v[1]), DLPackVersion.CURRENT);
            assertEquals(DLPack.DL_TENSOR.byteSize(), v[2], "sizeof(DLTensor)");
            String[] fields = {"data", "device", "ndim", "dtype", "shape", "strides", "byte_offset"};
            for (int i = 0; i < fields.length; i++) {
                assertEquals(DLPack.DL_TENSOR.byteOffset(groupElement(fields[i])), v[3 + i], "DLTensor." + fields[i]);
            }
            assertEquals(DLPack.DL_MANAGED_TENSOR.byteSize(), v[10]);
            assertEquals(DLPack.DL_MANAGED_TENSOR.byteOffset(groupElement("manager_ctx")), v[11]);
            assertEquals(DLPack.DL_MANAGED_TENSOR.byteOffset(groupElement("deleter")), v[12]);
            assertEquals(DLPack.DL_MANAGED_TENSOR_VERSIONED.byteSize(), v[13]);
            String[] versioned = {"version", "manager_ctx", "deleter", "flags", "dl_tensor"};
            for (int i = 0; i < versioned.length; i++) {
                assertEquals(DLPack.DL_MANAGED_TENSOR_VERSIONED.byteOffset(groupElement(versioned[i])), v[14 + i],
                        "DLManagedTensorVersioned." + versioned[i]);
            }
            assertEquals(DLPack.DL_DEVICE.byteSize(), v[19]);
            assertEquals(DLPack.DL_DATA_TYPE.byteSize(), v[20]);
            assertEquals(DLPack.FLAG_READ_ONLY, v[21]);
            assertEquals(DLPack.FLAG_IS_COPIED, v[22]);
            assertEquals(DLPack.FLAG_IS_SUBBYTE_TYPE_PADDED, v[23]);

            int devices = (int) v[24];
            long[] deviceCodes = Arrays.copyOfRange(v, 25, 25 + devices);
            assertArrayEquals(Arrays.stream(DeviceType.values()).mapToLong(DeviceType::code).toArray(), deviceCodes,
                    "DeviceType is DLDeviceType, kDLCPU through kDLTrn");
            assertEquals(18, DeviceType.TRN.code());
            assertEquals(17, DeviceType.MAIA.code());

            int at = 25 + devices;
            int codes = (int) v[at];
            long[] typeCodes = Arrays.copyOfRange(v, at + 1, at + 1 + codes);
            List<Long> datamem = new ArrayList<>(List.of((long) DType.DL_INT, (long) DType.DL_UINT,
                    (long) DType.DL_FLOAT, (long) DType.DL_OPAQUE_HANDLE, (long) DType.DL_BFLOAT,
                    (long) DType.DL_COMPLEX, (long) DType.DL_BOOL));
            CustomDTypes.float8().forEach(d -> datamem.add((long) d.dlpackCode()));
            CustomDTypes.subByte().forEach(d -> datamem.add((long) d.dlpackCode()));
            assertArrayEquals(datamem.stream().mapToLong(Long::longValue).toArray(), typeCodes,
                    "DType constants, float8 (kDLFloat8_e3m4 ...) and float6/float4 (kDLFloat6_e2m3fn,"
                            + " kDLFloat6_e3m2fn, kDLFloat4_e2m1fn) are DLDataTypeCode");
            assertEquals(List.of(6, 6, 4), CustomDTypes.subByte().stream().map(DType::dlpackBits).toList(),
                    "the header: float6 bits 6, float4 bits 4");
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Strides

    @Test
    void everyExportSetsStrides() {
        DataMem.runWith(h, () -> {
            for (long[] shape : new long[][] {{2, 3}, {5}, {}, {0, 4}}) {
                for (int max : new int[] {0, 1}) {
                    try (NDArray a = NDArray.zeros(DType.FLOAT64, shape)) {
                        MemorySegment m = DLPack.toDLPack(a, max);
                        long t = max == 0 ? 0 : 32;
                        long strides = m.get(JAVA_LONG, t + 32);
                        assertNotEquals(0, strides, "strides of C-contiguous " + Arrays.toString(shape));
                        long[] written = MemorySegment.ofAddress(strides).reinterpret(8L * shape.length)
                                .toArray(JAVA_LONG);
                        long[] expected = new long[shape.length];
                        for (int i = 0; i < shape.length; i++) {
                            expected[i] = a.strides()[i] / 8;
                        }
                        assertArrayEquals(expected, written);
                        if (max == 1) {
                            assertEquals(DLPack.MINOR_VERSION, m.get(JAVA_INT, 4));
                        }
                        DLPack.release(m, max == 1);
                    }
                }
            }
        });
    }

    // ---------------------------------------------------------------------------------------------
    // Device types

    @Test
    void trainiumMemoryNeedsADlpack12Consumer() {
        FakeDeviceAllocator trn = new FakeDeviceAllocator(counting, "io.datamem.test.trn",
                new Device(DeviceType.TRN, 2), MemoryKind.DEVICE);
        DataMemHandler device = DataMemHandler.of("trn", trn);
        try (NDArray a = DataMem.callWith(device, () -> NDArray.empty(DType.FLOAT32, 4))) {
            BufferException e = assertThrows(BufferException.class, () -> DLPack.toDLPack(a,
                    DLPackOptions.defaults().withMaxVersion(DLPackVersion.V1_1)));
            assertTrue(e.getMessage().contains("defined in DLPack 1.2"), e.getMessage());
            assertThrows(BufferException.class, () -> DLPack.toDLPack(a, 0));
            MemorySegment m = DLPack.toDLPack(a, DLPackOptions.defaults().withMaxVersion(DLPackVersion.V1_2));
            assertEquals(2, m.get(JAVA_INT, 4), "a 1.2 consumer gets 1.2");
            assertEquals(18, m.get(JAVA_INT, 32 + 8), "kDLTrn");
            assertEquals(2, m.get(JAVA_INT, 32 + 12));
            DLPack.release(m, true);
        }
    }

    @Test
    void importsTrainiumAndMaiaTensors() {
        for (DeviceType type : new DeviceType[] {DeviceType.TRN, DeviceType.MAIA}) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment data = arena.allocate(64, 64);
                MemorySegment m = versionedTensor(arena, data, type.code(), DType.DL_FLOAT, 32, 1, new long[] {4},
                        null, 0);
                try (NDArray a = DLPack.fromDLPack(m, true)) {
                    assertEquals(new Device(type, 0), a.traits().device());
                    assertEquals(MemoryKind.DEVICE, a.traits().kind());
                }
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Sub-byte dtypes

    @Test
    void subByteDtypesExportPaddedToVersionedConsumersOnly() {
        DataMem.runWith(h, () -> {
            for (DType d : CustomDTypes.subByte()) {
                try (NDArray a = NDArray.zeros(d, 2, 3)) {
                    MemorySegment m = DLPack.toDLPack(a, 1);
                    assertEquals(DLPack.FLAG_IS_SUBBYTE_TYPE_PADDED, m.get(JAVA_LONG, 24), "flags of " + d);
                    assertEquals(d.dlpackCode(), m.get(JAVA_BYTE, 32 + 20) & 0xFF);
                    assertEquals(d.dlpackBits(), m.get(JAVA_BYTE, 32 + 21) & 0xFF);
                    assertEquals(1, m.get(JAVA_SHORT, 32 + 22));
                    long[] strides = MemorySegment.ofAddress(m.get(JAVA_LONG, 32 + 32)).reinterpret(16)
                            .toArray(JAVA_LONG);
                    assertArrayEquals(new long[] {3, 1}, strides, "one element per byte");
                    try (NDArray back = DLPack.fromDLPack(m, true)) {
                        assertEquals(d, back.dtype());
                        assertEquals(a.address(), back.address());
                    }
                    BufferException legacy = assertThrows(BufferException.class, () -> DLPack.toDLPack(a, 0));
                    assertTrue(legacy.getMessage().contains("legacy DLPack"), legacy.getMessage());
                    BufferException v10 = assertThrows(BufferException.class, () -> DLPack.toDLPack(a,
                            DLPackOptions.defaults().withMaxVersion(DLPackVersion.V1_0)));
                    assertTrue(v10.getMessage().contains("defined in DLPack 1.1"), v10.getMessage());
                }
            }
            try (NDArray f8 = NDArray.zeros(CustomDTypes.FLOAT8_E4M3FN, 3)) {
                MemorySegment m = DLPack.toDLPack(f8, 1);
                assertEquals(0, m.get(JAVA_LONG, 24), "float8 is a whole byte: no padding flag");
                DLPack.release(m, true);
            }
        });
    }

    @Test
    void importRefusesPackedAndUnspecifiedSubByteTensors() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment data = arena.allocate(64, 64);
            MemorySegment packed = versionedTensor(arena, data, 1, 17, 4, 1, new long[] {8}, null, 0);
            BufferException e = assertThrows(BufferException.class, () -> DLPack.fromDLPack(packed, true));
            assertTrue(e.getMessage().contains("packed"), e.getMessage());
            MemorySegment wrongBits = versionedTensor(arena, data, 1, 15, 8, 1, new long[] {8}, null,
                    DLPack.FLAG_IS_SUBBYTE_TYPE_PADDED);
            e = assertThrows(BufferException.class, () -> DLPack.fromDLPack(wrongBits, true));
            assertTrue(e.getMessage().contains("only with bits 6"), e.getMessage());
            MemorySegment padded = versionedTensor(arena, data, 1, 16, 6, 1, new long[] {2, 4}, new long[] {4, 1},
                    DLPack.FLAG_IS_SUBBYTE_TYPE_PADDED);
            try (NDArray a = DLPack.fromDLPack(padded, true)) {
                assertEquals(CustomDTypes.FLOAT6_E3M2FN, a.dtype());
                assertArrayEquals(new long[] {4, 1}, a.strides(), "one byte per element");
            }
        }
    }

    /** A versioned tensor without a deleter over {@code data}. */
    private static MemorySegment versionedTensor(Arena arena, MemorySegment data, int deviceType, int code, int bits,
                                                 int lanes, long[] shape, long[] strides, long flags) {
        MemorySegment m = arena.allocate(DLPack.DL_MANAGED_TENSOR_VERSIONED);
        m.set(JAVA_INT, 0, 1);
        m.set(JAVA_INT, 4, 3);
        m.set(JAVA_LONG, 24, flags);
        m.set(ADDRESS, 32, data);
        m.set(JAVA_INT, 40, deviceType);
        m.set(JAVA_INT, 44, 0);
        m.set(JAVA_INT, 48, shape.length);
        m.set(JAVA_BYTE, 52, (byte) code);
        m.set(JAVA_BYTE, 53, (byte) bits);
        m.set(JAVA_SHORT, 54, (short) lanes);
        m.set(ADDRESS, 56, arena.allocateFrom(JAVA_LONG, shape));
        m.set(ADDRESS, 64, strides == null ? MemorySegment.NULL : arena.allocateFrom(JAVA_LONG, strides));
        return m;
    }

    // ---------------------------------------------------------------------------------------------
    // DLPackManagedTensorAllocator

    /** What {@code allocate_like} returned: the tensor, or the error text. */
    private record Allocated(MemorySegment tensor, String error) {
    }

    private static Allocated allocateLike(DLPackTensorAllocator allocator, int deviceType, int deviceId, int code,
                                          int bits, int lanes, long... shape) throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = arena.allocateFrom(JAVA_LONG, shape.length == 0 ? new long[1] : shape);
            MemorySegment err = arena.allocate(2048);
            MemorySegment t = (MemorySegment) allocateLike.invokeExact(allocator.function(), deviceType, deviceId,
                    code, bits, lanes, shape.length, s, err, 2048);
            return new Allocated(t.address() == 0 ? null : t.reinterpret(80), err.getString(0));
        }
    }

    private static long[] checkAndFill(MemorySegment t, int code, int bits, int lanes, long... shape)
            throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = arena.allocateFrom(JAVA_LONG, shape.length == 0 ? new long[1] : shape);
            MemorySegment r = arena.allocate(JAVA_LONG, 8);
            MemorySegment err = arena.allocate(1024);
            int rc = (int) checkAndFill.invokeExact(t, code, bits, lanes, shape.length, s, r, err, 1024);
            assertEquals(0, rc, err.getString(0));
            return r.toArray(JAVA_LONG);
        }
    }

    @Test
    void cCallerAllocatesWritesAndFreesThroughTheHandler() throws Throwable {
        try (DLPackTensorAllocator allocator = DLPack.managedTensorAllocator(h)) {
            for (int newThread = 0; newThread < 2; newThread++) {
                long allocations = counting.allocations();
                Allocated got = allocateLike(allocator, 1, 0, DType.DL_FLOAT, 32, 1, 3, 4);
                assertTrue(got.tensor() != null, got.error());
                assertEquals(48, counting.liveBytes(), "float32[3, 4] allocated by the handler");
                assertEquals(allocations + 1, counting.allocations());
                assertEquals(1, DLPack.outstandingExports());
                long[] r = checkAndFill(got.tensor(), DType.DL_FLOAT, 32, 1, 3, 4);
                assertEquals(1, r[0], "major");
                assertEquals(DLPack.MINOR_VERSION, r[1], "minor");
                assertEquals(0, r[2], "flags");
                assertEquals(1, r[3], "kDLCPU");
                assertEquals(0, r[4]);
                assertEquals(48, r[6], "bytes");
                assertEquals(48, r[7], "bytes written and read back");
                assertEquals(0, (int) freeTensor.invokeExact(got.tensor(), newThread));
                assertEquals(0, counting.liveBytes(), "the deleter freed the bytes through the handler");
                assertEquals(0, DLPack.outstandingExports());
            }
        }
    }

    @Test
    void everyDtypeAndZeroSizeAndScalarShapes() throws Throwable {
        List<DType> all = new ArrayList<>(DType.builtins());
        all.addAll(CustomDTypes.float8());
        all.addAll(CustomDTypes.subByte());
        try (DLPackTensorAllocator allocator = DLPack.managedTensorAllocator(h)) {
            for (DType d : all) {
                for (long[] shape : new long[][] {{2, 5}, {}, {0, 3}}) {
                    Allocated got = allocateLike(allocator, 1, 0, d.dlpackCode(), d.dlpackBits(), d.dlpackLanes(),
                            shape);
                    assertTrue(got.tensor() != null, d + " " + Arrays.toString(shape) + ": " + got.error());
                    long[] r = checkAndFill(got.tensor(), d.dlpackCode(), d.dlpackBits(), d.dlpackLanes(), shape);
                    long count = Arrays.stream(shape).reduce(1, Math::multiplyExact);
                    assertEquals(count * d.itemSize(), r[6], d + " " + Arrays.toString(shape));
                    assertEquals(DLPack.isPaddedSubByte(d) ? DLPack.FLAG_IS_SUBBYTE_TYPE_PADDED : 0, r[2],
                            "flags of " + d);
                    if (count == 0) {
                        assertEquals(0, r[5], "data is NULL for a zero-size tensor");
                    }
                    assertEquals(0, (int) freeTensor.invokeExact(got.tensor(), 0));
                }
            }
        }
    }

    @Test
    void refusalsReturnTheSpecificationsErrorAndAllocateNothing() throws Throwable {
        try (DLPackTensorAllocator allocator = DLPack.managedTensorAllocator(h)) {
            long before = counting.allocations();
            assertRefused(allocateLike(allocator, 1, 0, DType.DL_FLOAT, 24, 1, 2), "ValueError", "not a datamem dtype");
            assertRefused(allocateLike(allocator, 1, 0, DType.DL_OPAQUE_HANDLE, 64, 1, 2), "ValueError", "dtype");
            assertRefused(allocateLike(allocator, 1, 0, DType.DL_FLOAT, 32, 4, 2), "ValueError", "dtype");
            assertRefused(allocateLike(allocator, 17, 0, DType.DL_FLOAT, 32, 1, 2), "ValueError", "allocates on");
            assertRefused(allocateLike(allocator, 2, 0, DType.DL_FLOAT, 32, 1, 2), "ValueError", "allocates on");
            assertRefused(allocateLike(allocator, 1, 3, DType.DL_FLOAT, 32, 1, 2), "ValueError", "allocates on");
            assertRefused(allocateLike(allocator, 99, 0, DType.DL_FLOAT, 32, 1, 2), "ValueError", "device");
            assertRefused(allocateLike(allocator, 1, 0, DType.DL_FLOAT, 32, 1, 2, -1), "ValueError", "negative");
            assertRefused(allocateLike(allocator, 1, 0, DType.DL_FLOAT, 64, 1, Long.MAX_VALUE / 2, 4), "ValueError",
                    "shape");
            assertEquals(before, counting.allocations(), "nothing allocated for a refused prototype");
        }
        DataMemAllocator refusing = new DataMemAllocator() {
            @Override
            public MemorySegment malloc(long byteSize) {
                return MemorySegment.NULL;
            }

            @Override
            public MemorySegment calloc(long count, long elementByteSize) {
                return MemorySegment.NULL;
            }

            @Override
            public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
                return MemorySegment.NULL;
            }

            @Override
            public void free(MemorySegment ptr, long byteSize) {
                throw new AssertionError("nothing was allocated");
            }
        };
        try (DLPackTensorAllocator allocator = DLPack.managedTensorAllocator(DataMemHandler.of("refusing", refusing))) {
            assertRefused(allocateLike(allocator, 1, 0, DType.DL_FLOAT, 64, 1, 1000), "MemoryError", "refusing");
        }
        assertEquals(0, DLPack.outstandingExports());
    }

    private static void assertRefused(Allocated got, String kind, String text) {
        assertEquals(null, got.tensor(), got.error());
        assertTrue(got.error().startsWith("-1 1 " + kind + ": "), got.error());
        assertTrue(got.error().contains(text), got.error());
    }

    @Test
    void deviceHandlersServeTheirDevice() throws Throwable {
        FakeDeviceAllocator cuda = FakeDeviceAllocator.cudaDevice(counting);
        try (DLPackTensorAllocator allocator = DLPack.managedTensorAllocator(DataMemHandler.of("fake-cuda", cuda))) {
            assertRefused(allocateLike(allocator, 1, 0, DType.DL_FLOAT, 32, 1, 2), "ValueError", "cuda:1");
            Allocated got = allocateLike(allocator, 2, 1, DType.DL_FLOAT, 32, 1, 2);
            assertTrue(got.tensor() != null, got.error());
            assertEquals(2, got.tensor().get(JAVA_INT, 32 + 8), "kDLCUDA");
            assertEquals(1, got.tensor().get(JAVA_INT, 32 + 12));
            assertEquals(8, counting.liveBytes());
            assertEquals(0, (int) freeTensor.invokeExact(got.tensor(), 1));
        }
    }

    @Test
    void nativeThreadsAllocateConcurrently() throws Throwable {
        try (DLPackTensorAllocator allocator = DLPack.managedTensorAllocator(h)) {
            long before = counting.allocations();
            assertEquals(8, (int) allocateOnThreads.invokeExact(allocator.function(), 8), "every thread succeeded");
            assertEquals(before + 8 * 50, counting.allocations());
            assertEquals(counting.allocations(), counting.frees());
        }
    }

    @Test
    void aClosedAllocatorRefusesLateCalls() throws Throwable {
        DLPackTensorAllocator allocator = DLPack.managedTensorAllocator(h);
        MemorySegment function = allocator.function();
        allocator.close();
        allocator.close();
        assertThrows(IllegalStateException.class, allocator::function);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment err = arena.allocate(2048);
            MemorySegment t = (MemorySegment) allocateLike.invokeExact(function, 1, 0, DType.DL_FLOAT, 32, 1, 1,
                    arena.allocateFrom(JAVA_LONG, 4L), err, 2048);
            assertRefused(new Allocated(t.address() == 0 ? null : t, err.getString(0)), "RuntimeError", "closed");
        }
        assertEquals(0, counting.allocations(), "a closed allocator allocates nothing");
    }
}
