package io.datamem.sycl;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.MemoryTraits;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.buffer.BufferFlags;
import io.datamem.buffer.BufferView;
import io.datamem.buffer.DeviceInfo;
import io.datamem.dlpack.DLPack;
import io.datamem.impl.pool.PoolingAllocator;
import io.datamem.usm.SyclObject;
import io.datamem.usm.SyclUsmArrayInterface;
import io.datamem.usm.UsmKind;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code pool(sycl:KIND)}: the pool keeps the USM allocator's traits and hook for every block, so
 * exports of pooled memory describe it as the runtime does (a block inside a slab is a USM pointer
 * of the same kind and context), and device blocks move across size classes on the device.
 */
@Tag("sycl")
class SyclPoolTest {

    private static PoolingAllocator pool(UsmKind kind) {
        SyclTests.assumeRuntime(kind);
        return assertInstanceOf(PoolingAllocator.class,
                DataMem.createHandler("pool(" + SyclTests.handlerName(kind) + ")").allocator());
    }

    private static double[] iota(int n) {
        double[] v = new double[n];
        for (int i = 0; i < n; i++) {
            v[i] = i * 0.5;
        }
        return v;
    }

    @ParameterizedTest
    @EnumSource(value = UsmKind.class, names = {"HOST", "SHARED", "DEVICE"})
    void everyPooledBlockKeepsTheTraitsAndHookOfItsKind(UsmKind kind) {
        PoolingAllocator pool = pool(kind);
        SyclUsmAllocator usm = assertInstanceOf(SyclUsmAllocator.class, pool.upstream());
        SyclQueue q = usm.queue();
        MemoryTraits traits = pool.traits();
        // the pool's classes start at 16 bytes: it promises its upstream's alignment up to 16
        assertEquals(usm.traits().withByteAlignment(Math.min(16, usm.traits().byteAlignment())), traits);
        assertSame(q.interchange(), traits.interchange());
        assertEquals(kind.memoryKind(), traits.kind());
        assertEquals(kind.hostAccessible(), traits.hostAccessible());
        for (long size : new long[] {1, 100, 4000, 100_000}) {
            MemorySegment p = pool.malloc(size);
            assertEquals(traits.withByteAlignment(pool.byteAlignmentOf(size)), pool.traitsOf(p),
                    "traitsOf a block of " + size + " bytes: its class's alignment");
            UsmPointerInfo info = q.pointerInfo(p);
            assertEquals(kind, info.kind(), "the runtime sees a pooled block as USM memory of the kind");
            assertTrue(info.contains(p.address()));
            pool.free(p, size);
        }
        pool.close();
        assertEquals(0, pool.statistics().runByteSize());
    }

    @ParameterizedTest
    @EnumSource(value = UsmKind.class, names = {"HOST", "SHARED", "DEVICE"})
    void pooledArraysExportThroughEveryProtocolAsUsmMemoryOfTheirKind(UsmKind kind) {
        PoolingAllocator pool = pool(kind);
        SyclQueue q = ((SyclUsmAllocator) pool.upstream()).queue();
        DataMemHandler h = new DataMemHandler("pool(" + SyclTests.handlerName(kind) + ")", 1, pool);
        long exports = DLPack.outstandingExports();
        try (NDArray first = DataMem.callWith(h, () -> NDArray.empty(DType.FLOAT64, 8));
             NDArray a = DataMem.callWith(h, () -> NDArray.empty(DType.FLOAT64, 8));
             NDArray host = NDArray.empty(DType.FLOAT64, 8)) {
            host.copyFrom(iota(8));
            q.copy(a, host);
            UsmPointerInfo slab = q.pointerInfo(MemorySegment.ofAddress(a.address()));
            assertTrue(slab.contains(a.address()) && slab.byteSize() > a.byteSize(), "the block lies in a slab");
            assertEquals(slab.baseAddress(), q.pointerInfo(MemorySegment.ofAddress(first.address())).baseAddress(),
                    "both blocks are carved from one USM allocation");

            SyclUsmArrayInterface i = SyclUsmArrayInterface.of(a);
            assertEquals(a.address(), i.data().pointer(), "data[0] is the pooled block, a pointer inside the slab");
            assertEquals(kind, q.kindOf(MemorySegment.ofAddress(i.data().pointer())));
            assertEquals(new SyclObject.NativeHandles("opencl", q.contextHandle().address(),
                    q.deviceHandle().address(), q.queueHandle().address()), i.syclobj());

            try (BufferView v = a.getBuffer(BufferFlags.FULL_RO | BufferFlags.DEVICE)) {
                if (kind.hostAccessible()) {
                    assertNull(v.device());
                } else {
                    assertEquals(DeviceInfo.SYCL_DEVICE_ID, v.device());
                    SyclDeviceInfo info = assertInstanceOf(SyclDeviceInfo.class, v.deviceInfo());
                    assertEquals(UsmKind.DEVICE, info.usmKind());
                    assertEquals(q.contextHandle().address(), info.contextHandle());
                }
            }

            MemorySegment m = DLPack.toDLPack(a, 1);
            assertEquals(a.address(), m.get(JAVA_LONG, 32));
            try (NDArray imported = DLPack.fromDLPack(m, true);
                 NDArray back = NDArray.empty(DType.FLOAT64, 8)) {
                assertEquals(kind.memoryKind(), imported.traits().kind());
                q.copy(back, imported);
                assertArrayEquals(iota(8), back.toDoubleArray());
            }
            assertEquals(exports, DLPack.outstandingExports());
        }
        pool.close();
        assertEquals(0, pool.statistics().runByteSize(), "every slab went back to the USM allocator");
    }

    @ParameterizedTest
    @EnumSource(value = UsmKind.class, names = {"HOST", "SHARED", "DEVICE"})
    void resizingAPooledArrayAcrossSizeClassesKeepsItsData(UsmKind kind) {
        PoolingAllocator pool = pool(kind);
        SyclQueue q = ((SyclUsmAllocator) pool.upstream()).queue();
        DataMemHandler h = new DataMemHandler("pool(" + SyclTests.handlerName(kind) + ")", 1, pool);
        try (NDArray a = DataMem.callWith(h, () -> NDArray.empty(DType.FLOAT64, 16));
             NDArray host = NDArray.empty(DType.FLOAT64, 16)) {
            host.copyFrom(iota(16));
            q.copy(a, host);
            long before = a.address();
            a.resize(4096);                                     // 128 bytes -> 32 KiB: another class
            assertTrue(a.address() != before, "moved to a block of the larger class");
            assertEquals(kind, q.kindOf(MemorySegment.ofAddress(a.address())));
            try (NDArray head = NDArray.empty(DType.FLOAT64, 16)) {
                q.copy(MemorySegment.ofAddress(head.address()), MemorySegment.ofAddress(a.address()), 128);
                assertArrayEquals(iota(16), head.toDoubleArray(),
                        kind == UsmKind.DEVICE ? "moved by copyWithinDevice" : "moved by the host");
            }
        }
        pool.close();
        assertEquals(0, pool.statistics().runByteSize());
    }
}
