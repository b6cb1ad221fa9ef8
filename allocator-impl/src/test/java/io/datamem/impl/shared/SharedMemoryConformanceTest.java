package io.datamem.impl.shared;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.impl.pool.PoolingAllocator;
import io.datamem.testing.AllocatorConformanceTest;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The conformance suite against {@code shared}, made directly and by name, and against
 * {@code pool(shared)}; after each test no block is live, and (without the pool) the process
 * exports no mapping the test left behind.
 */
@ParameterizedClass(name = "{0}")
@ValueSource(strings = {"direct", "shared", "pool(shared)"})
class SharedMemoryConformanceTest extends AllocatorConformanceTest {

    private final String name;
    private final int exportedBefore = SharedMemory.exportedMappings();

    SharedMemoryConformanceTest(String name) {
        this.name = name;
    }

    @Override
    protected DataMemAllocator allocator() {
        return name.equals("direct") ? SharedMemoryAllocator.of() : DataMem.createHandler(name).allocator();
    }

    @Override
    protected String handlerName() {
        return name.equals("direct") ? "shared" : name;
    }

    @Override
    protected int operationsPerThread() {
        return name.equals("pool(shared)") ? 2000 : 300;   // a memfd and a mapping per unpooled block
    }

    @Override
    protected void verifyAfterTest(DataMemAllocator allocator) {
        if (allocator instanceof SharedMemoryAllocator shared) {
            assertEquals(0, shared.liveBlocks(), "live blocks after the test");
        }
        if (allocator instanceof PoolingAllocator pool) {
            assertEquals(0, pool.statistics().usedByteSize(), "no block of the pool is still handed out");
            pool.close();   // runs held by the heaps of threads still ending may stay: not counted
        } else {
            assertEquals(exportedBefore, SharedMemory.exportedMappings(), "exported mappings left by the test");
        }
    }
}
