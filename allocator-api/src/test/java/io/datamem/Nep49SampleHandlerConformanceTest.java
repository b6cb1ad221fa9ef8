package io.datamem;

import io.datamem.testing.AllocatorConformanceTest;
import io.datamem.testing.Nep49SampleAllocator;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The conformance suite against the NEP 49 sample handler ({@code secret_data_allocator}): every
 * free and realloc must come back with the size the header recorded.
 */
class Nep49SampleHandlerConformanceTest extends AllocatorConformanceTest {

    @Override
    protected DataMemAllocator allocator() {
        return new Nep49SampleAllocator();
    }

    @Override
    protected String handlerName() {
        return "secret_data_allocator";
    }

    @Override
    protected void verifyAfterTest(DataMemAllocator allocator) {
        Nep49SampleAllocator sample = (Nep49SampleAllocator) allocator;
        assertEquals(java.util.List.of(), sample.violations(), "every free/realloc had the allocated size");
        assertEquals(0, sample.liveBlocks(), "every block freed");
        assertEquals(0, sample.liveBytes(), "every byte freed");
    }
}
