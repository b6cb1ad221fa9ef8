package io.datamem.impl.pool;

import io.datamem.impl.snapshot.LayerSnapshot;
import io.datamem.DataMemAllocator;
import io.datamem.Device;
import io.datamem.DeviceType;
import io.datamem.MemoryKind;
import io.datamem.MemoryTraits;
import io.datamem.DeviceInterchange;
import io.datamem.impl.internal.cpu.AlignedAllocator;
import io.datamem.impl.internal.pool.PoolingAllocatorImpl;
import io.datamem.testing.CountingAllocator;
import io.datamem.testing.FakeDeviceAllocator;
import io.datamem.testing.WithTraits;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.OptionalLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A pool over memory the host cannot touch: reallocation across size classes moves the data with
 * the backend's device copy ({@link DeviceInterchange#copyWithinDevice}), and is refused, with
 * nothing leaked, when the backend has none. "Device" memory is host memory behind
 * {@link FakeDeviceAllocator}, so the test can look at the bytes.
 */
class PoolingDeviceMemoryTest {

    private final CountingAllocator host = new CountingAllocator(AlignedAllocator.of(256));

    private static void fill(MemorySegment p, long n, byte seed) {
        MemorySegment s = p.reinterpret(n);
        for (long i = 0; i < n; i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) (seed + i));
        }
    }

    private static void check(MemorySegment p, long n, byte seed) {
        MemorySegment s = p.reinterpret(n);
        for (long i = 0; i < n; i++) {
            assertEquals((byte) (seed + i), s.get(ValueLayout.JAVA_BYTE, i), "byte " + i);
        }
    }

    @Test
    void reallocAcrossSizeClassesCopiesOnTheDevice() {
        FakeDeviceAllocator device = FakeDeviceAllocator.cudaDevice(host);
        PoolingAllocator pool = PoolingAllocatorImpl.of(device);
        MemorySegment p = pool.malloc(1000);
        fill(p, 1000, (byte) 3);
        MemorySegment same = pool.realloc(p, 1000, 1010);
        assertEquals(p.address(), same.address(), "within a class: in place");
        assertEquals(0, device.deviceCopiedBytes());
        MemorySegment grown = pool.realloc(same, 1010, 100_000);
        assertNotEquals(p.address(), grown.address());
        assertEquals(1010, device.deviceCopiedBytes(), "the old size, copied by the backend");
        assertEquals(0, device.copiedBytes(), "nothing went through the host");
        check(grown, 1000, (byte) 3);
        MemorySegment shrunk = pool.realloc(grown, 100_000, 64);
        assertEquals(1010 + 64, device.deviceCopiedBytes());
        check(shrunk, 64, (byte) 3);
        pool.free(shrunk, 64);
        pool.close();
        assertEquals(0, host.liveBlocks(), "every slab returned");
    }

    @Test
    void withoutADeviceCopyTheReallocIsRefusedAndNothingLeaks() {
        DataMemAllocator noHook = deviceTraits(host, null);
        PoolingAllocator pool = PoolingAllocatorImpl.of(noHook);
        MemorySegment p = pool.malloc(100);
        UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
                () -> pool.realloc(p, 100, 50_000));
        assertTrue(e.getMessage().contains("no DeviceInterchange"), e.getMessage());
        pool.free(p, 100);

        DataMemAllocator noCopy = deviceTraits(host, new NoCopyInterchange());
        PoolingAllocator pool2 = PoolingAllocatorImpl.of(noCopy);
        MemorySegment q = pool2.malloc(100);
        LayerSnapshot.Pool before = pool2.statistics();
        UnsupportedOperationException e2 = assertThrows(UnsupportedOperationException.class,
                () -> pool2.realloc(q, 100, 50_000));
        assertTrue(e2.getMessage().contains("does not copy within device memory"), e2.getMessage());
        LayerSnapshot.Pool after = pool2.statistics();
        assertEquals(before.usedByteSize(), after.usedByteSize(), "the block allocated for the move was freed");
        pool2.free(q, 100);
        pool.close();
        pool2.close();
        assertEquals(0, host.liveBlocks());
    }

    /** Host memory whose traits say CUDA device memory, with a given hook (or none). */
    private static DataMemAllocator deviceTraits(DataMemAllocator upstream, DeviceInterchange hook) {
        return new WithTraits(upstream,
                new MemoryTraits(MemoryKind.DEVICE, new Device(DeviceType.CUDA, 0), false, 256, 4096, hook));
    }

    /** A hook that keeps the SPI's default: no device copy. */
    private static final class NoCopyInterchange implements DeviceInterchange {
        @Override
        public void synchronize(MemorySegment ptr, OptionalLong consumerStream) {
        }

        @Override
        public void copyToHost(MemorySegment ptr, long byteOffset, MemorySegment target, long byteSize) {
            throw new AssertionError("not used");
        }
    }
}
