package io.datamem.cuda;

import io.datamem.DataMemAllocator;
import io.datamem.testing.AllocatorConformanceTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;


import static org.junit.jupiter.api.Assertions.assertEquals;

/** The conformance suite on a GPU: CudaPinnedAllocator ({@code cuda:pinned}). Skipped without one. */
@Tag("cuda")
class CudaPinnedConformanceTest extends AllocatorConformanceTest {

    @BeforeEach
    void gpu() {
        CudaTests.assumeGpu();
    }

    @Override
    protected DataMemAllocator allocator() {
        return CudaPinnedAllocator.of(0);
    }

    @Override
    protected String handlerName() {
        return "cuda:pinned";
    }

    @Override
    protected int operationsPerThread() {
        return 300;
    }

    @Override
    protected void verifyAfterTest(DataMemAllocator allocator) {
        assertEquals(0, ((CudaPinnedAllocator) allocator).liveBlocks(), "every block freed");
    }
}
