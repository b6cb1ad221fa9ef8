package org.example.scratchdev;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.Device;
import io.datamem.DeviceType;
import io.datamem.MemoryKind;
import io.datamem.MemoryTraits;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.buffer.BufferDeviceHook;
import io.datamem.buffer.BufferException;
import io.datamem.buffer.BufferFlags;
import io.datamem.buffer.BufferView;
import io.datamem.buffer.StandardDeviceInfo;
import io.datamem.dlpack.CopyMode;
import io.datamem.dlpack.DLPack;
import io.datamem.dlpack.DLPackOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.OptionalLong;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Arrays on a scratch device through datamem's export protocols, which know nothing of the scratch
 * device: they read its traits and ask its {@link ScratchInterchange}. Buffers report its device id
 * and {@code device_info}; DLPack exports on {@code (kDLExtDev, 1)}, synchronises through the hook,
 * copies to the CPU through {@code copyToHost}; DLPack imports on the device get the hook from the
 * provider ({@code interchangeFor}).
 */
class ScratchExportTest {

    private static final ScratchDevice DEVICE = ScratchDevice.of(1);
    private static final Device EXT_1 = new Device(DeviceType.EXT_DEV, 1);
    private static final ScratchInterchange HOOK = DEVICE.interchange();

    private final DataMemHandler h = DataMem.handler("scratchdev:1");
    private long blocksBefore;
    private long exportsBefore;

    @BeforeEach
    void count() {
        blocksBefore = DEVICE.liveBlocks();
        exportsBefore = DLPack.outstandingExports();
    }

    @AfterEach
    void nothingLeaked() {
        assertEquals(exportsBefore, DLPack.outstandingExports(), "every DLPack export was deleted");
        assertEquals(blocksBefore, DEVICE.liveBlocks(), "every array on the device was freed");
    }

    /** A 3 x 4 float64 array on device 1 holding 0.5, 1.5, ..., 11.5. */
    private NDArray deviceArray() {
        NDArray a = DataMem.callWith(h, () -> NDArray.empty(DType.FLOAT64, 3, 4));
        try (Arena arena = Arena.ofConfined()) {
            ScratchDevice.toDevice(a, arena.allocateFrom(JAVA_DOUBLE, ScratchTests.values(12)));
        }
        return a;
    }

    private static double[] onHost(NDArray a) {
        double[] out = new double[(int) a.size()];
        ScratchDevice.toHost(a, MemorySegment.ofArray(out));
        return out;
    }

