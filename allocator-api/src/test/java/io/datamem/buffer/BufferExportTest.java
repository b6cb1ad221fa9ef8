package io.datamem.buffer;

import io.datamem.format.CustomDTypes;
import io.datamem.format.FormatString;
import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.Device;
import io.datamem.DeviceType;
import io.datamem.MemoryKind;
import io.datamem.MemoryTraits;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.array.Slice;
import io.datamem.testing.CountingAllocator;
import io.datamem.testing.FakeDeviceAllocator;
import io.datamem.testing.Nep49SampleAllocator;
import io.datamem.testing.WithTraits;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The buffer protocol on arrays: every request flag, every refusal, export pins, native form. */
class BufferExportTest {

    private final Nep49SampleAllocator sample = new Nep49SampleAllocator();
    private final CountingAllocator counting = new CountingAllocator(sample);
    private final DataMemHandler h = DataMemHandler.of("buffer-test", counting);

    @AfterEach
    void nothingLeaks() {
        assertEquals(List.of(), sample.violations());
        assertEquals(0, counting.liveBlocks(), "every array and export released and freed");
    }

    private NDArray arange(DType dtype, long... shape) {
        NDArray a = DataMem.callWith(h, () -> NDArray.zeros(dtype, shape));
        if (a.size() > 0) {
            a.copyFrom(java.util.stream.LongStream.range(0, a.size()).toArray());
        }
        return a;
    }

    @Test
    void flagValuesAreCPythons() {
        assertEquals(0, BufferFlags.SIMPLE);
        assertEquals(0x1, BufferFlags.WRITABLE);
        assertEquals(0x1, BufferFlags.WRITEABLE);
        assertEquals(0x4, BufferFlags.FORMAT);
        assertEquals(0x8, BufferFlags.ND);
        assertEquals(0x18, BufferFlags.STRIDES);
        assertEquals(0x38, BufferFlags.C_CONTIGUOUS);
        assertEquals(0x58, BufferFlags.F_CONTIGUOUS);
        assertEquals(0x98, BufferFlags.ANY_CONTIGUOUS);
        assertEquals(0x118, BufferFlags.INDIRECT);
        assertEquals(0x9, BufferFlags.CONTIG);
        assertEquals(0x8, BufferFlags.CONTIG_RO);
        assertEquals(0x19, BufferFlags.STRIDED);
        assertEquals(0x18, BufferFlags.STRIDED_RO);
        assertEquals(0x1d, BufferFlags.RECORDS);
        assertEquals(0x1c, BufferFlags.RECORDS_RO);
        assertEquals(0x11d, BufferFlags.FULL);
        assertEquals(0x11c, BufferFlags.FULL_RO);
        assertEquals(0x100, BufferFlags.READ);
        assertEquals(0x200, BufferFlags.WRITE);
        assertEquals(0x10000, BufferFlags.DEVICE);
        assertEquals(0xfd, BufferFlags.REQUIRED_FLAGS);
        assertEquals(0x1fd, BufferFlags.CLASSIC_FLAGS);
        assertEquals("INDIRECT|FORMAT", BufferFlags.describe(BufferFlags.FULL_RO));
        assertEquals("STRIDES|WRITABLE", BufferFlags.describe(BufferFlags.STRIDED));
        assertEquals("C_CONTIGUOUS|F_CONTIGUOUS", BufferFlags.describe(BufferFlags.C_CONTIGUOUS
                | BufferFlags.F_CONTIGUOUS));
        assertEquals("SIMPLE", BufferFlags.describe(0));
        assertEquals("ND|DEVICE|0x400", BufferFlags.describe(BufferFlags.ND | BufferFlags.DEVICE | 0x400));
        assertTrue(BufferFlags.requests(BufferFlags.FULL, BufferFlags.STRIDES));
        assertFalse(BufferFlags.requests(BufferFlags.ND, BufferFlags.STRIDES));
    }

    @Test
    void fullRequestDescribesEverything() {
        try (NDArray a = arange(DType.FLOAT64, 2, 3); BufferView v = a.getBuffer(BufferFlags.FULL_RO)) {
            assertSame(a, v.obj());
            assertEquals(BufferFlags.FULL_RO, v.requestFlags());
            assertEquals(a.address(), v.address());
            assertEquals(48, v.len());
            assertEquals(8, v.itemSize());
            assertEquals("d", v.format());
            assertEquals(2, v.ndim());
            assertArrayEquals(new long[] {2, 3}, v.shape());
            assertArrayEquals(new long[] {24, 8}, v.strides());
            assertNull(v.suboffsets());
            assertFalse(v.readOnly());
            assertEquals(0, v.flags());
            assertEquals(0, v.extFlags());
            assertNull(v.device());
            assertNull(v.deviceInfo());
            assertEquals(5.0, v.segment().getAtIndex(ValueLayout.JAVA_DOUBLE, 5));
        }
    }

