package io.datamem;

import io.datamem.DataMem;
import io.datamem.testing.AllocatorConformanceTest;

/** The conformance suite against {@code default_allocator}, the built-in libc handler. */
class DefaultAllocatorConformanceTest extends AllocatorConformanceTest {

    @Override
    protected DataMemAllocator allocator() {
        return DataMem.builtinDefault().allocator();
    }

    @Override
    protected String handlerName() {
        return "default_allocator";
    }
}
