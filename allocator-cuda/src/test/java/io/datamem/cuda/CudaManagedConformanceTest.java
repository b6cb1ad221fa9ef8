package io.datamem.cuda;

import io.datamem.DataMemAllocator;
import io.datamem.testing.AllocatorConformanceTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;


import static org.junit.jupiter.api.Assertions.assertEquals;

/** The conformance suite on a GPU: CudaManagedAllocator ({@code cuda:managed}). Skipped without one. */
@Tag("cuda")
class CudaManagedConformanceTest extends AllocatorConformanceTest {

    @BeforeEach
    void gpu() {
        CudaTests.assumeGpu();
    }

    @Override
    protected DataMemAllocator allocator() {
        return CudaManagedAllocator.of(0);
    }

    @Override
    protected String handlerName() {
        return "cuda:managed";
    }

    @Override
    protected int operationsPerThread() {
        return 300;
    }

    @Override
    protected void verifyAfterTest(DataMemAllocator allocator) {
        assertEquals(0, ((CudaManagedAllocator) allocator).liveBlocks(), "every block freed");
    }
}