    @Test
    void simpleRequestIsFlatBytesWithTheOriginalItemSize() {
        try (NDArray a = arange(DType.INT32, 2, 3); BufferView v = a.getBuffer(BufferFlags.SIMPLE)) {
            assertNull(v.format());
            assertEquals(1, v.ndim());
            assertNull(v.shape());
            assertNull(v.strides());
            assertEquals(24, v.len());
            assertEquals(4, v.itemSize(), "CPython keeps itemsize when FORMAT is not requested");
            assertEquals(24, v.segment().byteSize());
        }
    }

    @Test
    void ndWithoutStridesAndZeroDimensions() {
        try (NDArray a = arange(DType.INT16, 4, 5); BufferView v = a.getBuffer(BufferFlags.CONTIG_RO)) {
            assertArrayEquals(new long[] {4, 5}, v.shape());
            assertNull(v.strides());
            assertNull(v.format());
        }
        try (NDArray s = arange(DType.FLOAT32); BufferView v = s.getBuffer(BufferFlags.RECORDS_RO)) {
            assertEquals(0, v.ndim());
            assertNull(v.shape(), "shape must be NULL when ndim is 0");
            assertNull(v.strides());
            assertEquals(4, v.len());
            assertEquals("f", v.format());
        }
        try (NDArray s = arange(DType.FLOAT32); BufferView v = s.getBuffer(BufferFlags.SIMPLE)) {
            assertEquals(1, v.ndim(), "without ND a scalar is one run of bytes, as memoryview says");
            assertEquals(4, v.len());
        }
    }

    @Test
    void writableIsRefusedOnReadOnlyData() {
        try (NDArray a = arange(DType.UINT8, 8)) {
            NDArray ro = a.asReadOnly();
            assertTrue(ro.isReadOnly());
            BufferException e = assertThrows(BufferException.class, () -> ro.getBuffer(BufferFlags.WRITABLE));
            assertEquals(BufferFlags.WRITABLE, e.flag());
            assertTrue(e.getMessage().contains("WRITABLE") && e.getMessage().contains("read-only"), e.getMessage());
            try (BufferView v = ro.getBuffer(BufferFlags.FULL_RO)) {
                assertTrue(v.readOnly());
                assertTrue(v.segment().isReadOnly());
            }
            try (BufferView v = a.getBuffer(BufferFlags.FULL)) {
                assertFalse(v.readOnly());
            }
            assertThrows(UnsupportedOperationException.class, () -> ro.setLong(1, 0));
            assertThrows(UnsupportedOperationException.class, () -> ro.fill(0.0));
            assertThrows(UnsupportedOperationException.class, () -> ro.copyFrom(a));
            assertEquals(7, ro.getLong(7));
            assertTrue(ro.slice(Slice.range(0, 4)).isReadOnly(), "views of a read-only array are read-only");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg = arena.allocate(16).asReadOnly();
            NDArray wrapped = NDArray.wrap(seg, DType.INT32, 4);
            assertTrue(wrapped.isReadOnly());
            assertThrows(BufferException.class, () -> wrapped.getBuffer(BufferFlags.STRIDED));
            try (BufferView v = wrapped.getBuffer(BufferFlags.STRIDED_RO)) {
                assertTrue(v.readOnly());
            }
        }
    }

