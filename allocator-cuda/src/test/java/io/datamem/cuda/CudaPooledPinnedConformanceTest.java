package io.datamem.cuda;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.impl.pool.PoolingAllocator;
import org.junit.jupiter.api.Tag;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/**
 * The conformance suite on a GPU for {@code pool(cuda:pinned)}, built by name. Skipped without one.
 */
@Tag("cuda")
class CudaPooledPinnedConformanceTest extends GpuConformance {

    CudaPooledPinnedConformanceTest() {
        super("pool(cuda:pinned)", 2000);
    }

    @Override
    protected DataMemAllocator allocator() {
        return assertInstanceOf(PoolingAllocator.class, DataMem.createHandler(handlerName()).allocator());
    }
}
