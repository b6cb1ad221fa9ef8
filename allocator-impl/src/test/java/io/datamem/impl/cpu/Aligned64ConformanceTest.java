package io.datamem.impl.cpu;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.testing.AllocatorConformanceTest;

/** The conformance suite against {@code aligned64}, resolved by name through its provider. */
class Aligned64ConformanceTest extends AllocatorConformanceTest {

    @Override
    protected DataMemAllocator allocator() {
        return DataMem.createHandler("aligned64").allocator();
    }

    @Override
    protected String handlerName() {
        return "aligned64";
    }
}
