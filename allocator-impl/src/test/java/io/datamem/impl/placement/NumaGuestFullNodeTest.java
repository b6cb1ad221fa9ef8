package io.datamem.impl.placement;

import io.datamem.DataMem;
import io.datamem.impl.internal.placement.NumaAllocatorImpl;
import io.datamem.impl.os.NodeMemory;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.Comparator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A node without memory left, on the smallest memory-only node of the 4-node guest (CXL-like): a
 * populated bound block larger than what the node has left is refused ({@code NULL}) before any page
 * is faulted, where the kernel's out-of-memory killer would otherwise end this JVM; a preferred block
 * spills to other nodes and is reported as placed off its node.
 */
@Tag(NumaGuest.TAG)
@Tag(NumaGuest.MEMORY_ONLY_NODES)
class NumaGuestFullNodeTest {

    private static final long MiB = 1L << 20;

    private NumaGuest guest;
    private NumaGuest.Node small;

    @BeforeEach
    void inTheGuest() {
        guest = NumaGuest.require();
        small = guest.memoryOnlyNodes().stream().min(Comparator.comparingLong(NumaGuest.Node::memoryByteSize))
                .orElseThrow(() -> new AssertionError(guest.name() + " has no memory-only node; run with tag '"
                        + NumaGuest.MEMORY_ONLY_NODES + "' excluded there"));
    }

    @Test
    void aPopulatedBindLargerThanWhatTheNodeHasLeftIsRefused() {
        long left = NodeMemory.allocatableBytes(small.id());
        assertTrue(left > 64 * MiB && left < small.memoryByteSize(), "node " + small.id() + " has " + left + " bytes left");
        String name = "numa:bind=" + small.id() + ",populate";
        NumaAllocatorImpl a = assertInstanceOf(NumaAllocatorImpl.class, DataMem.createHandler(name).allocator());
        long tooMuch = left + 64 * MiB;
        assertEquals(0, a.malloc(tooMuch).address(), name + ": " + tooMuch + " bytes with " + left + " left");
        long fits = 64 * MiB;
        MemorySegment p = a.malloc(fits);
        assertNotEquals(0, p.address(), name + ": " + fits + " bytes with " + left + " left");
        NumaPlacement placed = a.placement(p);
        assertEquals(fits / placed.pageSize(), placed.pagesPerNode().get(small.id()), placed.toString());
        guest.report(String.format("full node: %-26s %s refused (NULL) with %s left on node %d; %s -> %s",
                name, NumaTopology.bytes(tooMuch), NumaTopology.bytes(left), small.id(), NumaTopology.bytes(fits),
                placed.pagesPerNode()));
        a.free(p, fits);
    }

    @Test
    void aPreferredBlockLargerThanItsNodeSpillsAndIsReportedOffItsNode() {
        long left = NodeMemory.allocatableBytes(small.id());
        String name = "numa:preferred=" + small.id() + ",populate";
        NumaAllocatorImpl a = assertInstanceOf(NumaAllocatorImpl.class, DataMem.createHandler(name).allocator());
        long size = left + 64 * MiB;
        MemorySegment p = a.malloc(size);
        assertNotEquals(0, p.address(), name + ": a preference spills instead of failing");
        NumaPlacement placed = a.placement(p);
        assertEquals(1, a.placementMismatches(), "counted as placed off its node: " + placed);
        assertFalse(placed.matches(), placed.toString());
        assertTrue(placed.pagesPerNode().getOrDefault(small.id(), 0L) * placed.pageSize() > left / 2,
                "most of what node " + small.id() + " had is used: " + placed);
        assertTrue(placed.actualNodes().size() > 1, placed.toString());
        assertTrue(placed.toString().contains("NOT on the target nodes"), placed.toString());
        guest.report(String.format("full node: %-26s %s with %s left on node %d -> %s, reported: %s", name,
                NumaTopology.bytes(size), NumaTopology.bytes(left), small.id(), placed.pagesPerNode(),
                placed.toString().substring(placed.toString().lastIndexOf(", ") + 2)));
        a.free(p, size);
    }
}
