package io.datamem.impl.pool;

import io.datamem.impl.snapshot.LayerSnapshot;
import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.impl.internal.pool.PoolOptions;
import io.datamem.impl.internal.pool.PoolingAllocatorImpl;
import io.datamem.testing.AllocatorConformanceTest;
import io.datamem.testing.CountingAllocator;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The conformance suite against pools over several upstreams, including a pool with small limits
 * so that pass-through and one-block slabs are exercised too.
 */
@ParameterizedClass(name = "pool over {0}")
@ValueSource(strings = {"aligned64", "default_allocator", "aligned:4096", "aligned64:small-limits"})
class PoolingAllocatorConformanceTest extends AllocatorConformanceTest {

    private final String upstreamName;
    private CountingAllocator counting;

    PoolingAllocatorConformanceTest(String upstreamName) {
        this.upstreamName = upstreamName;
    }

    @Override
    protected DataMemAllocator allocator() {
        boolean small = upstreamName.endsWith(":small-limits");
        String name = small ? upstreamName.substring(0, upstreamName.indexOf(':')) : upstreamName;
        counting = new CountingAllocator(DataMem.createHandler(name).allocator());
        PoolOptions options = small
                ? new PoolOptions(4096, 8192, 0)
                : PoolOptions.DEFAULTS;
        return PoolingAllocatorImpl.of(counting, options);
    }

    @Override
    protected String handlerName() {
        return "pool(" + upstreamName + ")";
    }

    @Override
    protected void verifyAfterTest(DataMemAllocator allocator) {
        PoolingAllocator pool = (PoolingAllocator) allocator;
        LayerSnapshot.Pool s = pool.statistics();
        assertEquals(0, s.usedByteSize(), "no block of the pool is still handed out");
        assertEquals(s.runByteSize(), counting.liveBytes(),
                "the pool holds exactly the bytes the upstream counts as live");
        pool.close();
    }
}
