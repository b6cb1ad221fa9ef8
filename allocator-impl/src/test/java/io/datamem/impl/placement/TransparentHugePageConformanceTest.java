package io.datamem.impl.placement;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.testing.AllocatorConformanceTest;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The conformance suite against transparent huge pages: with the default 4 MiB threshold, with
 * every request mapped ({@code threshold=0}), and with the normal-page fallback.
 */
@Tag("hugepages")
@ParameterizedClass(name = "{0}")
@ValueSource(strings = {"hugepages", "hugepages:thp,threshold=0", "hugepages:fallback=normal,threshold=64k(aligned64)",
        "hugepages:threshold=1m+stats"})
class TransparentHugePageConformanceTest extends AllocatorConformanceTest {

    private final String name;

    TransparentHugePageConformanceTest(String name) {
        this.name = name;
    }

    @BeforeEach
    void transparentHugePagesAreOn() {
        HugePages.TransparentMode mode = HugePages.transparentMode();
        Assumptions.assumeTrue(mode.usable(), () -> "skipped: transparent huge pages are " + mode
                + " on this machine; enable them with: echo madvise > /sys/kernel/mm/transparent_hugepage/enabled");
    }

    @Override
    protected DataMemAllocator allocator() {
        return DataMem.createHandler(name).allocator();
    }

    @Override
    protected String handlerName() {
        return name;
    }

    @Override
    protected int threads() {
        return name.contains("threshold=0") ? 2 : 4;
    }

    @Override
    protected int operationsPerThread() {
        // every mapped block touches a whole 2 MiB page: keep the live set small
        return name.contains("threshold=0") ? 150 : 2000;
    }
}
