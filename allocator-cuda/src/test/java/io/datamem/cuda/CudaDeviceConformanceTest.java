package io.datamem.cuda;

import io.datamem.DataMemAllocator;
import org.junit.jupiter.api.Tag;

/** The conformance suite on a GPU: CudaDeviceAllocator ({@code cuda:device}). Skipped without one. */
@Tag("cuda")
class CudaDeviceConformanceTest extends GpuConformance {

    CudaDeviceConformanceTest() {
        super("cuda:device", 300);
    }

    @Override
    protected DataMemAllocator allocator() {
        return CudaDeviceAllocator.of(0);
    }
}
