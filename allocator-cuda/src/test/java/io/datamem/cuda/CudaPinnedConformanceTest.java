package io.datamem.cuda;

import io.datamem.DataMemAllocator;
import org.junit.jupiter.api.Tag;

/** The conformance suite on a GPU: CudaPinnedAllocator ({@code cuda:pinned}). Skipped without one. */
@Tag("cuda")
class CudaPinnedConformanceTest extends GpuConformance {

    CudaPinnedConformanceTest() {
        super("cuda:pinned", 300);
    }

    @Override
    protected DataMemAllocator allocator() {
        return CudaPinnedAllocator.of(0);
    }
}
