package io.datamem.impl.placement;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.impl.internal.placement.NumaAllocatorImpl;
import io.datamem.testing.AllocatorConformanceTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The conformance suite against every NUMA mode on this machine's nodes: each policy, strict and
 * populated binding, the local and PCI-device targets, NUMA-bound transparent huge pages (in both
 * spellings), an adaptor upstream, and as the upstream of an adaptor.
 */
@Tag("numa")
@ParameterizedClass(name = "{0}")
@MethodSource("names")
class NumaConformanceTest extends AllocatorConformanceTest {

    static List<String> names() {
        NumaTopology t = NumaTopology.current();
        int first = t.nodes().stream().filter(n -> n.memoryByteSize() > 0).findFirst().orElseThrow().id();
        List<String> names = new ArrayList<>(List.of("numa:local", "numa:bind=" + first,
                "numa:bind=" + first + ",strict,populate", "numa:preferred=" + first, "numa:interleave=all",
                "numa:firsttouch", "numa:bind=" + first + "(hugepages)", "hugepages(numa:local)",
                "numa:local(aligned:4096+stats)", "numa:local+stats"));
        t.pciDevices().stream().findFirst().ifPresent(d -> names.add("numa:bind=pci:" + d.busId()));
        return names;
    }

    private final String name;

    NumaConformanceTest(String name) {
        this.name = name;
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
    protected void verifyAfterTest(DataMemAllocator allocator) {
        if (allocator instanceof NumaAllocatorImpl numa) {
            assertEquals(0, numa.placementMismatches(), "no block was placed off its nodes");
            numa.hugePages().ifPresent(hp -> assertEquals(0, hp.snapshot().mappings().size(), "every huge-page mapping unmapped"));
        }
    }
}
