package io.datamem.cuda;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.impl.PoolingAllocator;
import io.datamem.testing.AllocatorConformanceTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;

import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/**
 * The conformance suite on a GPU for {@code pool(cuda:device=0)}, built by name (reallocations across size
 * classes copy on the device). Skipped without one.
 */
@Tag("cuda")
class CudaPooledDeviceConformanceTest extends AllocatorConformanceTest {

    @BeforeEach
    void gpu() {
        CudaTests.assumeGpu();
    }

    @Override
    protected DataMemAllocator allocator() {
        return assertInstanceOf(PoolingAllocator.class, DataMem.createHandler(handlerName()).allocator());
    }

    @Override
    protected String handlerName() {
        return "pool(cuda:device=0)";
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
}
