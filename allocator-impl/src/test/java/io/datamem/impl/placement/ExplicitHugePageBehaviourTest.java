package io.datamem.impl.placement;

import io.datamem.DataMem;
import io.datamem.impl.internal.placement.HugePageAllocatorImpl.Fallback;
import io.datamem.impl.internal.placement.HugePageAllocatorImpl;
import io.datamem.impl.placement.HugePageAllocator.PageKind;
import io.datamem.impl.internal.placement.NumaAllocatorImpl;
import io.datamem.impl.snapshot.LayerSnapshot;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Explicit 2 MiB pages with a pool of exactly known size (8 pages reserved for the run, as root):
 * blocks really on hugetlb pages, the pool running out, the fallback counted, and NUMA-bound explicit
 * huge pages (populated and verified at allocation).
 */
@Tag("hugepages")
class ExplicitHugePageBehaviourTest {

    private static final long MiB = 1L << 20;
    private static HugePageReservation reservation;

    @BeforeAll
    static void reserve() {
        reservation = HugePageReservation.reserve(2 * MiB, 8);
    }

    /** Skips each test, counted as skipped, when no pages could be reserved. */
    @BeforeEach
    void needReservedPages() {
        Assumptions.assumeTrue(reservation.skipReason() == null, () -> "skipped: " + reservation.skipReason());
    }

    @AfterAll
    static void restore() {
        if (reservation != null) {
            reservation.close();
        }
    }

    @Test
    void blocksLiveOnHugetlbPagesUntilThePoolRunsOutThenFallBack() {
        long free = HugePages.pool(2 * MiB).orElseThrow().available();
        HugePageAllocatorImpl a = HugePageAllocatorImpl.builder().pages(PageKind.HUGETLB_2M).fallback(Fallback.TRANSPARENT)
                .build();
        long size = 8 * MiB;
        MemorySegment p = a.malloc(size);
        LayerSnapshot.Mapping m = a.mapping(p).orElseThrow();
        assertEquals("hugetlb_2m", m.pages());
        assertEquals(0, p.address() % (2 * MiB));
        p.reinterpret(size).fill((byte) 1);
        HugePages.Residency r = HugePages.residency(p).orElseThrow();
        assertEquals(2 * MiB, r.kernelPageSize(), r.toString());
        assertEquals(size, r.hugetlbBytes(), r.toString());
        assertEquals(free - 4, HugePages.pool(2 * MiB).orElseThrow().available(), "4 pages taken from the pool");
        long rest = (free - 4) * 2 * MiB + 2 * MiB;     // one page more than what is left
        MemorySegment q = a.malloc(rest);
        assertEquals("transparent, fallback", a.mapping(q).orElseThrow().pages(), "the pool ran out: transparent pages");
        assertEquals(1, a.fallbacks());
        MemorySegment grown = a.realloc(p, size, 10 * MiB);   // explicit pages move by copying
        assertEquals(1, grown.reinterpret(10 * MiB).get(java.lang.foreign.ValueLayout.JAVA_BYTE, size - 1));
        a.free(grown, 10 * MiB);
        a.free(q, rest);
        assertEquals(0, a.snapshot().mappings().size());
        assertEquals(free, HugePages.pool(2 * MiB).orElseThrow().available(), "every page back in the pool");
    }

    @Test
    @Tag("numa")
    void numaBoundExplicitHugePagesArePopulatedAndVerified() {
        int node = NumaTopology.current().nodes().stream().filter(n -> n.memoryByteSize() > 0).findFirst()
                .orElseThrow().id();
        List<HugePages.Pool> onNode = HugePages.pools(node);
        Assumptions.assumeTrue(onNode.stream().anyMatch(p -> p.pageSize() == 2 * MiB && p.free() >= 4),
                () -> "skipped: node " + node + " has fewer than 4 free 2 MiB pages: " + onNode);
        NumaAllocatorImpl a = assertInstanceOf(NumaAllocatorImpl.class,
                DataMem.createHandler("numa:bind=" + node + "(hugepages:2m)").allocator());
        long size = 4 * MiB + 1;
        MemorySegment p = a.malloc(size);
        LayerSnapshot.Mapping m = a.hugePages().orElseThrow().mapping(p).orElseThrow();
        assertEquals("hugetlb_2m", m.pages());
        NumaPlacement placed = a.placement(p);
        assertEquals(3, placed.totalPages());
        assertEquals(3, placed.residentPages(), "bound explicit pages are faulted in at allocation: " + placed);
        assertEquals(List.of(node), placed.actualNodes());
        assertEquals(1, a.verifiedBlocks());
        assertTrue(placed.matches());
        a.free(p, size);
    }
}
