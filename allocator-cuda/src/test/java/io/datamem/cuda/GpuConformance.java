package io.datamem.cuda;

import io.datamem.DataMemAllocator;
import io.datamem.testing.AllocatorConformanceTest;
import org.junit.jupiter.api.BeforeEach;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The conformance suite on a GPU, skipped without one (the skip says why). Memory the host cannot
 * touch is written and read through CUDA copies; a CUDA allocator must end every test with no live
 * blocks.
 */
abstract class GpuConformance extends AllocatorConformanceTest {

    private final String handlerName;
    private final int operationsPerThread;

    /**
     * @param handlerName         the handler name the suite reports
     * @param operationsPerThread the concurrent test's operations per thread (CUDA calls are slow)
     */
    GpuConformance(String handlerName, int operationsPerThread) {
        this.handlerName = handlerName;
        this.operationsPerThread = operationsPerThread;
    }

    @BeforeEach
    void gpu() {
        CudaTests.assumeGpu();
    }

    @Override
    protected String handlerName() {
        return handlerName;
    }

    @Override
    protected int operationsPerThread() {
        return operationsPerThread;
    }

    @Override
    protected void write(MemorySegment ptr, long offset, byte[] bytes) {
        if (subject().traits().hostAccessible()) {
            super.write(ptr, offset, bytes);
            return;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment source = arena.allocateFrom(ValueLayout.JAVA_BYTE, bytes);
            CudaMemory.copy(source, MemorySegment.ofAddress(ptr.address() + offset), bytes.length);
        }
    }

    @Override
    protected byte[] read(MemorySegment ptr, long offset, int length) {
        if (subject().traits().hostAccessible()) {
            return super.read(ptr, offset, length);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment target = arena.allocate(Math.max(length, 1));
            CudaMemory.copy(MemorySegment.ofAddress(ptr.address() + offset), target, length);
            return target.asSlice(0, length).toArray(ValueLayout.JAVA_BYTE);
        }
    }

    @Override
    protected void verifyAfterTest(DataMemAllocator allocator) {
        if (allocator instanceof CudaAllocator cuda) {
            assertEquals(0, cuda.liveBlocks(), "every block freed");
        }
    }
}
