package io.datamem.buffer;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.array.Slice;
import io.datamem.testing.CountingAllocator;
import io.datamem.testing.FakeDeviceAllocator;
import io.datamem.testing.NativeToolchain;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.LongStream;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The native {@code Py_buffer} proven against CPython: a C program compiled at test time against
 * Debian's {@code Python.h} (python3-dev) and linked to libpython compares {@code sizeof} and
 * {@code offsetof} with our layout, reads our values back by field name, and walks our buffers
 * with CPython's own {@code PyBuffer_GetPointer} and {@code PyBuffer_IsContiguous}.
 */
class PyBufferNativeTest {

    @TempDir
    static Path dir;

    private static Arena library;
    private static MethodHandle probeLayout;
    private static MethodHandle probeFlags;
    private static MethodHandle readFields;
    private static MethodHandle formatEquals;
    private static MethodHandle isContiguous;
    private static MethodHandle sumElements;
    private static MethodHandle deviceOf;
    private static MethodHandle readDeviceInfo;
    private static MethodHandle exportFromC;

    private final CountingAllocator counting = new CountingAllocator(DataMem.builtinDefault().allocator());
    private final DataMemHandler h = DataMemHandler.of("pybuffer-native", counting);

    @BeforeAll
    static void compile() {
        List<String> flags = new ArrayList<>(NativeToolchain.pythonIncludes());
        flags.addAll(NativeToolchain.pythonLibraries());
        Path so = NativeToolchain.compileSharedLibrary("native/pybuffer_probe.c", dir, flags);
        library = Arena.ofShared();
        SymbolLookup lookup = SymbolLookup.libraryLookup(so, library);
        Linker linker = Linker.nativeLinker();
        probeLayout = linker.downcallHandle(lookup.findOrThrow("probe_layout"),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        probeFlags = linker.downcallHandle(lookup.findOrThrow("probe_flags"),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        readFields = linker.downcallHandle(lookup.findOrThrow("read_fields"),
                FunctionDescriptor.ofVoid(ADDRESS, ADDRESS));
        formatEquals = linker.downcallHandle(lookup.findOrThrow("format_equals"),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        isContiguous = linker.downcallHandle(lookup.findOrThrow("is_contiguous"),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE));
        sumElements = linker.downcallHandle(lookup.findOrThrow("sum_elements"),
                FunctionDescriptor.of(JAVA_DOUBLE, ADDRESS, ADDRESS));
        deviceOf = linker.downcallHandle(lookup.findOrThrow("device_of"),
                FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, JAVA_INT));
        readDeviceInfo = linker.downcallHandle(lookup.findOrThrow("read_device_info"),
                FunctionDescriptor.ofVoid(ADDRESS, ADDRESS));
        exportFromC = linker.downcallHandle(lookup.findOrThrow("export_from_c"),
                FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT, JAVA_INT));
    }

    @AfterAll
    static void unload() {
        if (library != null) {
            library.close();
        }
    }

    @AfterEach
    void nothingLeaks() {
        assertEquals(0, counting.liveBlocks());
    }

    private static long offset(String field) {
        return BufferView.NATIVE_LAYOUT.byteOffset(PathElement.groupElement(field));
    }

