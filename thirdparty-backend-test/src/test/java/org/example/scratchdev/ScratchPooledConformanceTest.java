package org.example.scratchdev;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.impl.pool.PoolingAllocator;
import io.datamem.testing.AllocatorConformanceTest;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/**
 * The conformance suite over {@code pool(scratchdev:2)}: datamem's pool carves the device's blocks
 * into size classes and moves blocks across classes with the backend's {@code copyWithinDevice}.
 * After each test every slab has gone back to the device.
 */
class ScratchPooledConformanceTest extends AllocatorConformanceTest {

    private static final ScratchDevice DEVICE = ScratchDevice.of(2);

    private long blocksBefore;

    @Override
    protected DataMemAllocator allocator() {
        blocksBefore = DEVICE.liveBlocks();
        PoolingAllocator pool = assertInstanceOf(PoolingAllocator.class,
                DataMem.createHandler(handlerName()).allocator());
        assertInstanceOf(ScratchAllocator.class, pool.upstream());
        return pool;
    }

    @Override
    protected String handlerName() {
        return "pool(scratchdev:2)";
    }

    @Override
    protected int operationsPerThread() {
        return 1000;
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
        PoolingAllocator pool = (PoolingAllocator) allocator;
        assertEquals(0, pool.statistics().usedByteSize(), "no block of the pool is still handed out");
        pool.close();
        // Blocks cached by a live thread go back when it ends: trim until they have.
        for (int i = 0; i < 1000 && pool.statistics().runByteSize() > 0; i++) {
            LockSupport.parkNanos(10_000_000);
            pool.trim();
        }
        assertEquals(0, pool.statistics().runByteSize(), "every slab went back to the device");
        assertEquals(blocksBefore, DEVICE.liveBlocks(), "the device holds what it held before");
    }
}
