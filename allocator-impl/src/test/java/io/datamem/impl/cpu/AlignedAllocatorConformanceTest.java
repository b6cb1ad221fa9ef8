package io.datamem.impl.cpu;

import io.datamem.DataMemAllocator;
import io.datamem.impl.internal.cpu.AlignedAllocator;
import io.datamem.testing.AllocatorConformanceTest;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/** The conformance suite against {@code aligned:N} for every alignment from 8 to 2 MiB. */
@ParameterizedClass(name = "aligned:{0}")
@ValueSource(longs = {8, 16, 32, 128, 256, 4096, 65536, 1 << 21})
class AlignedAllocatorConformanceTest extends AllocatorConformanceTest {

    private final long alignment;

    AlignedAllocatorConformanceTest(long alignment) {
        this.alignment = alignment;
    }

    @Override
    protected DataMemAllocator allocator() {
        return AlignedAllocator.of(alignment);
    }

    @Override
    protected String handlerName() {
        return "aligned:" + alignment;
    }

    @Override
    protected int operationsPerThread() {
        return alignment >= 65536 ? 300 : 2000;
    }
}
