package io.datamem.impl.placement;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.Device;
import io.datamem.MemoryKind;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.impl.adaptor.StatisticsAdaptor;
import io.datamem.impl.internal.cpu.AlignedAllocator;
import io.datamem.impl.internal.placement.HugePageAllocatorImpl;
import io.datamem.impl.internal.placement.NumaAllocatorImpl;
import io.datamem.impl.internal.placement.NumaTarget;
import io.datamem.impl.os.LinuxMemory;
import io.datamem.impl.snapshot.LayerSnapshot;
import io.datamem.internal.Libc;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Real binding on this machine's NUMA nodes, verified with hwloc's memory-location query after the
 * first touch; errors that list what exists; composition with huge pages and adaptors. On a
 * multi-socket machine the per-node tests cover every node (see docs/placement.md).
 */
@Tag("numa")
class NumaAllocatorTest {

    private static final long PAGE = Libc.pageSize();

    private static List<NumaTopology.Node> nodesWithMemory() {
        return NumaTopology.current().nodes().stream().filter(n -> n.memoryByteSize() > 0).toList();
    }

    @Test
    void bindsToEveryNodeAndVerifiesThePlacementAfterTheFirstTouch() {
        for (NumaTopology.Node node : nodesWithMemory()) {
            NumaAllocatorImpl a = NumaAllocatorImpl.bind(node.id());
            long size = 4L << 20;
            MemorySegment p = a.malloc(size);
            assertNotEquals(0, p.address());
            NumaPlacement before = a.placement(p);
            assertFalse(before.touched(), "nothing placed before the first touch: " + before);
            assertEquals(List.of(node.id()), before.targetNodes());
            p.reinterpret(size).fill((byte) 7);
            NumaPlacement after = a.placement(p);
            assertTrue(after.touched() && after.matches(), after.toString());
            assertEquals(List.of(node.id()), after.actualNodes(), after.toString());
            assertEquals(Map.of(node.id(), size / PAGE), after.pagesPerNode(), after.toString());
            assertEquals(size / PAGE, after.totalPages());
            assertTrue(after.toString().endsWith("as asked"), after.toString());
            a.free(p, size);
        }
    }

    @Test
    void populatedStrictBlocksAreVerifiedAtAllocation() {
        for (NumaTopology.Node node : nodesWithMemory()) {
            NumaAllocatorImpl a = NumaAllocatorImpl.builder().target(NumaTarget.nodes(node.id())).strict(true).populate(true)
                    .build();
            MemorySegment p = a.calloc(1 << 20, 1);
            assertEquals(1, a.verifiedBlocks());
            assertEquals(0, a.placementMismatches());
            NumaPlacement placed = a.placement(p);
            assertEquals((1 << 20) / PAGE, placed.residentPages(), "every page faulted in at allocation: " + placed);
            assertEquals(List.of(node.id()), placed.actualNodes());
            MemorySegment q = a.realloc(p, 1 << 20, 8 << 20);
            assertEquals((8 << 20) / PAGE, a.placement(q).residentPages(), "the grown part is populated too");
            assertTrue(a.placement(q).matches());
            a.free(q, 8 << 20);
        }
    }

    @Test
    void interleaveSpreadsPagesOverEveryNode() {
        NumaAllocatorImpl a = NumaAllocatorImpl.builder().policy(NumaPolicy.INTERLEAVE).target(NumaTarget.allNodes()).build();
        List<Integer> all = NumaTopology.current().nodes().stream().map(NumaTopology.Node::id).toList();
        assertEquals(all, a.nodes());
        long size = 64 * PAGE * all.size();
        MemorySegment p = a.malloc(size);
        p.reinterpret(size).fill((byte) 1);
        NumaPlacement placed = a.placement(p);
        assertTrue(placed.matches(), placed.toString());
        for (NumaTopology.Node n : nodesWithMemory()) {
            assertTrue(placed.pagesPerNode().getOrDefault(n.id(), 0L) >= 32, "node " + n.id() + " has its share: "
                    + placed);
        }
        a.free(p, size);
    }

    @Test
    void localPreferredFirstTouchAndPciTargetsPlaceWhereTheySay() {
        NumaTopology t = NumaTopology.current();
        NumaAllocatorImpl local = NumaAllocatorImpl.local();
        assertEquals(t.nodesOfCpu(LinuxMemory.currentCpu()).size(), local.nodes().size());
        check(local);
        int first = nodesWithMemory().getFirst().id();
        check(NumaAllocatorImpl.builder().policy(NumaPolicy.PREFERRED).target(NumaTarget.nodes(first)).build());
        NumaAllocatorImpl firstTouch = NumaAllocatorImpl.builder().policy(NumaPolicy.FIRST_TOUCH).build();
        assertEquals(NumaTarget.allNodes(), firstTouch.target());
        check(firstTouch);
        for (NumaTopology.PciDevice d : t.pciDevices()) {
            NumaAllocatorImpl near = (NumaAllocatorImpl) DataMem.createHandler("numa:bind=pci:" + d.busId()).allocator();
            assertEquals(t.nodesNearPciDevice(d.busId()), near.nodes());
            check(near);
        }
    }

