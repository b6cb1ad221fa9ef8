package io.datamem.cuda;

import io.datamem.DataMemAllocator;
import org.junit.jupiter.api.Tag;

/** The conformance suite on a GPU: CudaManagedAllocator ({@code cuda:managed}). Skipped without one. */
@Tag("cuda")
class CudaManagedConformanceTest extends GpuConformance {

    CudaManagedConformanceTest() {
        super("cuda:managed", 300);
    }

    @Override
    protected DataMemAllocator allocator() {
        return CudaManagedAllocator.of(0);
    }
}
