package io.datamem.impl.adaptor;

import io.datamem.impl.internal.adaptor.StatisticsAdaptorImpl;
import io.datamem.DataMemAllocator;
import io.datamem.impl.internal.cpu.AlignedAllocator;
import io.datamem.testing.AllocatorConformanceTest;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The conformance suite against {@code aligned64+stats}, with its books balanced after each test. */
class StatisticsAdaptorConformanceTest extends AllocatorConformanceTest {

    @Override
    protected DataMemAllocator allocator() {
        return StatisticsAdaptorImpl.of(AlignedAllocator.of(64));
    }

    @Override
    protected void verifyAfterTest(DataMemAllocator allocator) {
        StatisticsAdaptorImpl s = (StatisticsAdaptorImpl) allocator;
        assertEquals(0, s.currentBytes(), "bytes in use after the test");
        assertEquals(s.allocations(), s.frees(), "every allocation freed");
        assertEquals(s.allocatedBytes(), s.freedBytes());
    }
}
