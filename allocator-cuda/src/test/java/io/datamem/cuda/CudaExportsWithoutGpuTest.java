package io.datamem.cuda;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.Device;
import io.datamem.DeviceType;
import io.datamem.MemoryKind;
import io.datamem.MemoryTraits;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.buffer.BufferException;
import io.datamem.buffer.BufferFlags;
import io.datamem.buffer.BufferView;
import io.datamem.buffer.DeviceInfo;
import io.datamem.buffer.StandardDeviceInfo;
import io.datamem.cuda.internal.CudaInterchange;
import io.datamem.dlpack.CopyMode;
import io.datamem.dlpack.DLPack;
import io.datamem.dlpack.DLPackOptions;
import io.datamem.internal.Libc;
import io.datamem.DeviceInterchange;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.OptionalLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The traits of every CUDA allocator, DLPack's device mapping, buffer and DLPack exports of arrays
 * whose traits are CUDA's, and the import of CUDA DLPack tensors: without a GPU, over host memory
 * that reports CUDA traits, and without binding the CUDA driver. Runs on GPU machines too, where the two
 * exports that need CUDA succeed instead of saying it is unavailable.
 */
class CudaExportsWithoutGpuTest {

    private static boolean boundBefore;

    @BeforeAll
    static void before() {
        boundBefore = CudaTests.driverBound();
    }

    @AfterAll
    static void nothingLoaded() {
        if (!boundBefore && !Cuda.isAvailable()) {
            assertFalse(CudaTests.driverBound(), "exports of CUDA-described memory bound the CUDA driver without a GPU");
        }
    }

    private static NDArray array(MemoryTraits traits, long... shape) {
        DataMemHandler h = DataMemHandler.of("fake " + traits.kind(), CudaTests.hostBacked(traits));
        return DataMem.callWith(h, () -> NDArray.zeros(DType.FLOAT64, shape));
    }

    @Test
    void traitsOfEveryAllocator() {
        MemoryTraits device = CudaDeviceAllocator.traits(1);
        assertEquals(MemoryKind.DEVICE, device.kind());
        assertEquals(new Device(DeviceType.CUDA, 1), device.device());
        assertFalse(device.hostAccessible());
        assertEquals(256, device.byteAlignment());
        assertEquals(2L << 20, device.pageSize());
        assertInstanceOf(CudaInterchange.class, device.interchange());
        assertEquals(DeviceInfo.CUDA_DEVICE_ID, device.hook(io.datamem.buffer.BufferDeviceHook.class).orElseThrow().bufferDeviceId());

        MemoryTraits pinned = CudaPinnedAllocator.traits(0);
        assertEquals(MemoryKind.HOST_PINNED, pinned.kind());
        assertEquals(new Device(DeviceType.CUDA_HOST, 0), pinned.device());
        assertTrue(pinned.hostAccessible());
        assertEquals(256, pinned.byteAlignment());
        assertEquals(Libc.pageSize(), pinned.pageSize());

        MemoryTraits managed = CudaManagedAllocator.traits(2);
        assertEquals(MemoryKind.MANAGED, managed.kind());
        assertEquals(new Device(DeviceType.CUDA_MANAGED, 2), managed.device());
        assertTrue(managed.hostAccessible());

        MemoryTraits upstream = DataMem.handler("aligned:4096").allocator().traits().withPageSize(2L << 20);
        MemoryTraits registered = CudaRegisteredAllocator.refine(upstream, 3);
        assertEquals(MemoryKind.HOST_PINNED, registered.kind());
        assertEquals(new Device(DeviceType.CUDA_HOST, 3), registered.device());
        assertTrue(registered.hostAccessible());
        assertEquals(4096, registered.byteAlignment(), "the upstream's alignment");
        assertEquals(2L << 20, registered.pageSize(), "the upstream's pages (huge pages stay huge)");
        assertSame(CudaInterchange.of(MemoryKind.HOST_PINNED, 3), registered.interchange());

        assertThrows(IllegalArgumentException.class, () -> CudaInterchange.device(MemoryKind.HOST, 0));
        assertThrows(IllegalArgumentException.class, () -> CudaDeviceAllocator.traits(-1));
    }

    @Test
    void dlpackDevicesOfEachKind() {
        assertEquals(new Device(DeviceType.CUDA, 0), CudaInterchange.device(MemoryKind.DEVICE, 0));
        assertEquals(2, CudaInterchange.device(MemoryKind.DEVICE, 0).type().code(), "kDLCUDA");
        assertEquals(3, CudaInterchange.device(MemoryKind.HOST_PINNED, 1).type().code(), "kDLCUDAHost");
        assertEquals(13, CudaInterchange.device(MemoryKind.MANAGED, 1).type().code(), "kDLCUDAManaged");
        try (NDArray d = array(CudaDeviceAllocator.traits(1), 3, 4);
             NDArray p = array(CudaPinnedAllocator.traits(0), 3);
             NDArray m = array(CudaManagedAllocator.traits(2), 3)) {
            assertEquals(new Device(DeviceType.CUDA, 1), DLPack.dlpackDevice(d));
            assertEquals(new Device(DeviceType.CUDA_HOST, 0), DLPack.dlpackDevice(p));
            assertEquals(new Device(DeviceType.CUDA_MANAGED, 2), DLPack.dlpackDevice(m));
        }
    }

