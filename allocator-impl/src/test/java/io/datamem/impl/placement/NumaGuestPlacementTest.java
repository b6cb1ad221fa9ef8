package io.datamem.impl.placement;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.impl.pool.PoolingAllocator;
import io.datamem.internal.Libc;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every NUMA policy of the {@code numa:} handlers on every node of the emulated guest, each block's
 * placement read back twice: from the allocator's report ({@code move_pages}) and from the kernel's
 * {@code /proc/self/numa_maps}; each placement printed to the guest's placement report.
 */
@Tag(NumaGuest.TAG)
class NumaGuestPlacementTest {

    private static final long PAGE = Libc.pageSize();

    private NumaGuest guest;

    @BeforeEach
    void inTheGuest() {
        guest = NumaGuest.require();
    }

    @Test
    void bindPutsEveryPageOnItsNode() {
        for (NumaGuest.Node n : guest.nodes()) {
            Placed p = place("numa:bind=" + n.id(), 4L << 20, -1);
            assertEquals(Map.of(n.id(), (4L << 20) / PAGE), p.placement().pagesPerNode(), p.toString());
            assertEquals("bind:" + n.id(), p.maps().policy(), p.toString());
            assertEquals(p.placement().pagesPerNode(), p.maps().pagesPerNode(), "numa_maps agrees: " + p);
        }
    }

    @Test
    void interleaveDealsPagesRoundRobinOverItsNodes() {
        List<Integer> all = guest.nodes().stream().map(NumaGuest.Node::id).toList();
        java.util.Set<List<Integer>> sets = new java.util.LinkedHashSet<>(List.of(all, all.subList(0, 2)));
        if (guest.memoryOnlyNodes().size() >= 2) {
            sets.add(guest.memoryOnlyNodes().stream().map(NumaGuest.Node::id).toList());
        }
        for (List<Integer> set : sets) {
            String target = set.equals(all) ? "all" : set.stream().map(String::valueOf).reduce((a, b) -> a + "," + b)
                    .orElseThrow();
            long pages = 64L * set.size();   // below 2 MiB: base pages, dealt one by one
            Placed p = place("numa:interleave=" + target, pages * PAGE, -1);
            for (int node : set) {
                assertEquals(64L, p.placement().pagesPerNode().getOrDefault(node, 0L), "node " + node + "'s share: " + p);
            }
            assertTrue(p.maps().policy().startsWith("interleave:"), p.toString());
            assertEquals(p.placement().pagesPerNode(), p.maps().pagesPerNode(), "numa_maps agrees: " + p);
        }
    }

    @Test
    void preferredPutsPagesOnItsNodeWhileItHasRoom() {
        for (NumaGuest.Node n : guest.nodes()) {
            Placed p = place("numa:preferred=" + n.id(), 2L << 20, -1);
            assertEquals(Map.of(n.id(), (2L << 20) / PAGE), p.placement().pagesPerNode(), p.toString());
            assertTrue(p.maps().policy().startsWith("prefer") && p.maps().policy().endsWith(":" + n.id()), p.toString());
            assertEquals(p.placement().pagesPerNode(), p.maps().pagesPerNode(), "numa_maps agrees: " + p);
        }
    }

    @Test
    void localBindsToTheAllocatingCpusNodeWhoeverTouches() {
        List<Integer> cpus = guest.cpus();
        for (int cpu : cpus) {
            int node = guest.nodeOfCpu(cpu);
            int other = cpus.stream().filter(c -> c != cpu).findFirst().orElse(cpu);
            Placed p = place("numa:local", 1L << 20, cpu, other);
            assertEquals(Map.of(node, (1L << 20) / PAGE), p.placement().pagesPerNode(), p + " (allocated on CPU "
                    + cpu + ", touched on CPU " + other + ")");
            assertEquals("bind:" + node, p.maps().policy(), p.toString());
        }
    }

    @Test
    void firstTouchPutsPagesOnTheTouchingCpusNode() {
        for (int cpu : guest.cpus()) {
            int node = guest.nodeOfCpu(cpu);
            Placed p = place("numa:firsttouch", 1L << 20, -1, cpu);
            assertEquals(Map.of(node, (1L << 20) / PAGE), p.placement().pagesPerNode(), p + " (touched on CPU " + cpu + ")");
            assertEquals("local", p.maps().policy(), p.toString());
        }
    }

    @Test
    void nearAPciDeviceBindsToTheDevicesNodeOrFallsBackToTheCpuNodesOfWhereItHangs() {
        NumaTopology t = NumaTopology.current();
        List<Integer> cpuNodes = guest.nodes().stream().filter(n -> !n.memoryOnly()).map(NumaGuest.Node::id).toList();
        assertTrue(t.pciDevices().size() > guest.pciDevices().size(), "devices without a node too: " + t.pciDevices());
        for (NumaTopology.PciDevice d : t.pciDevices()) {
            List<Integer> near = t.nodesNearPciDevice(d.busId());
            NumaGuest.Pci placedOn = guest.pciDevices().stream().filter(p -> p.busId().equals(d.busId())).findFirst()
                    .orElse(null);
            String where;
            if (placedOn != null && !guest.node(placedOn.node()).memoryOnly()) {
                where = "on node " + placedOn.node();
                assertEquals(List.of(placedOn.node()), near, "a device on node " + placedOn.node() + ": " + d);
            } else {
                // on a memory-only node (no CPU for the kernel to give as its locality) or on no node:
                // hwloc hangs it off the machine or the package, and it gets the nodes with CPUs there
                where = placedOn != null ? "on memory-only node " + placedOn.node() : "on no node";
                assertEquals(cpuNodes, near, "fallback of a device " + where + ": " + d);
            }
            Placed p = place("numa:bind=pci:" + d.busId(), 1L << 20, -1);
            assertTrue(near.containsAll(p.placement().pagesPerNode().keySet()), p + " within " + near);
            assertEquals((1L << 20) / PAGE, p.placement().residentPages(), p.toString());
            guest.report("near PCI " + d.busId() + " (" + where + ", attached to " + d.attachedTo() + ") -> nodes "
                    + near);
        }
    }

