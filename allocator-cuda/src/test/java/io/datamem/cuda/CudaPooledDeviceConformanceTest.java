package io.datamem.cuda;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.impl.pool.PoolingAllocator;
import org.junit.jupiter.api.Tag;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/**
 * The conformance suite on a GPU for {@code pool(cuda:device=0)}, built by name (reallocations across size
 * classes copy on the device). Skipped without one.
 */
@Tag("cuda")
class CudaPooledDeviceConformanceTest extends GpuConformance {

    CudaPooledDeviceConformanceTest() {
        super("pool(cuda:device=0)", 300);
    }

    @Override
    protected DataMemAllocator allocator() {
        return assertInstanceOf(PoolingAllocator.class, DataMem.createHandler(handlerName()).allocator());
    }
}