    @Test
    void layoutMatchesPythonH() throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG, 32);
            int n = (int) probeLayout.invokeExact(out, 32);
            long[] v = out.asSlice(0, 8L * n).toArray(JAVA_LONG);
            assertEquals(BufferView.PY_BUFFER_BYTE_SIZE, v[0], "sizeof(Py_buffer)");
            String[] fields = {"buf", "obj", "len", "itemsize", "readonly", "ndim", "format", "shape", "strides",
                "suboffsets", "internal"};
            for (int i = 0; i < fields.length; i++) {
                assertEquals(offset(fields[i]), v[1 + i], "offsetof(Py_buffer, " + fields[i] + ")");
            }
            assertEquals(BufferView.NATIVE_LAYOUT.byteSize(), v[12], "sizeof(extended Py_buffer)");
            String[] extension = {"flags", "ext_flags", "device", "device_info"};
            for (int i = 0; i < extension.length; i++) {
                assertEquals(offset(extension[i]), v[13 + i], "offsetof(extended, " + extension[i] + ")");
            }
            assertEquals(4, v[17], "sizeof(readonly)");
            assertEquals(4, v[18], "sizeof(ndim)");
            assertEquals(8, v[19], "sizeof(Py_ssize_t)");
        }
    }

    @Test
    void flagValuesMatchPythonH() throws Throwable {
        int[] ours = {BufferFlags.SIMPLE, BufferFlags.WRITABLE, BufferFlags.WRITEABLE, BufferFlags.FORMAT,
            BufferFlags.ND, BufferFlags.STRIDES, BufferFlags.C_CONTIGUOUS, BufferFlags.F_CONTIGUOUS,
            BufferFlags.ANY_CONTIGUOUS, BufferFlags.INDIRECT, BufferFlags.CONTIG, BufferFlags.CONTIG_RO,
            BufferFlags.STRIDED, BufferFlags.STRIDED_RO, BufferFlags.RECORDS, BufferFlags.RECORDS_RO, BufferFlags.FULL,
            BufferFlags.FULL_RO, BufferFlags.READ, BufferFlags.WRITE};
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG, 32);
            int n = (int) probeFlags.invokeExact(out, 32);
            assertEquals(ours.length, n);
            for (int i = 0; i < n; i++) {
                assertEquals(out.getAtIndex(JAVA_LONG, i), ours[i], "flag #" + i);
                assertEquals(0, ours[i] & BufferFlags.DEVICE, "DEVICE collides with no CPython flag");
            }
        }
    }

    private NDArray arange(DType dtype, long... shape) {
        NDArray a = DataMem.callWith(h, () -> NDArray.zeros(dtype, shape));
        a.copyFrom(LongStream.range(0, a.size()).toArray());
        return a;
    }

    /** Writes the view natively and checks every field as C reads it, and CPython's walk of it. */
    private void checkNatively(NDArray array, BufferView v) throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = v.toNative(arena);
            MemorySegment out = arena.allocate(JAVA_LONG, 15);
            readFields.invokeExact(s, out);
            long[] f = out.toArray(JAVA_LONG);
            assertEquals(v.address(), f[0], "buf");
            assertEquals(0, f[1], "obj is NULL");
            assertEquals(v.len(), f[2], "len");
            assertEquals(v.itemSize(), f[3], "itemsize");
            assertEquals(v.readOnly() ? 1 : 0, f[4], "readonly");
            assertEquals(v.ndim(), f[5], "ndim");
            MemorySegment expected = v.format() == null ? MemorySegment.NULL
                    : arena.allocateFrom(v.format(), StandardCharsets.US_ASCII);
            assertEquals(1, (int) formatEquals.invokeExact(s, expected), "format " + v.format());
            assertEquals(v.shape() == null, f[7] == 0, "shape NULL");
            if (v.shape() != null) {
                assertArrayEquals(v.shape(), MemorySegment.ofAddress(f[7]).reinterpret(8L * v.ndim())
                        .toArray(JAVA_LONG));
            }
            assertEquals(v.strides() == null, f[8] == 0, "strides NULL");
            if (v.strides() != null) {
                assertArrayEquals(v.strides(), MemorySegment.ofAddress(f[8]).reinterpret(8L * v.ndim())
                        .toArray(JAVA_LONG));
            }
            assertEquals(0, f[9], "suboffsets");
            assertEquals(0, f[10], "internal");
            assertEquals(v.flags(), f[11], "flags");
            assertEquals(0, f[12], "ext_flags");
            if (v.device() == null) {
                assertEquals(0, f[13], "device");
                assertEquals(0, f[14], "device_info");
            }
            if (v.device() == null && v.address() != 0) {
                assertEquals(array.isCContiguous() ? 1 : 0, (int) isContiguous.invokeExact(s, (byte) 'C'), "C");
                if (v.strides() != null) {
                    assertEquals(array.isFContiguous() ? 1 : 0, (int) isContiguous.invokeExact(s, (byte) 'F'), "F");
                    assertEquals(array.isCContiguous() || array.isFContiguous() ? 1 : 0,
                            (int) isContiguous.invokeExact(s, (byte) 'A'), "A");
                }
                MemorySegment count = arena.allocate(JAVA_LONG);
                double sum = (double) sumElements.invokeExact(s, count);
                double expectedSum = 0;
                for (double d : array.toDoubleArray()) {
                    expectedSum += d;
                }
                assertEquals(expectedSum, sum, "sum of the elements CPython's PyBuffer_GetPointer finds");
                assertEquals(array.size(), count.get(JAVA_LONG, 0));
            }
        }
    }

    @Test
    void valuesReadBackThroughPythonH() throws Throwable {
        try (NDArray a = arange(DType.FLOAT64, 2, 3)) {
            for (int flags : new int[] {BufferFlags.FULL_RO, BufferFlags.FULL, BufferFlags.SIMPLE,
                BufferFlags.CONTIG_RO, BufferFlags.RECORDS_RO | BufferFlags.DEVICE, BufferFlags.C_CONTIGUOUS}) {
                try (BufferView v = a.getBuffer(flags)) {
                    checkNatively(a, v);
                }
            }
            NDArray ro = a.asReadOnly();
            try (BufferView v = ro.getBuffer(BufferFlags.FULL_RO)) {
                checkNatively(ro, v);
            }
        }
    }

    @Test
    void cpythonWalksNonContiguousLayouts() throws Throwable {
        try (NDArray a = arange(DType.INT32, 4, 5)) {
            List<NDArray> views = List.of(a.transpose(), a.slice(Slice.range(1, 4), Slice.range(0, 5, 2)),
                    a.slice(Slice.every(-1), Slice.every(-2)), a.select(1, 3), a.slice(Slice.range(0, 0)));
            for (NDArray view : views) {
                try (BufferView v = view.getBuffer(BufferFlags.FULL_RO)) {
                    checkNatively(view, v);
                }
            }
        }
        try (NDArray scalar = arange(DType.FLOAT64); BufferView v = scalar.getBuffer(BufferFlags.FULL_RO)) {
            checkNatively(scalar, v);
        }
    }

    @Test
    void deviceFieldsAsACConsumerReadsThem() throws Throwable {
        FakeDeviceAllocator cuda = FakeDeviceAllocator.cudaDevice(counting);
        try (NDArray a = DataMem.callWith(DataMemHandler.of("fake-cuda", cuda), () -> NDArray.empty(DType.FLOAT32, 8));
             BufferView v = a.getBuffer(BufferFlags.STRIDED_RO | BufferFlags.DEVICE);
             Arena arena = Arena.ofConfined()) {
            checkNatively(a, v);
            MemorySegment s = v.toNative(arena);
            MemorySegment device = (MemorySegment) deviceOf.invokeExact(s, BufferFlags.STRIDED_RO | BufferFlags.DEVICE,
                    BufferFlags.DEVICE);
            assertEquals(DeviceInfo.CUDA_DEVICE_ID, device.reinterpret(64).getString(0));
            MemorySegment info = arena.allocate(JAVA_LONG, 9);
            readDeviceInfo.invokeExact(s, info);
            long[] i = info.toArray(JAVA_LONG);
            assertArrayEquals(new long[] {1, 48, 2, 1, 3, FakeDeviceAllocator.STREAM, FakeDeviceAllocator.CONTEXT,
                FakeDeviceAllocator.DEVICE_HANDLE, StandardDeviceInfo.LAYOUT.byteSize()}, i);
        }
        try (NDArray host = arange(DType.INT32, 3); BufferView v = host.getBuffer(BufferFlags.SIMPLE | BufferFlags.DEVICE);
             Arena arena = Arena.ofConfined()) {
            MemorySegment device = (MemorySegment) deviceOf.invokeExact(v.toNative(arena),
                    BufferFlags.SIMPLE | BufferFlags.DEVICE, BufferFlags.DEVICE);
            assertEquals("<cpu>", device.reinterpret(64).getString(0));
        }
    }

    @Test
    void aCExportersBufferReadsIntoJava() throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = arena.allocate(BufferView.NATIVE_LAYOUT);
            exportFromC.invokeExact(s, BufferFlags.FULL_RO | BufferFlags.DEVICE, BufferFlags.DEVICE);
            BufferView v = BufferView.fromNative(s, true);
            assertArrayEquals(new long[] {3, 2}, v.shape());
            assertArrayEquals(new long[] {8, 24}, v.strides());
            assertEquals("d", v.format());
            assertTrue(v.readOnly());
            assertEquals(48, v.len());
            assertEquals("org.example.accelerator", v.device());
            NativeDeviceInfo info = assertInstanceOf(NativeDeviceInfo.class, v.deviceInfo());
            assertEquals(1, info.version());

            MemorySegment plain = arena.allocate(BufferView.PY_BUFFER_BYTE_SIZE);
            exportFromC.invokeExact(plain, BufferFlags.FULL_RO, BufferFlags.DEVICE);
            BufferView host = BufferView.fromNative(plain, false);
            assertNull(host.device());
            NDArray view = NDArray.wrap(host.segment(), DType.FLOAT64, host.shape(), host.strides(), 0);
            assertEquals(5.0, view.getDouble(1, 1));
            assertTrue(view.isFContiguous());
        }
    }
}