    @Test
    void deviceArraysHaveNoHostViewAndSayHowToCopy() {
        try (NDArray d = array(CudaDeviceAllocator.traits(0), 8)) {
            UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class, () -> d.getDouble(0));
            assertTrue(e.getMessage().contains("CudaMemory.toHost(array)"), e.getMessage());
            assertThrows(UnsupportedOperationException.class, d::segment);
        }
    }

    @Test
    void bufferExports() {
        try (NDArray d = array(CudaDeviceAllocator.traits(1), 2, 3)) {
            BufferException refused = assertThrows(BufferException.class, () -> d.getBuffer(BufferFlags.FULL_RO));
            assertEquals(BufferFlags.DEVICE, refused.flag());
            try (BufferView v = d.getBuffer(BufferFlags.FULL_RO | BufferFlags.DEVICE)) {
                assertEquals(DeviceInfo.CUDA_DEVICE_ID, v.device());
                assertEquals(BufferFlags.DEVICE, v.flags());
                StandardDeviceInfo info = assertInstanceOf(StandardDeviceInfo.class, v.deviceInfo());
                assertEquals(1, info.version());
                assertEquals(new Device(DeviceType.CUDA, 1), info.device());
                assertEquals(MemoryKind.DEVICE, info.kind());
                assertEquals(0, info.stream(), "no asynchronous work recorded: the default stream");
                assertEquals(d.address(), v.address());
            }
        }
        for (MemoryTraits hostVisible : new MemoryTraits[] {CudaPinnedAllocator.traits(0),
                CudaManagedAllocator.traits(0)}) {
            try (NDArray a = array(hostVisible, 4); BufferView cpu = a.getBuffer(BufferFlags.FULL_RO);
                 BufferView ext = a.getBuffer(BufferFlags.FULL_RO | BufferFlags.DEVICE)) {
                assertNull(cpu.device(), "pinned and managed memory are CPU buffers");
                assertNull(ext.device(), "also when DEVICE is requested: the host can dereference it");
                assertEquals(BufferFlags.DEVICE, ext.flags());
                assertEquals(0.0, a.getDouble(3));
            }
        }
    }

    @Test
    void dlpackExportFollowsTheStreamRulesWithoutTouchingCuda() {
        try (NDArray d = array(CudaDeviceAllocator.traits(1), 5)) {
            MemorySegment t = DLPack.toDLPack(d, 1);   // stream None: legacy default, nothing to order
            try {
                assertEquals(2, t.reinterpret(80).get(ValueLayout.JAVA_INT, 40), "kDLCUDA");
                assertEquals(1, t.reinterpret(80).get(ValueLayout.JAVA_INT, 44), "device id");
            } finally {
                DLPack.release(t, true);
            }
            DLPackOptions legacy = DLPackOptions.defaults().withStream(1);
            DLPack.release(DLPack.toDLPack(d, legacy), true);
            DLPack.release(DLPack.toDLPack(d, DLPackOptions.defaults().withStream(-1)), true);
            IllegalArgumentException zero = assertThrows(IllegalArgumentException.class,
                    () -> DLPack.toDLPack(d, DLPackOptions.defaults().withStream(0)));
            assertTrue(zero.getMessage().contains("DLPack forbids 0 for CUDA"), zero.getMessage());
            assertThrows(IllegalArgumentException.class, () -> DLPack.toDLPack(d, DLPackOptions.defaults()
                    .withStream(-7)));
            if (Cuda.isAvailable()) {   // a GPU machine: ordering and the copy go through CUDA
                DLPack.release(DLPack.toDLPack(d, DLPackOptions.defaults().withStream(2)), true);
                DLPack.release(DLPack.toDLPack(d, DLPackOptions.defaults().withDlDevice(Device.CPU)), true);
            } else {
                IllegalStateException needsCuda = assertThrows(IllegalStateException.class,
                        () -> DLPack.toDLPack(d, DLPackOptions.defaults().withStream(2)));
                assertTrue(needsCuda.getMessage().startsWith("CUDA is unavailable"), needsCuda.getMessage());
                assertThrows(IllegalStateException.class, () -> DLPack.toDLPack(d, DLPackOptions.defaults()
                        .withDlDevice(Device.CPU)), "a copy to the host needs CUDA");
            }
            assertEquals(0, DLPack.outstandingExports(), "refused and released exports hold nothing");
        }
    }

    @Test
    void pinnedAndManagedExportAsCpuTensorsWhenAsked() {
        try (NDArray p = array(CudaPinnedAllocator.traits(0), 4)) {
            p.setDouble(2.5, 1);
            MemorySegment own = DLPack.toDLPack(p, 1);
            MemorySegment cpu = DLPack.toDLPack(p, DLPackOptions.defaults().withDlDevice(Device.CPU)
                    .withCopy(CopyMode.NEVER));
            try {
                assertEquals(3, own.reinterpret(80).get(ValueLayout.JAVA_INT, 40), "kDLCUDAHost");
                assertEquals(1, cpu.reinterpret(80).get(ValueLayout.JAVA_INT, 40), "kDLCPU, shared without a copy");
                assertEquals(p.address(), cpu.reinterpret(80).get(ValueLayout.JAVA_LONG, 32));
            } finally {
                DLPack.release(own, true);
                DLPack.release(cpu, true);
            }
        }
    }

    @Test
    void importedCudaTensorsReportDeviceTraits() {
        NDArray d = array(CudaDeviceAllocator.traits(1), 2, 2);
        NDArray imported = DLPack.fromDLPack(DLPack.toDLPack(d, 1), true);
        MemoryTraits t = imported.traits();
        assertEquals(MemoryKind.DEVICE, t.kind());
        assertEquals(new Device(DeviceType.CUDA, 1), t.device());
        assertFalse(t.hostAccessible());
        assertEquals(new Device(DeviceType.CUDA, 1), DLPack.dlpackDevice(imported));
        UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
                () -> imported.getDouble(0, 0));
        assertTrue(e.getMessage().contains("CudaMemory"), e.getMessage());
        assertTrue(CudaMemory.isCuda(t), "CudaMemory copies imported CUDA arrays");
        assertSame(CudaInterchange.of(MemoryKind.DEVICE, 1), t.interchange(), "the CUDA hook is attached on import");
        try (BufferView v = imported.getBuffer(BufferFlags.STRIDES | BufferFlags.DEVICE)) {
            assertEquals(DeviceInfo.CUDA_DEVICE_ID, v.device(), "imported device memory exports as CUDA memory");
        }
        imported.close();
        d.close();

        NDArray p = array(CudaPinnedAllocator.traits(0), 3);
        p.setDouble(7.0, 2);
        NDArray pi = DLPack.fromDLPack(DLPack.toDLPack(p, 1), true);
        assertEquals(MemoryKind.HOST_PINNED, pi.traits().kind());
        assertEquals(new Device(DeviceType.CUDA_HOST, 0), pi.traits().device());
        assertEquals(7.0, pi.getDouble(2), "host-accessible: readable in place");
        assertSame(CudaInterchange.of(MemoryKind.HOST_PINNED, 0), pi.traits().interchange());
        pi.close();
        p.close();

        NDArray m = array(CudaManagedAllocator.traits(2), 3);
        NDArray mi = DLPack.fromDLPack(DLPack.toDLPack(m, 1), true);
        assertEquals(MemoryKind.MANAGED, mi.traits().kind());
        assertEquals(new Device(DeviceType.CUDA_MANAGED, 2), mi.traits().device());
        mi.close();
        m.close();
    }

    @Test
    void theProviderLendsItsHookForCudaDevicesOnly() {
        io.datamem.cuda.provider.CudaProvider provider = new io.datamem.cuda.provider.CudaProvider();
        assertSame(CudaInterchange.of(MemoryKind.DEVICE, 3), provider.interchangeFor(new Device(DeviceType.CUDA, 3))
                .orElseThrow());
        assertSame(CudaInterchange.of(MemoryKind.HOST_PINNED, 0),
                provider.interchangeFor(new Device(DeviceType.CUDA_HOST, 0)).orElseThrow());
        assertSame(CudaInterchange.of(MemoryKind.MANAGED, 0),
                provider.interchangeFor(new Device(DeviceType.CUDA_MANAGED, 0)).orElseThrow());
        assertTrue(provider.interchangeFor(new Device(DeviceType.ONE_API, 0)).isEmpty());
        assertTrue(provider.interchangeFor(new Device(DeviceType.ROCM, 0)).isEmpty());
        assertTrue(provider.interchangeFor(Device.CPU).isEmpty());
    }

    @Test
    void theInterchangeHookIsOnePerKindAndDevice() {
        DeviceInterchange a = CudaInterchange.of(MemoryKind.DEVICE, 0);
        assertSame(a, CudaInterchange.of(MemoryKind.DEVICE, 0));
        assertFalse(a == CudaInterchange.of(MemoryKind.DEVICE, 1));
        assertFalse(a == CudaInterchange.of(MemoryKind.MANAGED, 0));
        assertEquals("CudaInterchange[DEVICE on cuda:0]", a.toString());
        assertThrows(IllegalArgumentException.class, () -> a.copyToHost(MemorySegment.ofAddress(8), 0,
                MemorySegment.ofArray(new byte[8]), 8), "heap targets are refused before any CUDA call");
        assertThrows(IllegalArgumentException.class, () -> a.synchronize(MemorySegment.ofAddress(8),
                OptionalLong.of(0)));
    }
}
