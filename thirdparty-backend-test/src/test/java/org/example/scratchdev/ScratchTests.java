package org.example.scratchdev;

import io.datamem.DataMemAllocator;

import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/** Helpers of this module's tests. */
final class ScratchTests {

    private ScratchTests() {
    }

    /** The scratch device an allocator's memory is on, found as exporters find it: by its traits. */
    static ScratchDevice deviceOf(DataMemAllocator allocator) {
        return assertInstanceOf(ScratchInterchange.class, allocator.traits().interchange(),
                () -> allocator + " reports no ScratchInterchange").device();
    }

    /** Writes bytes into device memory through the backend's copy. */
    static void write(ScratchDevice device, MemorySegment ptr, long offset, byte[] bytes) {
        device.copyFromHost(MemorySegment.ofArray(bytes), ptr, offset, bytes.length);
    }

    /** Reads bytes of device memory through the backend's copy. */
    static byte[] read(ScratchDevice device, MemorySegment ptr, long offset, int length) {
        byte[] out = new byte[length];
        device.copyToHost(ptr, offset, MemorySegment.ofArray(out), length);
        return out;
    }

    /** 0.5, 1.5, 2.5, ... */
    static double[] values(int n) {
        double[] v = new double[n];
        for (int i = 0; i < n; i++) {
            v[i] = i + 0.5;
        }
        return v;
    }
}
