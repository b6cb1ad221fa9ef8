package io.datamem.cuda;

import io.datamem.DataMemAllocator;
import io.datamem.impl.AlignedAllocator;
import io.datamem.internal.Libc;
import io.datamem.testing.AllocatorConformanceTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;


import static org.junit.jupiter.api.Assertions.assertEquals;

/** The conformance suite on a GPU: CudaRegisteredAllocator ({@code cuda:registered}). Skipped without one. */
@Tag("cuda")
class CudaRegisteredConformanceTest extends AllocatorConformanceTest {

    @BeforeEach
    void gpu() {
        CudaTests.assumeGpu();
    }

    @Override
    protected DataMemAllocator allocator() {
        return CudaRegisteredAllocator.builder(new AlignedAllocator(Libc.pageSize())).build();
    }

    @Override
    protected String handlerName() {
        return "cuda:registered";
    }

    @Override
    protected int operationsPerThread() {
        return 200;
    }

    @Override
    protected void verifyAfterTest(DataMemAllocator allocator) {
        assertEquals(0, ((CudaRegisteredAllocator) allocator).liveBlocks(), "every block freed");
    }
}