    @Test
    void contiguityFlagsAreHonoured() {
        try (NDArray a = arange(DType.FLOAT32, 3, 4)) {
            NDArray t = a.transpose();
            NDArray stepped = a.slice(Slice.all(), Slice.range(0, 4, 2));
            try (BufferView v = a.getBuffer(BufferFlags.C_CONTIGUOUS)) {
                assertArrayEquals(new long[] {16, 4}, v.strides());
            }
            BufferException f = assertThrows(BufferException.class, () -> a.getBuffer(BufferFlags.F_CONTIGUOUS));
            assertEquals(BufferFlags.F_CONTIGUOUS, f.flag());
            assertTrue(f.getMessage().contains("F_CONTIGUOUS") && f.getMessage().contains("not Fortran-contiguous"),
                    f.getMessage());
            BufferException c = assertThrows(BufferException.class, () -> t.getBuffer(BufferFlags.C_CONTIGUOUS));
            assertEquals(BufferFlags.C_CONTIGUOUS, c.flag());
            try (BufferView v = t.getBuffer(BufferFlags.F_CONTIGUOUS); BufferView w = t.getBuffer(
                    BufferFlags.ANY_CONTIGUOUS)) {
                assertArrayEquals(new long[] {4, 16}, v.strides());
                assertEquals(48, w.len());
            }
            BufferException any = assertThrows(BufferException.class,
                    () -> stepped.getBuffer(BufferFlags.ANY_CONTIGUOUS));
            assertEquals(BufferFlags.ANY_CONTIGUOUS, any.flag());
            assertTrue(any.getMessage().contains("ANY_CONTIGUOUS"), any.getMessage());
        }
    }

    @Test
    void missingStridesOrShapeIsRefusedWhereTheDataNeedsThem() {
        try (NDArray a = arange(DType.INT64, 3, 4)) {
            NDArray t = a.transpose();
            BufferException noStrides = assertThrows(BufferException.class, () -> t.getBuffer(BufferFlags.ND));
            assertEquals(BufferFlags.STRIDES, noStrides.flag());
            assertTrue(noStrides.getMessage().contains("STRIDES not requested"), noStrides.getMessage());
            assertThrows(BufferException.class, () -> t.getBuffer(BufferFlags.SIMPLE));
            assertThrows(BufferException.class, () -> t.getBuffer(BufferFlags.FORMAT | BufferFlags.ND));
            try (BufferView v = t.getBuffer(BufferFlags.STRIDED_RO)) {
                assertArrayEquals(new long[] {8, 32}, v.strides());
            }
            BufferException noShape = assertThrows(BufferException.class, () -> a.getBuffer(BufferFlags.FORMAT));
            assertEquals(BufferFlags.ND, noShape.flag());
            assertTrue(noShape.getMessage().contains("ND not requested") && noShape.getMessage().contains("FORMAT"),
                    noShape.getMessage());
        }
        try (NDArray bytes = arange(DType.UINT8, 2, 2); BufferView v = bytes.getBuffer(BufferFlags.FORMAT)) {
            assertEquals("B", v.format(), "single-byte items may keep their format without ND");
            assertNull(v.shape());
        }
    }

    @Test
    void stridedAndReversedViews() {
        try (NDArray a = arange(DType.FLOAT64, 10)) {
            NDArray everyOther = a.slice(Slice.range(1, 10, 2));
            try (BufferView v = everyOther.getBuffer(BufferFlags.RECORDS_RO)) {
                assertEquals(a.address() + 8, v.address());
                assertArrayEquals(new long[] {16}, v.strides());
                assertEquals(40, v.len());
                assertEquals(72, v.segment().byteSize());
            }
            NDArray reversed = a.slice(Slice.every(-1));
            try (BufferView v = reversed.getBuffer(BufferFlags.STRIDED_RO)) {
                assertEquals(a.address() + 72, v.address(), "buf is element [0], the highest address");
                assertArrayEquals(new long[] {-8}, v.strides());
                assertEquals(a.address(), v.segment().address());
                assertEquals(80, v.segment().byteSize());
            }
        }
    }

    @Test
    void zeroSizeArrays() {
        try (NDArray a = arange(DType.COMPLEX128, 0, 3); BufferView v = a.getBuffer(BufferFlags.FULL_RO)) {
            assertEquals(0, v.len());
            assertArrayEquals(new long[] {0, 3}, v.shape());
            assertEquals("Zd", v.format());
        }
    }

    static List<DType> dtypes() {
        List<DType> all = new java.util.ArrayList<>(DType.builtins());
        all.addAll(CustomDTypes.float8());
        return all;
    }

    @ParameterizedTest
    @MethodSource("dtypes")
    void everyDtypeExportsItsFormat(DType dtype) {
        try (NDArray a = DataMem.callWith(h, () -> NDArray.zeros(dtype, 2, 2));
             BufferView v = a.getBuffer(BufferFlags.RECORDS)) {
            assertEquals(dtype.format(), v.format());
            assertEquals(dtype.itemSize(), v.itemSize());
            assertEquals(dtype.itemSize(), FormatString.parse(v.format()).itemSize());
        }
    }

