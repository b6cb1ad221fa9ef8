package org.example.scratchdev;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.Device;
import io.datamem.MemoryKind;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.buffer.BufferFlags;
import io.datamem.buffer.BufferView;
import io.datamem.buffer.StandardDeviceInfo;
import io.datamem.dlpack.DLPack;
import io.datamem.dlpack.DLPackOptions;
import io.datamem.impl.pool.PoolingAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code pool(scratchdev)}: datamem's pool over the scratch device keeps the device's traits and
 * hook for its blocks (pointers inside the device's blocks), and moves a block across size classes
 * with the backend's {@code copyWithinDevice}, since the host cannot copy device memory.
 */
class ScratchPoolTest {

    private static final ScratchDevice DEVICE = ScratchDevice.of(0);
    private static final ScratchInterchange HOOK = DEVICE.interchange();

    private long blocksBefore;
    private DataMemHandler handler;
    private PoolingAllocator pool;

    @BeforeEach
    void openPool() {
        blocksBefore = DEVICE.liveBlocks();
        handler = DataMem.createHandler("pool(scratchdev)");
        pool = assertInstanceOf(PoolingAllocator.class, handler.allocator());
    }

    @AfterEach
    void everySlabGoesBack() {
        pool.close();
        assertEquals(0, pool.statistics().runByteSize());
        assertEquals(blocksBefore, DEVICE.liveBlocks(), "the pool gave every slab back to the device");
    }

    @Test
    void theHookReachesPooledBlocks() {
        assertSame(HOOK, pool.traits().interchange());
        assertEquals(MemoryKind.DEVICE, pool.traits().kind());
        assertEquals(DEVICE.device(), pool.traits().device());
        assertInstanceOf(ScratchAllocator.class, pool.upstream());
    }

    @Test
    void reallocAcrossSizeClassesCopiesWithinTheDevice() {
        byte[] data = new byte[100];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) (i * 7);
        }
        MemorySegment p = pool.malloc(100);
        ScratchTests.write(DEVICE, p, 0, data);
        long copied = HOOK.bytesCopiedWithinDevice();
        MemorySegment q = pool.realloc(p, 100, 5000);
        assertNotEquals(p.address(), q.address(), "another size class, another block");
        assertEquals(100, HOOK.bytesCopiedWithinDevice() - copied, "the kept bytes moved through copyWithinDevice");
        assertArrayEquals(data, ScratchTests.read(DEVICE, q, 0, 100));
        MemorySegment r = pool.realloc(q, 5000, 40);
        assertArrayEquals(Arrays.copyOf(data, 40), ScratchTests.read(DEVICE, r, 0, 40));
        pool.free(r, 40);
    }

    @Test
    void pooledArraysResizeOnTheDeviceAndExportAsItsMemory() {
        try (NDArray a = DataMem.callWith(handler, () -> NDArray.empty(DType.FLOAT64, 4))) {
            ScratchDevice.toDevice(a, MemorySegment.ofArray(ScratchTests.values(4)));
            long copied = HOOK.bytesCopiedWithinDevice();
            a.resize(100);
            assertEquals(32, HOOK.bytesCopiedWithinDevice() - copied);
            double[] all = new double[100];
            ScratchDevice.toHost(a, MemorySegment.ofArray(all));
            assertArrayEquals(ScratchTests.values(4), Arrays.copyOf(all, 4), "resize kept the elements");

            try (BufferView v = a.getBuffer(BufferFlags.FULL_RO | BufferFlags.DEVICE)) {
                assertEquals(ScratchInterchange.DEVICE_ID, v.device());
                assertEquals(DEVICE.device(), ((StandardDeviceInfo) v.deviceInfo()).device(),
                        "device_info of a block inside a slab");
            }
            try (NDArray back = DLPack.fromDLPack(DLPack.toDLPack(a,
                    DLPackOptions.defaults().withDlDevice(Device.CPU)), true)) {
                assertArrayEquals(ScratchTests.values(4), Arrays.copyOf(back.toDoubleArray(), 4));
            }
            assertTrue(pool.statistics().usedByteSize() > 0);
        }
        assertEquals(0, pool.statistics().usedByteSize());
    }
}