    @Test
    void aPoolOverANumaHandlerKeepsItsBlocksOnTheBoundNode() {
        for (NumaGuest.Node n : guest.nodes()) {
            DataMemAllocator pool = DataMem.createHandler("pool(numa:bind=" + n.id() + ")").allocator();
            PoolingAllocator pooling = assertInstanceOf(PoolingAllocator.class, pool);
            List<MemorySegment> small = new ArrayList<>();
            for (int i = 0; i < 1000; i++) {
                MemorySegment s = pool.malloc(64);
                s.reinterpret(64).fill((byte) i);
                small.add(s);
            }
            MemorySegment big = pool.malloc(1L << 20);
            big.reinterpret(1L << 20).fill((byte) 1);
            Map<Integer, Long> perNode = new TreeMap<>();
            for (MemorySegment s : List.of(small.getFirst(), small.get(500), small.getLast(), big)) {
                NumaMaps m = NumaMaps.of(s);
                assertEquals("bind:" + n.id(), m.policy(), m.line());
                assertEquals(List.of(n.id()), List.copyOf(m.pagesPerNode().keySet()), m.line());
                m.pagesPerNode().forEach((k, v) -> perNode.merge(k, v, Long::sum));
            }
            guest.report(String.format("placement: %-34s 1000 x 64 B + 1 MiB: the runs' mappings %s (numa_maps)",
                    "pool(numa:bind=" + n.id() + ")", perNode));
            for (MemorySegment s : small) {
                pool.free(s, 64);
            }
            pool.free(big, 1L << 20);
            pooling.close();   // its retained runs would otherwise sit beside later blocks (and merge with them)
        }
    }

    @Test
    void boundTransparentHugePagesLandOnTheirNode() {
        for (NumaGuest.Node n : guest.nodes()) {
            String name = "numa:bind=" + n.id() + ",populate(hugepages)";
            Placed p = place(name, 8L << 20, -1);
            assertEquals(2L << 20, p.placement().pageSize(), p.toString());
            assertEquals(Map.of(n.id(), 4L), p.placement().pagesPerNode(), p.toString());
            assertTrue(p.residency().anonHugeBytes() > 0, "on transparent huge pages: " + p.residency());
            assertEquals("bind:" + n.id(), p.maps().policy(), p.toString());
        }
    }

    /** What one block got: the allocator's report and the kernel's, while it was live. */
    record Placed(String handler, MemorySegment block, NumaPlacement placement, NumaMaps maps,
                  HugePages.Residency residency) {
        @Override
        public String toString() {
            return handler + ": " + placement + "; numa_maps: " + maps.line();
        }
    }

    private Placed place(String handler, long byteSize, int allocateOnCpu) {
        return place(handler, byteSize, allocateOnCpu, -1);
    }

    /**
     * Allocates a block through a handler (on a CPU, or here for -1), touches every page (on a CPU,
     * or here), reads both placements, reports them and frees the block.
     */
    private Placed place(String handler, long byteSize, int allocateOnCpu, int touchOnCpu) {
        NumaAllocator numa = assertInstanceOf(NumaAllocator.class, DataMem.createHandler(handler).allocator(), handler);
        MemorySegment block = allocateOnCpu < 0 ? numa.malloc(byteSize)
                : PinnedThread.on(allocateOnCpu, () -> numa.malloc(byteSize));
        assertNotEquals(0, block.address(), handler + ": " + byteSize + " bytes");
        Runnable touch = () -> block.reinterpret(byteSize).fill((byte) 0x5a);
        if (touchOnCpu < 0) {
            touch.run();
        } else {
            PinnedThread.on(touchOnCpu, () -> {
                touch.run();
                return null;
            });
        }
        Placed p = new Placed(handler, block, numa.placement(block), NumaMaps.of(block),
                HugePages.residency(block).orElseThrow());
        assertTrue(p.placement().touched(), p.toString());
        long span = (byteSize + p.placement().pageSize() - 1) / p.placement().pageSize() * p.placement().pageSize();
        assertEquals(block.address(), p.maps().start(), "the block is a mapping of its own: " + p);
        assertEquals(span, p.maps().end() - p.maps().start(), "numa_maps counts this block alone: " + p);
        guest.report(String.format("placement: %-34s %s -> %s (numa_maps: %s %s, %d KiB pages)", handler,
                NumaTopology.bytes(byteSize), p.placement().pagesPerNode(), p.maps().policy(), p.maps().pagesPerNode(),
                p.maps().kernelPageSize() >> 10));
        numa.free(block, byteSize);
        return p;
    }
}