    @Test
    void anExportPinsTheMemory() {
        NDArray a = arange(DType.INT32, 4);
        BufferView v = a.getBuffer(BufferFlags.STRIDED);
        IllegalStateException e = assertThrows(IllegalStateException.class, a::close);
        assertTrue(e.getMessage().contains("buffer export(s) still held"), e.getMessage());
        assertThrows(IllegalStateException.class, () -> a.resize(8));
        assertFalse(a.isClosed());
        NDArray view = a.slice(Slice.range(1, 3));
        BufferView fromView = view.getBuffer(BufferFlags.SIMPLE);
        v.release();
        assertTrue(v.isReleased());
        v.release(); // idempotent
        assertThrows(IllegalStateException.class, v::segment);
        assertThrows(IllegalStateException.class, () -> v.toNative(Arena.global()));
        assertEquals(16, v.len(), "fields stay readable after release");
        assertThrows(IllegalStateException.class, a::close, "the view's export still pins the base");
        CompletableFuture.runAsync(fromView::release).join();
        a.resize(8);
        a.close();
        assertThrows(IllegalStateException.class, () -> a.getBuffer(BufferFlags.SIMPLE));
    }

    @Test
    void deviceMemoryNeedsTheDeviceFlag() {
        FakeDeviceAllocator cuda = FakeDeviceAllocator.cudaDevice(counting);
        DataMemHandler dev = DataMemHandler.of("fake-cuda", cuda);
        try (NDArray a = DataMem.callWith(dev, () -> NDArray.empty(DType.FLOAT32, 4, 4))) {
            BufferException e = assertThrows(BufferException.class, () -> a.getBuffer(BufferFlags.FULL_RO));
            assertEquals(BufferFlags.DEVICE, e.flag());
            assertTrue(e.getMessage().contains("DEVICE not requested") && e.getMessage().contains("cuda:1"),
                    e.getMessage());
            try (BufferView v = a.getBuffer(BufferFlags.FULL_RO | BufferFlags.DEVICE)) {
                assertEquals(BufferFlags.DEVICE, v.flags());
                assertEquals(DeviceInfo.CUDA_DEVICE_ID, v.device());
                StandardDeviceInfo info = assertInstanceOf(StandardDeviceInfo.class, v.deviceInfo());
                assertEquals(new Device(DeviceType.CUDA, 1), info.device());
                assertEquals(MemoryKind.DEVICE, info.kind());
                assertEquals(FakeDeviceAllocator.STREAM, info.stream());
                assertEquals(1, info.version());
                assertEquals(a.address(), v.address());
                assertThrows(UnsupportedOperationException.class, v::segment);
                assertThrows(IllegalStateException.class, a::close);
            }
        }
    }

    @Test
    void deviceMemoryWithoutABackendHookCannotBeDescribed() {
        DataMemHandler bare = DataMemHandler.of("bare-device", new WithTraits(counting,
                new MemoryTraits(MemoryKind.DEVICE, new Device(DeviceType.ROCM, 0), false, 16, 4096)));
        try (NDArray a = DataMem.callWith(bare, () -> NDArray.empty(DType.INT8, 4))) {
            BufferException e = assertThrows(BufferException.class,
                    () -> a.getBuffer(BufferFlags.STRIDED_RO | BufferFlags.DEVICE));
            assertTrue(e.getMessage().contains("DeviceInterchange"), e.getMessage());
        }
    }

    @Test
    void hostAccessibleDeviceMemoryIsACpuBuffer() {
        for (MemoryKind kind : List.of(MemoryKind.HOST_PINNED, MemoryKind.MANAGED)) {
            FakeDeviceAllocator usm = FakeDeviceAllocator.sycl(counting, kind);
            DataMemHandler handler = DataMemHandler.of("fake-usm", usm);
            try (NDArray a = DataMem.callWith(handler, () -> NDArray.zeros(DType.INT16, 3));
                 BufferView plain = a.getBuffer(BufferFlags.FULL);
                 BufferView extended = a.getBuffer(BufferFlags.FULL | BufferFlags.DEVICE)) {
                assertNull(plain.device());
                assertEquals(0, plain.flags());
                assertEquals(6, plain.segment().byteSize());
                assertEquals(BufferFlags.DEVICE, extended.flags(), "the request was understood");
                assertNull(extended.device(), "host-accessible memory is a CPU buffer: device NULL");
                assertNull(extended.deviceInfo());
            }
        }
        FakeDeviceAllocator usmDevice = FakeDeviceAllocator.sycl(counting, MemoryKind.DEVICE);
        try (NDArray a = DataMem.callWith(DataMemHandler.of("fake-usm-device", usmDevice),
                () -> NDArray.empty(DType.INT16, 3))) {
            assertThrows(BufferException.class, () -> a.getBuffer(BufferFlags.FULL_RO));
            try (BufferView v = a.getBuffer(BufferFlags.FULL_RO | BufferFlags.DEVICE)) {
                assertEquals(DeviceInfo.SYCL_DEVICE_ID, v.device());
            }
        }
    }

