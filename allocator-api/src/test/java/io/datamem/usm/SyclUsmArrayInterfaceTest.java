package io.datamem.usm;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.Device;
import io.datamem.DeviceType;
import io.datamem.MemoryKind;
import io.datamem.MemoryTraits;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.array.Slice;
import io.datamem.buffer.BufferException;
import io.datamem.buffer.BufferFlags;
import io.datamem.buffer.BufferView;
import io.datamem.buffer.DeviceInfo;
import io.datamem.testing.CountingAllocator;
import io.datamem.testing.FakeDeviceAllocator;
import io.datamem.testing.Nep49SampleAllocator;
import io.datamem.testing.WithTraits;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** dpctl's SYCL USM array interface, from arrays on (fake) SYCL USM memory. */
class SyclUsmArrayInterfaceTest {

    private final Nep49SampleAllocator sample = new Nep49SampleAllocator();
    private final CountingAllocator counting = new CountingAllocator(sample);

    @AfterEach
    void nothingLeaks() {
        assertEquals(0, counting.liveBlocks());
    }

    private DataMemHandler usm(MemoryKind kind) {
        return DataMemHandler.of("fake-usm-" + kind.name().toLowerCase(), FakeDeviceAllocator.sycl(counting, kind));
    }

    @Test
    void describesAContiguousArray() {
        for (MemoryKind kind : List.of(MemoryKind.HOST_PINNED, MemoryKind.MANAGED, MemoryKind.DEVICE)) {
            try (NDArray a = DataMem.callWith(usm(kind), () -> NDArray.empty(DType.FLOAT32, 2, 3))) {
                SyclUsmArrayInterface i = SyclUsmArrayInterface.of(a);
                assertEquals(List.of(2L, 3L), i.shape());
                assertEquals("<f4", i.typestr());
                assertEquals(List.of(new SyclUsmArrayInterface.TypeDescr("", "<f4")), i.typedescr());
                assertEquals(new SyclUsmArrayInterface.Data(a.address(), false), i.data());
                assertNull(i.strides(), "None: C-contiguous");
                assertEquals(0, i.offset());
                assertEquals(1, i.version());
                assertEquals(new SyclObject.Queue(FakeDeviceAllocator.QUEUE), i.syclobj());

                Map<String, Object> m = i.toMap();
                assertEquals(SyclUsmArrayInterface.KEYS, new ArrayList<>(m.keySet()), "exactly dpctl's keys");
                assertEquals(List.of(2L, 3L), m.get("shape"));
                assertEquals("<f4", m.get("typestr"));
                assertEquals(List.of(List.of("", "<f4")), m.get("typedescr"));
                assertEquals(List.of(a.address(), false), m.get("data"));
                assertTrue(m.containsKey("strides"));
                assertNull(m.get("strides"));
                assertEquals(0L, m.get("offset"));
                assertEquals(1, m.get("version"));
                assertEquals(i.syclobj(), m.get("syclobj"));
                assertThrows(UnsupportedOperationException.class, () -> m.put("extra", 1));
            }
        }
    }

    @Test
    void stridesAndOffsetCountElements() {
        try (NDArray base = DataMem.callWith(usm(MemoryKind.MANAGED), () -> NDArray.zeros(DType.INT16, 4, 6))) {
            NDArray view = base.slice(Slice.range(1, 4, 2), Slice.every(-2)).asReadOnly();
            SyclUsmArrayInterface i = SyclUsmArrayInterface.of(view);
            assertEquals(base.address(), i.data().pointer(), "data is the USM allocation");
            assertTrue(i.data().readOnly());
            assertEquals(List.of(2L, 3L), i.shape());
            assertEquals(List.of(12L, -2L), i.strides());
            assertEquals(11, i.offset(), "row 1, column 5: element 6 + 5");
            assertEquals(view.address(), i.data().pointer() + i.offset() * 2);
        }
    }

    @Test
    void hostAndSharedUsmAreCpuBuffersButDeviceUsmIsNot() {
        for (MemoryKind kind : List.of(MemoryKind.HOST_PINNED, MemoryKind.MANAGED)) {
            try (NDArray a = DataMem.callWith(usm(kind), () -> NDArray.zeros(DType.INT32, 3));
                 BufferView v = a.getBuffer(BufferFlags.FULL)) {
                assertNull(v.device());
                assertEquals(12, v.segment().byteSize());
                assertEquals(UsmKind.of(kind).hostAccessible(), true);
            }
        }
        try (NDArray a = DataMem.callWith(usm(MemoryKind.DEVICE), () -> NDArray.empty(DType.INT32, 3))) {
            BufferException e = assertThrows(BufferException.class, () -> a.getBuffer(BufferFlags.FULL_RO));
            assertEquals(BufferFlags.DEVICE, e.flag());
            try (BufferView v = a.getBuffer(BufferFlags.FULL_RO | BufferFlags.DEVICE)) {
                assertEquals(DeviceInfo.SYCL_DEVICE_ID, v.device());
            }
        }
    }