    private static void check(NumaAllocatorImpl a) {
        long size = 256 * PAGE;
        MemorySegment p = a.malloc(size);
        p.reinterpret(size).fill((byte) 3);
        NumaPlacement placed = a.placement(p);
        assertTrue(placed.touched() && placed.matches(), a + ": " + placed);
        assertEquals(256, placed.residentPages());
        a.free(p, size);
    }

    @Test
    void unknownNodesUnsupportedPoliciesAndContradictionsAreClearErrors() {
        String unknown = assertThrows(IllegalArgumentException.class, () -> NumaAllocatorImpl.bind(4095)).getMessage();
        assertTrue(unknown.contains("NUMA node 4095 does not exist on this machine; its nodes: node "), unknown);
        UnsupportedOperationException next = assertThrows(UnsupportedOperationException.class,
                () -> NumaAllocatorImpl.builder().policy(NumaPolicy.NEXT_TOUCH).target(NumaTarget.allNodes()).build());
        Assumptions.assumeFalse(NumaTopology.current().supportedPolicies().contains(NumaPolicy.NEXT_TOUCH));
        assertTrue(next.getMessage().startsWith("NUMA policy nexttouch is not supported here (hwloc has no next-touch "
                + "binding on Linux, whose kernel has no such policy); supported: bind, preferred, interleave, "
                + "firsttouch; this machine: node "), next.getMessage());
        assertEquals("strict: true for preferred (expected: false; a strict preference is bind)",
                assertThrows(IllegalArgumentException.class, () -> NumaAllocatorImpl.builder()
                        .policy(NumaPolicy.PREFERRED).target(NumaTarget.nodes(0)).strict(true).build()).getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> NumaAllocatorImpl.builder()
                .policy(NumaPolicy.FIRST_TOUCH).target(NumaTarget.nodes(0)).build()).getMessage()
                .contains("first-touch puts each page on the node of the CPU that touches it first"));
        String pci = assertThrows(IllegalArgumentException.class,
                () -> DataMem.createHandler("numa:bind=pci:00ff:ff:1f.7")).getMessage();
        assertTrue(pci.contains("PCI device 00ff:ff:1f.7 does not exist on this machine; its PCI devices: "), pci);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> NumaAllocatorImpl.builder()
                .upstream(AlignedAllocator.of(64))).getMessage().contains("guarantees 64-byte alignment"));
        assertThrows(IllegalArgumentException.class, () -> NumaAllocatorImpl.builder().upstream(NumaAllocatorImpl.local()));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> HugePageAllocatorImpl.builder()
                .upstream(NumaAllocatorImpl.local())).getMessage().contains("put the huge pages under the NUMA layer (handler names numa:...(hugepages...))"));
    }

    @Test
    void badHandlerNamesSayWhatWasExpected() {
        for (String[] c : new String[][] {{"numa", "no policy"}, {"numa:bind", "policy bind needs a target"},
                {"numa:bind=0,fast", "unknown flag 'fast' (expected: strict or populate)"},
                {"numa:spread=0", "NUMA policy: 'spread'"}, {"numa:local=1", "'local' takes no value"},
                {"numa:bind=x", "expected: node ids such as 0"}, {"numa:local()", "empty parentheses"},
                {"numa:interleave=0,,1", "empty option"}}) {
            String m = assertThrows(IllegalArgumentException.class, () -> DataMem.createHandler(c[0])).getMessage();
            assertTrue(m.contains(c[1]) && m.contains("handler name '" + c[0] + "'"), m);
        }
        NumaAllocatorImpl a = (NumaAllocatorImpl) DataMem.createHandler("numa:interleave=0,0,strict,populate").allocator();
        assertEquals(NumaPolicy.INTERLEAVE, a.policy());
        assertEquals(NumaTarget.nodes(0), a.target());
        assertTrue(a.strict() && a.populate());
        assertEquals("NumaAllocator[numa:interleave=0,0,strict,populate]", a.toString());
        assertEquals("numa:firsttouch", NumaAllocatorImpl.builder().policy(NumaPolicy.FIRST_TOUCH).build().toString()
                .replaceAll("NumaAllocator\\[(.*)]", "$1"));
    }

    @Test
    void numaBoundTransparentHugePagesInEitherSpelling() {
        Assumptions.assumeTrue(HugePages.transparentMode().usable(), "skipped: transparent huge pages are "
                + HugePages.transparentMode() + "; enable: echo madvise > /sys/kernel/mm/transparent_hugepage/enabled");
        int node = nodesWithMemory().getFirst().id();
        for (String name : List.of("numa:bind=" + node + ",populate(hugepages)", "hugepages(numa:bind=" + node
                + ",populate)")) {
            NumaAllocatorImpl a = assertInstanceOf(NumaAllocatorImpl.class, DataMem.createHandler(name).allocator(), name);
            HugePageAllocatorImpl hp = a.hugePages().orElseThrow();
            long size = 8L << 20;
            MemorySegment p = a.malloc(size);
            LayerSnapshot.Mapping m = hp.mapping(p).orElseThrow();
            assertEquals("transparent", m.pages());
            assertEquals(HugePageAllocatorImpl.PageKind.TRANSPARENT.pageSize(), a.traitsOf(p).pageSize());
            assertEquals(0, p.address() % m.pageSize());
            NumaPlacement placed = a.placement(p);
            assertEquals(size / m.pageSize(), placed.residentPages(), placed.toString());
            assertEquals(List.of(node), placed.actualNodes());
            HugePages.Residency r = HugePages.residency(p).orElseThrow();
            assertTrue(r.anonHugeBytes() > 0, "NUMA-bound block on transparent huge pages: " + r);
            MemorySegment small = a.malloc(1000);
            assertTrue(hp.mapping(small).isEmpty(), "below the threshold: a normal-page mapping of the NUMA allocator");
            assertEquals(PAGE, a.traitsOf(small).pageSize());
            assertEquals(List.of(node), a.placement(small).targetNodes());
            a.free(small, 1000);
            MemorySegment q = a.realloc(p, size, 16L << 20);
            assertEquals(List.of(node), a.placement(q).actualNodes());
            a.free(q, 16L << 20);
            assertEquals(0, hp.snapshot().mappings().size());
        }
    }

    @Test
    void composesWithAdaptorsBothWays() {
        DataMemHandler over = DataMem.createHandler("numa:local(aligned:4096+stats)");
        NumaAllocatorImpl a = assertInstanceOf(NumaAllocatorImpl.class, over.allocator());
        StatisticsAdaptor stats = assertInstanceOf(StatisticsAdaptor.class, a.upstream().orElseThrow());
        MemorySegment p = a.malloc(10_000);
        assertEquals(3 * PAGE, stats.figures().currentBytes(), "whole pages taken from the upstream");
        p.reinterpret(10_000).fill((byte) 9);
        assertTrue(a.placement(p).matches());
        a.free(p, 10_000);
        assertEquals(0, stats.figures().currentBytes());
        DataMemHandler under = DataMem.createHandler("numa:local+stats");
        StatisticsAdaptor s = assertInstanceOf(StatisticsAdaptor.class, under.allocator());
        assertInstanceOf(NumaAllocatorImpl.class, s.upstream());
        assertEquals(PAGE, under.traits().byteAlignment());
    }

    @Test
    void arraysOnNumaMemoryAreCpuHostMemory() {
        DataMemHandler h = DataMem.createHandler("numa:local");
        try (NDArray x = DataMem.callWith(h, () -> NDArray.zeros(DType.FLOAT64, 512, 512))) {
            assertEquals(MemoryKind.HOST, x.traits().kind());
            assertEquals(Device.CPU, x.traits().device());
            assertTrue(x.traits().hostAccessible());
            assertEquals(PAGE, x.traits().pageSize());
            assertEquals(0, x.address() % PAGE);
            x.fill(2.0);
            assertEquals(2.0, x.getDouble(511, 511));
            x.resize(1024, 512);
            assertEquals(2.0, x.getDouble(511, 511));
            assertTrue(((NumaAllocatorImpl) h.allocator()).placement(MemorySegment.ofAddress(x.address())).matches());
        }
    }

    @Test
    void freeingWithTheWrongSizeTwiceOrSomethingElseIsRejected() {
        DataMemAllocator a = NumaAllocatorImpl.local();
        MemorySegment p = a.malloc(5000);
        assertEquals("byteSize: 4096 (expected: 5000, the size of the block at 0x" + Long.toHexString(p.address())
                + ")", assertThrows(IllegalArgumentException.class, () -> a.free(p, 4096)).getMessage());
        a.free(p, 5000);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> a.free(p, 5000)).getMessage()
                .contains("is not a live block"));
        assertThrows(IllegalArgumentException.class, () -> a.realloc(p, 5000, 10));
        assertThrows(IllegalArgumentException.class, () -> ((NumaAllocatorImpl) a).placement(p));
    }
}