    @Test
    void supportedFlagsAndCheckBufferSupports() {
        try (NDArray a = arange(DType.INT8, 2)) {
            assertEquals(BufferFlags.CLASSIC_FLAGS | BufferFlags.DEVICE, a.supportedFlags());
            assertTrue(BufferExporter.checkBufferSupports(a, BufferFlags.FULL | BufferFlags.DEVICE));
            assertTrue(BufferExporter.checkBufferSupports(a, BufferFlags.C_CONTIGUOUS | BufferFlags.F_CONTIGUOUS));
        }
        assertFalse(BufferExporter.checkBufferSupports("not an exporter", BufferFlags.SIMPLE));
        assertFalse(BufferExporter.checkBufferSupports(null, BufferFlags.SIMPLE));
        BufferExporter classic = flags -> {
            throw new AssertionError("not called");
        };
        assertTrue(BufferExporter.checkBufferSupports(classic, BufferFlags.FULL), "0 means every classic flag");
        assertFalse(BufferExporter.checkBufferSupports(classic, BufferFlags.DEVICE), "but no extended flag");
        BufferExporter simpleOnly = exporter(-1);
        assertTrue(BufferExporter.checkBufferSupports(simpleOnly, BufferFlags.SIMPLE));
        assertFalse(BufferExporter.checkBufferSupports(simpleOnly, BufferFlags.WRITABLE));
        BufferExporter masked = exporter(BufferFlags.STRIDES | BufferFlags.FORMAT);
        assertTrue(BufferExporter.checkBufferSupports(masked, BufferFlags.RECORDS_RO));
        assertFalse(BufferExporter.checkBufferSupports(masked, BufferFlags.RECORDS));
    }

    private static BufferExporter exporter(int supported) {
        return new BufferExporter() {
            @Override
            public BufferView getBuffer(int flags) {
                return BufferView.builder(this, flags).address(1).len(1).build();
            }

            @Override
            public int supportedFlags() {
                return supported;
            }

            @Override
            public String toString() {
                return "exporter(" + supported + ")";
            }
        };
    }

    @Test
    void requestChecksTheRequiredFlagsFirst() {
        BufferException e = assertThrows(BufferException.class,
                () -> BufferExporter.request(exporter(-1), BufferFlags.WRITABLE));
        assertEquals(BufferFlags.WRITABLE, e.flag());
        assertTrue(e.getMessage().contains("WRITABLE") && e.getMessage().contains("-1, SIMPLE only"), e.getMessage());
        try (BufferView v = BufferExporter.request(exporter(-1), BufferFlags.SIMPLE | BufferFlags.DEVICE)) {
            assertEquals(0, v.flags(), "DEVICE is not required: an exporter may ignore it");
        }
        try (NDArray a = arange(DType.FLOAT64, 2); BufferView v = BufferExporter.request(a, BufferFlags.FULL_RO)) {
            assertEquals("d", v.format());
        }
    }

    @Test
    void theBuilderEnforcesTheProtocol() {
        Object obj = "exporter";
        assertThrows(IllegalArgumentException.class, () -> BufferView.builder(obj, BufferFlags.SIMPLE).format("B")
                .len(1).build());
        assertThrows(IllegalArgumentException.class, () -> BufferView.builder(obj, BufferFlags.FORMAT).len(1).build());
        assertThrows(IllegalArgumentException.class, () -> BufferView.builder(obj, BufferFlags.WRITABLE).readOnly(true)
                .len(1).build());
        assertThrows(IllegalArgumentException.class, () -> BufferView.builder(obj, BufferFlags.ND).ndim(1)
                .shape(new long[] {3}).len(4).build());
        assertThrows(IllegalArgumentException.class, () -> BufferView.builder(obj, BufferFlags.SIMPLE).ndim(2).build());
        assertThrows(IllegalArgumentException.class, () -> BufferView.builder(obj, BufferFlags.STRIDES).ndim(1)
                .shape(new long[] {1}).len(1).build(), "strides missing");
        assertThrows(IllegalArgumentException.class, () -> BufferView.builder(obj, BufferFlags.DEVICE)
                .flags(BufferFlags.DEVICE).device("cpu", null).build());
        assertThrows(IllegalArgumentException.class, () -> BufferView.builder(obj, BufferFlags.SIMPLE)
                .device("io.datamem.cuda", null).build(), "device without the DEVICE flag");
        assertThrows(IllegalArgumentException.class, () -> BufferView.builder(obj, BufferFlags.SIMPLE)
                .flags(BufferFlags.DEVICE).build(), "DEVICE honoured but not requested");
        assertThrows(IllegalArgumentException.class, () -> BufferView.builder(obj, BufferFlags.SIMPLE).itemSize(0)
                .build());
        assertThrows(NullPointerException.class, () -> BufferView.builder(null, 0));
    }