    @Test
    void onlySyclMemoryHasTheInterface() {
        DataMemHandler plain = DataMemHandler.of("plain", counting);
        try (NDArray a = DataMem.callWith(plain, () -> NDArray.zeros(DType.INT8, 2))) {
            BufferException e = assertThrows(BufferException.class, () -> SyclUsmArrayInterface.of(a));
            assertTrue(e.getMessage().contains("not on SYCL USM memory"), e.getMessage());
        }
        DataMemHandler cuda = DataMemHandler.of("fake-cuda", FakeDeviceAllocator.cudaDevice(counting));
        try (NDArray a = DataMem.callWith(cuda, () -> NDArray.empty(DType.INT8, 2))) {
            assertThrows(BufferException.class, () -> SyclUsmArrayInterface.of(a));
        }
        DataMemHandler noHook = DataMemHandler.of("sycl-without-hook", new WithTraits(counting,
                new MemoryTraits(MemoryKind.MANAGED, new Device(DeviceType.ONE_API, 0), true, 16, 4096)));
        try (NDArray a = DataMem.callWith(noHook, () -> NDArray.zeros(DType.INT8, 2))) {
            BufferException e = assertThrows(BufferException.class, () -> SyclUsmArrayInterface.of(a));
            assertTrue(e.getMessage().contains("syclobj"), e.getMessage());
        }
        assertThrows(IllegalStateException.class, () -> {
            NDArray closed = DataMem.callWith(usm(MemoryKind.MANAGED), () -> NDArray.zeros(DType.INT8, 2));
            closed.close();
            SyclUsmArrayInterface.of(closed);
        });
    }

    @Test
    void misalignedLayoutsCannotBeCountedInElements() {
        DataMemHandler h = usm(MemoryKind.MANAGED);
        MemorySegment block = h.allocator().malloc(16);
        try (NDArray a = NDArray.adopt(h, block, 16, DType.FLOAT32, new long[] {3}, null, 2)) {
            BufferException e = assertThrows(BufferException.class, () -> SyclUsmArrayInterface.of(a));
            assertTrue(e.getMessage().contains("offset"), e.getMessage());
        }
        MemorySegment block2 = h.allocator().malloc(16);
        try (NDArray a = NDArray.adopt(h, block2, 16, DType.INT16, new long[] {3}, new long[] {3}, 0)) {
            BufferException e = assertThrows(BufferException.class, () -> SyclUsmArrayInterface.of(a));
            assertTrue(e.getMessage().contains("stride"), e.getMessage());
        }
    }

    @Test
    void recordValidation() {
        SyclObject q = new SyclObject.Queue(1);
        var data = new SyclUsmArrayInterface.Data(0x1000, false);
        List<SyclUsmArrayInterface.TypeDescr> descr = List.of(new SyclUsmArrayInterface.TypeDescr("", "|b1"));
        assertThrows(IllegalArgumentException.class,
                () -> new SyclUsmArrayInterface(List.of(-1L), "|b1", descr, data, null, 0, 1, q));
        assertThrows(IllegalArgumentException.class,
                () -> new SyclUsmArrayInterface(List.of(1L), "|b1", descr, data, List.of(1L, 1L), 0, 1, q));
        assertThrows(IllegalArgumentException.class,
                () -> new SyclUsmArrayInterface(List.of(1L), "|b1", descr, data, null, -1, 1, q));
        assertThrows(IllegalArgumentException.class,
                () -> new SyclUsmArrayInterface(List.of(1L), " ", descr, data, null, 0, 1, q));
        assertThrows(NullPointerException.class,
                () -> new SyclUsmArrayInterface(List.of(1L), "|b1", descr, data, null, 0, 1, null));
        assertThrows(IllegalArgumentException.class, () -> new SyclObject.Queue(0));
        assertEquals("SyclQueueRef", new SyclObject.Queue(1).capsuleName());
        SyclObject.NativeHandles h = new SyclObject.NativeHandles(SyclObject.NativeHandles.OPENCL, 1, 2, 0);
        assertEquals("opencl", h.backend());
        assertEquals(0, h.queue(), "a queue is optional");
        assertThrows(NullPointerException.class, () -> new SyclObject.NativeHandles(null, 1, 2, 3));
        assertThrows(IllegalArgumentException.class, () -> new SyclObject.NativeHandles("OpenCL", 1, 2, 3));
        assertThrows(IllegalArgumentException.class, () -> new SyclObject.NativeHandles("", 1, 2, 3));
        assertThrows(IllegalArgumentException.class, () -> new SyclObject.NativeHandles("opencl", 0, 2, 3));
        assertThrows(IllegalArgumentException.class, () -> new SyclObject.NativeHandles("opencl", 1, 0, 3));
        assertEquals(List.of("host", "device", "shared", "unknown"),
                Arrays.stream(UsmKind.values()).map(UsmKind::dpctlName).toList());
        assertEquals(UsmKind.HOST, UsmKind.of(MemoryKind.HOST_PINNED));
        assertEquals(UsmKind.SHARED, UsmKind.of(MemoryKind.MANAGED));
        assertEquals(UsmKind.DEVICE, UsmKind.of(MemoryKind.DEVICE));
        assertEquals(UsmKind.UNKNOWN, UsmKind.of(MemoryKind.HOST));
    }
}