    @Test
    void arraysOnTheDeviceHaveItsTraitsAndNoHostView() {
        try (NDArray a = deviceArray()) {
            assertSame(h, a.handler());
            MemoryTraits t = a.traits();
            assertEquals(MemoryKind.DEVICE, t.kind());
            assertEquals(EXT_1, t.device());
            assertFalse(t.hostAccessible());
            assertEquals(0, a.address() % ScratchDevice.BYTE_ALIGNMENT);
            assertArrayEquals(ScratchTests.values(12), onHost(a));
            UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
                    () -> a.getDouble(0, 0));
            assertTrue(e.getMessage().contains("ext_dev:1") && e.getMessage().contains("scratchdev:1"),
                    e.getMessage());
            assertThrows(UnsupportedOperationException.class, a::segment);
            assertThrows(UnsupportedOperationException.class, () -> ScratchDevice.toDevice(a.asReadOnly(),
                    MemorySegment.ofArray(new double[12])));
            assertThrows(IllegalArgumentException.class, () -> ScratchDevice.toHost(a, MemorySegment.ofArray(
                    new double[11])), "the host target is too small");
            assertThrows(IllegalArgumentException.class, () -> ScratchDevice.toHost(a.transpose(),
                    MemorySegment.ofArray(new double[12])), "not C-contiguous");
        }
        try (NDArray host = NDArray.zeros(DType.FLOAT64, 2)) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> ScratchDevice.toHost(host, MemorySegment.ofArray(new double[2])));
            assertTrue(e.getMessage().contains("not on a scratch device"), e.getMessage());
        }
    }

    @Test
    void deviceBuffersReportTheBackendsIdAndDeviceInfo() {
        try (NDArray a = deviceArray(); Arena arena = Arena.ofConfined()) {
            try (BufferView v = a.getBuffer(BufferFlags.FULL_RO | BufferFlags.DEVICE)) {
                assertEquals(ScratchInterchange.DEVICE_ID, v.device());
                StandardDeviceInfo info = assertInstanceOf(StandardDeviceInfo.class, v.deviceInfo());
                assertEquals(new StandardDeviceInfo(EXT_1, MemoryKind.DEVICE, 0, 0, 0), info);
                assertEquals(info, StandardDeviceInfo.fromNative(info.toNative(arena)), "its native form reads back");
                assertEquals(a.address(), v.address());
                assertEquals(96, v.len());
                assertArrayEquals(new long[] {3, 4}, v.shape());
                assertEquals("d", v.format());
                assertThrows(UnsupportedOperationException.class, v::segment, "no host view of device memory");
                assertThrows(IllegalStateException.class, a::close, "the held buffer pins the array");
            }
            for (int flags : new int[] {BufferFlags.FULL_RO, BufferFlags.SIMPLE, BufferFlags.STRIDES}) {
                BufferException e = assertThrows(BufferException.class, () -> a.getBuffer(flags));
                assertTrue(e.getMessage().contains("DEVICE not requested") && e.getMessage().contains("ext_dev:1"),
                        e.getMessage());
            }
            try (BufferView row = a.select(0, 2).getBuffer(BufferFlags.FULL_RO | BufferFlags.DEVICE)) {
                assertEquals(a.address() + 64, row.address(), "a view's buffer: a pointer inside the block");
                assertEquals(ScratchInterchange.DEVICE_ID, row.device());
            }
        }
    }

    @Test
    void dlpackSharesTheMemoryOnTheDeviceAndSynchronisesThroughTheHook() {
        try (NDArray a = deviceArray()) {
            assertEquals(EXT_1, DLPack.dlpackDevice(a));
            int before = HOOK.synchronizations().size();
            MemorySegment m = DLPack.toDLPack(a, 1);
            assertEquals(DeviceType.EXT_DEV.code(), m.get(JAVA_INT, 32 + 8));
            assertEquals(1, m.get(JAVA_INT, 32 + 12));
            assertEquals(a.address(), m.get(JAVA_LONG, 32));
            assertEquals(0, m.get(JAVA_LONG, 24), "shared: neither copied nor read-only");
            DLPack.release(m, true);
            DLPack.release(DLPack.toDLPack(a, DLPackOptions.defaults().withStream(7)), true);
            DLPack.release(DLPack.toDLPack(a, DLPackOptions.defaults().withStream(-1)), true);
            assertEquals(List.of(OptionalLong.empty(), OptionalLong.of(7)),
                    HOOK.synchronizations().subList(before, HOOK.synchronizations().size()),
                    "None and 7 reach the backend; -1 asks for nothing");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> DLPack.toDLPack(a, DLPackOptions.defaults().withStream(0)));
            assertTrue(e.getMessage().contains("stream: 0"), e.getMessage());
            BufferException onDevice = assertThrows(BufferException.class,
                    () -> DLPack.toDLPack(a, DLPackOptions.defaults().withCopy(CopyMode.ALWAYS)));
            assertTrue(onDevice.getMessage().contains("needs a copy on the device"), onDevice.getMessage());
        }
    }

    @Test
    void dlpackToTheCpuCopiesThroughCopyToHost() {
        try (NDArray a = deviceArray()) {
            long copied = HOOK.bytesCopiedToHost();
            MemorySegment m = DLPack.toDLPack(a, DLPackOptions.defaults().withDlDevice(Device.CPU));
            assertEquals(96, HOOK.bytesCopiedToHost() - copied, "the whole array went through copyToHost");
            assertEquals(DLPack.FLAG_IS_COPIED, m.get(JAVA_LONG, 24));
            assertEquals(DeviceType.CPU.code(), m.get(JAVA_INT, 32 + 8));
            try (NDArray back = DLPack.fromDLPack(m, true)) {
                assertEquals(MemoryKind.HOST, back.traits().kind());
                assertArrayEquals(ScratchTests.values(12), back.toDoubleArray());
            }
            MemorySegment t = DLPack.toDLPack(a.transpose(), DLPackOptions.defaults().withDlDevice(Device.CPU)
                    .withCopy(CopyMode.ALWAYS));
            try (NDArray back = DLPack.fromDLPack(t, true)) {
                assertArrayEquals(new long[] {4, 3}, back.shape());
                assertEquals(4.5, back.getDouble(0, 1), "the strided copy, staged through copyToHost, keeps the order");
                assertEquals(11.5, back.getDouble(3, 2));
            }
            BufferException never = assertThrows(BufferException.class, () -> DLPack.toDLPack(a,
                    DLPackOptions.defaults().withDlDevice(Device.CPU).withCopy(CopyMode.NEVER)));
            assertTrue(never.getMessage().contains("NEVER"), never.getMessage());
        }
    }

    @Test
    void dlpackImportsOnTheDeviceGetTheBackendsHookFromItsProvider() {
        try (NDArray a = deviceArray()) {
            try (NDArray imported = DLPack.fromDLPack(DLPack.toDLPack(a, 1), true)) {
                assertEquals(DLPack.HANDLER_NAME, imported.handler().name());
                MemoryTraits t = imported.traits();
                assertEquals(MemoryKind.DEVICE, t.kind());
                assertEquals(EXT_1, t.device());
                assertSame(HOOK, t.interchange(), "interchangeFor gave device 1's hook");
                assertSame(HOOK, t.hook(BufferDeviceHook.class).orElseThrow());
                assertEquals(EXT_1, DLPack.dlpackDevice(imported));
                assertEquals(a.address(), imported.address(), "no copy");
                assertArrayEquals(ScratchTests.values(12), onHost(imported));
                try (BufferView v = imported.getBuffer(BufferFlags.FULL_RO | BufferFlags.DEVICE)) {
                    assertEquals(ScratchInterchange.DEVICE_ID, v.device());
                    assertEquals(EXT_1, ((StandardDeviceInfo) v.deviceInfo()).device());
                }
                try (NDArray back = DLPack.fromDLPack(DLPack.toDLPack(imported,
                        DLPackOptions.defaults().withDlDevice(Device.CPU)), true)) {
                    assertArrayEquals(ScratchTests.values(12), back.toDoubleArray(), "re-exported to the CPU");
                }
                assertThrows(IllegalStateException.class, a::close, "the import holds the export's pin");
            }
            NDArray row = a.select(0, 1);
            try (NDArray imported = DLPack.fromDLPack(DLPack.toDLPack(row, 1), true)) {
                assertEquals(a.address() + 32, imported.address(), "a block inside the device's block");
                assertSame(HOOK, imported.traits().interchange());
                assertArrayEquals(new double[] {4.5, 5.5, 6.5, 7.5}, onHost(imported));
            }
        }
    }

    /**
     * A {@code DLManagedTensorVersioned} of {@code n} float64 over {@code data} on a device, with
     * no deleter (the memory stays the test's).
     */
    private static MemorySegment tensor(Arena arena, Device device, MemorySegment data, long n) {
        MemorySegment m = arena.allocate(DLPack.DL_MANAGED_TENSOR_VERSIONED);
        MemorySegment shape = arena.allocateFrom(JAVA_LONG, n);
        m.set(JAVA_INT, 0, DLPack.MAJOR_VERSION);
        m.set(JAVA_INT, 4, DLPack.MINOR_VERSION);
        m.set(ADDRESS, 16, MemorySegment.NULL);
        m.set(JAVA_LONG, 32, data.address());
        m.set(JAVA_INT, 40, device.type().code());
        m.set(JAVA_INT, 44, device.id());
        m.set(JAVA_INT, 48, 1);
        m.set(JAVA_BYTE, 52, (byte) DType.FLOAT64.dlpackCode());
        m.set(JAVA_BYTE, 53, (byte) 64);
        m.set(JAVA_SHORT, 54, (short) 1);
        m.set(ADDRESS, 56, shape);
        return m;
    }

    @Test
    void importsOfMemoryTheDeviceDoesNotHoldGetNoHook() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment host = arena.allocateFrom(JAVA_DOUBLE, 1, 2, 3, 4);
            try (NDArray fake = DLPack.fromDLPack(tensor(arena, new Device(DeviceType.EXT_DEV, 1), host, 4), true)) {
                assertNull(fake.traits().interchange(), "the provider answers only for blocks its device holds");
                BufferException e = assertThrows(BufferException.class,
                        () -> fake.getBuffer(BufferFlags.FULL_RO | BufferFlags.DEVICE));
                assertTrue(e.getMessage().contains("gives no BufferDeviceHook"), e.getMessage());
                BufferException copy = assertThrows(BufferException.class,
                        () -> DLPack.toDLPack(fake, DLPackOptions.defaults().withDlDevice(Device.CPU)));
                assertTrue(copy.getMessage().contains("no DeviceInterchange to copy it to the host"), copy.getMessage());
            }
            Device unmanaged = new Device(DeviceType.EXT_DEV, ScratchDevice.COUNT + 5);
            try (NDArray other = DLPack.fromDLPack(tensor(arena, unmanaged, host, 4), true)) {
                assertNull(other.traits().interchange(), "no provider manages " + unmanaged);
                assertTrue(other.traits().hook(BufferDeviceHook.class).isEmpty());
                BufferException e = assertThrows(BufferException.class,
                        () -> other.getBuffer(BufferFlags.FULL_RO | BufferFlags.DEVICE));
                assertTrue(e.getMessage().contains("gives no BufferDeviceHook"), e.getMessage());
            }
        }
    }

    @Test
    void closedArraysExportNothing() {
        NDArray a = deviceArray();
        a.close();
        assertThrows(IllegalStateException.class, () -> DLPack.toDLPack(a, 1));
        assertThrows(IllegalStateException.class, () -> DLPack.dlpackDevice(a));
        assertThrows(IllegalStateException.class, () -> a.getBuffer(BufferFlags.FULL_RO | BufferFlags.DEVICE));
        assertThrows(IllegalStateException.class, () -> a.whileHeld(() -> "never"));
        assertThrows(IllegalStateException.class, () -> ScratchDevice.toHost(a, MemorySegment.ofArray(new double[12])));
        assertThrows(IllegalStateException.class,
                () -> ScratchDevice.toDevice(a, MemorySegment.ofArray(new double[12])));
    }
}
