package io.datamem.impl.placement;

import io.datamem.DataMem;
import io.datamem.impl.internal.placement.NumaAllocatorImpl;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Explicit huge pages reserved per node on the guest kernel's command line: NUMA-bound 2 MiB and
 * 1 GiB blocks taken from their node's pool (checked through the pool counters, {@code move_pages}
 * and {@code numa_maps}), and a node's pool running out while other nodes still have pages: the
 * allocation returns {@code NULL}, nothing is taken from another node.
 */
@Tag(NumaGuest.TAG)
class NumaGuestHugePagesTest {

    private static final long MiB = 1L << 20;
    private static final long GiB = 1L << 30;

    private NumaGuest guest;

    @BeforeEach
    void inTheGuest() {
        guest = NumaGuest.require();
    }

    @Test
    void boundTwoMiBPagesComeFromTheirNodesPool() {
        for (NumaGuest.Node n : guest.nodes().stream().filter(n -> n.hugePages2m() >= 3).toList()) {
            long size = 4 * MiB + 1;   // 3 pages
            checkOnNode(n.id(), "numa:bind=" + n.id() + "(hugepages:2m)", 2 * MiB, size, 3);
        }
    }

    @Test
    void boundOneGiBPagesComeFromTheirNodesPool() {
        List<NumaGuest.Node> withPages = guest.nodes().stream().filter(n -> n.hugePages1g() >= 1).toList();
        assertTrue(!withPages.isEmpty(), "the guest reserves 1 GiB pages on some node");
        for (NumaGuest.Node n : withPages) {
            checkOnNode(n.id(), "numa:bind=" + n.id() + "(hugepages:1g,threshold=512m)", GiB, 600 * MiB, 1);
        }
    }

    @Test
    void aNodesPoolRunsOutWhileOthersHavePagesAndTheBlockIsRefused() {
        for (long pageSize : List.of(2 * MiB, GiB)) {
            NumaGuest.Node n = guest.nodes().stream().filter(x -> pages(x, pageSize) > 0).reduce((a, b) -> b).orElseThrow();
            long othersFree = HugePages.pool(pageSize).orElseThrow().free() - free(n.id(), pageSize);
            String name = "numa:bind=" + n.id() + "(hugepages:" + (pageSize == GiB ? "1g" : "2m") + ",threshold=0)";
            NumaAllocatorImpl a = assertInstanceOf(NumaAllocatorImpl.class, DataMem.createHandler(name).allocator());
            List<MemorySegment> taken = new ArrayList<>();
            for (long k = free(n.id(), pageSize); k > 0; k--) {
                MemorySegment p = a.malloc(pageSize);
                assertNotEquals(0, p.address(), name + ": page " + taken.size() + " of node " + n.id() + "'s pool");
                taken.add(p);
            }
            assertEquals(0, free(n.id(), pageSize), "node " + n.id() + "'s pool is empty");
            MemorySegment refused = a.malloc(pageSize);
            assertEquals(0, refused.address(), name + ": node " + n.id() + " has no page left: NULL, though "
                    + othersFree + " are free on other nodes");
            assertEquals(othersFree, HugePages.pool(pageSize).orElseThrow().free(), "no page taken from another node");
            guest.report(String.format("huge pages: %-42s %d pages of %s taken from node %d's pool, the next refused"
                    + " (NULL) with %d free on other nodes", name, taken.size(), HugePages.sizeName(pageSize), n.id(),
                    othersFree));
            for (MemorySegment p : taken) {
                a.free(p, pageSize);
            }
            assertEquals(pages(n, pageSize), free(n.id(), pageSize), "every page back in node " + n.id() + "'s pool");
        }
    }

    private void checkOnNode(int node, String name, long pageSize, long size, long pages) {
        long before = free(node, pageSize);
        NumaAllocatorImpl a = assertInstanceOf(NumaAllocatorImpl.class, DataMem.createHandler(name).allocator());
        MemorySegment p = a.malloc(size);
        assertNotEquals(0, p.address(), name);
        assertEquals(before - pages, free(node, pageSize), "taken from node " + node + "'s pool");
        NumaPlacement placed = a.placement(p);
        assertEquals(Map.of(node, pages), placed.pagesPerNode(), placed.toString());
        assertTrue(placed.matches(), placed.toString());
        NumaMaps maps = NumaMaps.of(p);
        assertEquals(pageSize, maps.kernelPageSize(), maps.line());
        assertEquals(Map.of(node, pages), maps.pagesPerNode(), maps.line());
        assertEquals("bind:" + node, maps.policy(), maps.line());
        guest.report(String.format("placement: %-42s %s -> %s pages of %s (numa_maps: %s %s, %d KiB pages)", name,
                NumaTopology.bytes(size), placed.pagesPerNode(), HugePages.sizeName(pageSize), maps.policy(),
                maps.pagesPerNode(), maps.kernelPageSize() >> 10));
        a.free(p, size);
        assertEquals(before, free(node, pageSize), "back in node " + node + "'s pool");
    }

    private static long pages(NumaGuest.Node n, long pageSize) {
        return pageSize == GiB ? n.hugePages1g() : n.hugePages2m();
    }

    private static long free(int node, long pageSize) {
        return HugePages.pools(node).stream().filter(p -> p.pageSize() == pageSize).mapToLong(HugePages.Pool::free)
                .sum();
    }
}
