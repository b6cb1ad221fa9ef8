package org.example.scratchdev;

import io.datamem.DataMemAllocator;
import io.datamem.testing.AllocatorConformanceTest;

import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * datamem's conformance suite over a {@link ScratchAllocator} made directly (device 3). The
 * memory is written and read through the device's copies; the array and arena tests, which need a
 * host view, report themselves skipped. After each test the device holds what it held before.
 */
class ScratchConformanceTest extends AllocatorConformanceTest {

    private static final ScratchDevice DEVICE = ScratchDevice.of(3);

    private long blocksBefore;
    private long bytesBefore;

    @Override
    protected DataMemAllocator allocator() {
        blocksBefore = DEVICE.liveBlocks();
        bytesBefore = DEVICE.liveBytes();
        return DEVICE.allocator(handlerName());
    }

    @Override
    protected void write(MemorySegment ptr, long offset, byte[] bytes) {
        ScratchTests.write(DEVICE, ptr, offset, bytes);
    }

    @Override
    protected byte[] read(MemorySegment ptr, long offset, int length) {
        return ScratchTests.read(DEVICE, ptr, offset, length);
    }

    @Override
    protected void verifyAfterTest(DataMemAllocator allocator) {
        assertEquals(blocksBefore, DEVICE.liveBlocks(), "every block went back to " + DEVICE.name());
        assertEquals(bytesBefore, DEVICE.liveBytes());
    }
}
