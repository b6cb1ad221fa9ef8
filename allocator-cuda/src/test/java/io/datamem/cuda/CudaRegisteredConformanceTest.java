package io.datamem.cuda;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.internal.Libc;
import org.junit.jupiter.api.Tag;

/** The conformance suite on a GPU: CudaRegisteredAllocator ({@code cuda:registered}). Skipped without one. */
@Tag("cuda")
class CudaRegisteredConformanceTest extends GpuConformance {

    CudaRegisteredConformanceTest() {
        super("cuda:registered", 200);
    }

    @Override
    protected DataMemAllocator allocator() {
        return CudaRegisteredAllocator.builder(DataMem.handler("aligned:" + Libc.pageSize()).allocator()).build();
    }
}
