package io.datamem.cuda;

import io.datamem.DataMemAllocator;
import io.datamem.testing.AllocatorConformanceTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;

import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The conformance suite on a GPU: CudaDeviceAllocator ({@code cuda:device}). Skipped without one. */
@Tag("cuda")
class CudaDeviceConformanceTest extends AllocatorConformanceTest {

    @BeforeEach
    void gpu() {
        CudaTests.assumeGpu();
    }

    @Override
    protected DataMemAllocator allocator() {
        return CudaDeviceAllocator.of(0);
    }

    @Override
    protected String handlerName() {
        return "cuda:device";
    }

    @Override
    protected int operationsPerThread() {
        return 300;
    }

    @Override
    protected void write(MemorySegment ptr, long offset, byte[] bytes) {
        GpuConformance.write(ptr, offset, bytes);
    }

    @Override
    protected byte[] read(MemorySegment ptr, long offset, int length) {
        return GpuConformance.read(ptr, offset, length);
    }

    @Override
    protected void verifyAfterTest(DataMemAllocator allocator) {
        assertEquals(0, ((CudaDeviceAllocator) allocator).liveBlocks(), "every block freed");
    }
}