    @Test
    void aNativeBufferWhoseStridesOverflowIsAnIllegalArgumentNamingThem() {
        try (NDArray a = arange(DType.INT32, 3, 4); Arena arena = Arena.ofConfined();
             BufferView v = a.getBuffer(BufferFlags.FULL_RO)) {
            MemorySegment pyBuffer = v.toNative(arena);
            MemorySegment strides = pyBuffer.get(ValueLayout.ADDRESS, 56).reinterpret(16); // Py_buffer.strides
            strides.setAtIndex(ValueLayout.JAVA_LONG, 0, Long.MAX_VALUE / 2);               // 2 steps overflow
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> BufferView.fromNative(pyBuffer, false));
            assertEquals("Py_buffer.strides [" + Long.MAX_VALUE / 2 + ", 4] with shape [3, 4] and itemsize 4 reach "
                    + "beyond a 64-bit byte count", e.getMessage());
        }
    }

    @Test
    void javaNativeJavaRoundTrip() {
        try (NDArray a = arange(DType.INT32, 3, 4); Arena arena = Arena.ofConfined()) {
            NDArray t = a.transpose();
            try (BufferView v = t.getBuffer(BufferFlags.FULL_RO | BufferFlags.DEVICE)) {
                MemorySegment native_ = v.toNative(arena);
                assertEquals(104, native_.byteSize());
                BufferView back = BufferView.fromNative(native_, true);
                assertEquals(v.address(), back.address());
                assertEquals(v.len(), back.len());
                assertEquals(v.itemSize(), back.itemSize());
                assertEquals(v.format(), back.format());
                assertEquals(v.ndim(), back.ndim());
                assertArrayEquals(v.shape(), back.shape());
                assertArrayEquals(v.strides(), back.strides());
                assertEquals(BufferFlags.DEVICE, back.flags());
                assertNull(back.device());
                assertEquals(11, back.segment().getAtIndex(ValueLayout.JAVA_INT, 11));
                back.release(); // describes foreign memory: a no-op
                assertFalse(v.isReleased());
            }
            try (BufferView v = a.getBuffer(BufferFlags.SIMPLE)) {
                MemorySegment pyBuffer = arena.allocate(BufferView.PY_BUFFER_BYTE_SIZE);
                v.writeNative(pyBuffer, arena);
                BufferView back = BufferView.fromNative(pyBuffer, false);
                assertNull(back.format());
                assertEquals(48, back.len());
                assertEquals(1, back.ndim());
            }
            try (BufferView v = a.getBuffer(BufferFlags.SIMPLE | BufferFlags.DEVICE)) {
                MemorySegment tooSmall = arena.allocate(BufferView.PY_BUFFER_BYTE_SIZE);
                assertThrows(IllegalArgumentException.class, () -> v.writeNative(tooSmall, arena));
            }
        }
    }

    @Test
    void deviceFieldsRoundTripNatively() {
        FakeDeviceAllocator cuda = FakeDeviceAllocator.cudaDevice(counting);
        try (NDArray a = DataMem.callWith(DataMemHandler.of("fake-cuda", cuda), () -> NDArray.empty(DType.UINT16, 5));
             BufferView v = a.getBuffer(BufferFlags.STRIDED_RO | BufferFlags.DEVICE);
             Arena arena = Arena.ofConfined()) {
            BufferView back = BufferView.fromNative(v.toNative(arena), true);
            assertEquals(DeviceInfo.CUDA_DEVICE_ID, back.device());
            assertEquals(v.deviceInfo(), back.deviceInfo());
            assertThrows(UnsupportedOperationException.class, back::segment);
        }
    }
}
