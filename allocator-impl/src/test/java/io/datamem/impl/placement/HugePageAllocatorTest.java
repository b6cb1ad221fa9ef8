package io.datamem.impl.placement;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.Device;
import io.datamem.MemoryKind;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.impl.adaptor.StatisticsAdaptor;
import io.datamem.impl.internal.cpu.AlignedAllocator;
import io.datamem.impl.internal.placement.HugePageAllocatorImpl.Fallback;
import io.datamem.impl.internal.placement.HugePageAllocatorImpl;
import io.datamem.impl.placement.HugePageAllocator.PageKind;
import io.datamem.impl.snapshot.LayerSnapshot;
import io.datamem.internal.Libc;
import io.datamem.testing.CountingAllocator;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Transparent huge pages proven through {@code /proc/self/smaps}, the threshold, sizes rounded to
 * pages but freed with the caller's size, realloc across the threshold and through mremap,
 * fallbacks recorded and counted, handler names and their errors.
 */
@Tag("hugepages")
class HugePageAllocatorTest {

    private static final long MiB = 1L << 20;
    private static final long THP = PageKind.TRANSPARENT.pageSize();

    @BeforeEach
    void transparentHugePagesAreOn() {
        Assumptions.assumeTrue(HugePages.transparentMode().usable(), () -> "skipped: transparent huge pages are "
                + HugePages.transparentMode() + " here; enable: echo madvise > /sys/kernel/mm/transparent_hugepage/enabled");
    }

    @Test
    void aTouchedTransparentBlockIsBackedByAnonHugePages() {
        HugePageAllocatorImpl a = HugePageAllocatorImpl.transparent();
        long size = 8 * MiB;
        MemorySegment p = a.malloc(size);
        assertEquals(0, p.address() % THP, "aligned to the transparent huge page size");
        LayerSnapshot.Mapping m = a.mapping(p).orElseThrow();
        assertEquals(new LayerSnapshot.Mapping(p.address(), size, size, THP, "transparent", "", List.of()), m);
        assertEquals(THP, a.traitsOf(p).pageSize());
        p.reinterpret(size).fill((byte) 0x5a);
        HugePages.Residency r = HugePages.residency(p).orElseThrow();
        assertTrue(r.thpEligible(), r.toString());
        assertTrue(r.anonHugeBytes() >= THP, "the touched block is on transparent huge pages: " + r);
        assertEquals(1, a.mappingCount(PageKind.TRANSPARENT));
        a.free(p, size);
        assertEquals(0, a.snapshot().mappings().size());
    }

    @Test
    void requestsBelowTheThresholdGoUpstream() {
        CountingAllocator upstream = new CountingAllocator(DataMem.builtinDefault().allocator());
        HugePageAllocatorImpl a = HugePageAllocatorImpl.builder().upstream(upstream).build();
        MemorySegment small = a.malloc(HugePageAllocatorImpl.DEFAULT_THRESHOLD - 1);
        MemorySegment big = a.malloc(HugePageAllocatorImpl.DEFAULT_THRESHOLD);
        assertTrue(a.mapping(small).isEmpty());
        assertEquals(DataMem.builtinDefault().allocator().traits(), a.traitsOf(small));
        assertTrue(a.mapping(big).isPresent());
        assertEquals(1, upstream.liveBlocks());
        assertEquals(16, a.traits().byteAlignment(), "small blocks carry the upstream's alignment");
        assertEquals(Libc.pageSize(), a.traits().pageSize());
        a.free(small, HugePageAllocatorImpl.DEFAULT_THRESHOLD - 1);
        a.free(big, HugePageAllocatorImpl.DEFAULT_THRESHOLD);
        assertEquals(0, upstream.liveBlocks());
        HugePageAllocatorImpl all = HugePageAllocatorImpl.builder().thresholdByteSize(0).build();
        assertEquals(THP, all.traits().byteAlignment(), "everything mapped: huge-page aligned");
        assertEquals(THP, all.traits().pageSize());
        MemorySegment zero = all.malloc(0);
        assertEquals(THP, all.mapping(zero).orElseThrow().mappedByteSize());
        all.free(zero, 0);
        assertEquals(Libc.pageSize(), HugePageAllocatorImpl.builder().thresholdByteSize(0).fallback(Fallback.NORMAL)
                .build().traits().byteAlignment());
    }

    @Test
    void sizesAreRoundedToPagesButFreedWithTheCallersSize() {
        HugePageAllocatorImpl a = HugePageAllocatorImpl.transparent();
        long size = 4 * MiB + 3;
        MemorySegment p = a.calloc(size, 1);
        assertEquals(6 * MiB, a.mapping(p).orElseThrow().mappedByteSize());
        assertEquals(size, a.mapping(p).orElseThrow().byteSize());
        assertEquals("byteSize: " + (6 * MiB) + " (expected: " + size + ", the size of the block at 0x"
                + Long.toHexString(p.address()) + ")", assertThrows(IllegalArgumentException.class,
                () -> a.free(p, 6 * MiB)).getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> a.free(p, 100)).getMessage()
                .contains("the size of the mapped block"), "a mapped block freed with a small size is refused, "
                + "not passed to the upstream");
        a.free(p, size);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> a.free(p, size)).getMessage()
                .contains("is not a live mapped block"), "double free");
    }

    @Test
    void reallocCrossesTheThresholdAndGrowsWithMremapKeepingData() {
        CountingAllocator upstream = new CountingAllocator(DataMem.builtinDefault().allocator());
        HugePageAllocatorImpl a = HugePageAllocatorImpl.builder().upstream(upstream).build();
        byte[] head = new byte[4096];
        new java.util.Random(5).nextBytes(head);
        MemorySegment p = a.malloc(1 * MiB);
        MemorySegment.copy(head, 0, p.reinterpret(4096), ValueLayout.JAVA_BYTE, 0, 4096);
        MemorySegment q = a.realloc(p, MiB, 6 * MiB);                 // upstream -> mapping
        assertEquals(0, upstream.liveBlocks());
        assertTrue(a.mapping(q).isPresent());
        q.reinterpret(6 * MiB).set(ValueLayout.JAVA_BYTE, 6 * MiB - 1, (byte) 1);
        MemorySegment r = a.realloc(q, 6 * MiB, 64 * MiB);            // mremap, in place or moved
        assertEquals(0, r.address() % THP, "still aligned after moving");
        assertEquals(64 * MiB, a.mapping(r).orElseThrow().mappedByteSize());
        assertArrayEquals(head, r.reinterpret(4096).toArray(ValueLayout.JAVA_BYTE));
        assertEquals(1, r.reinterpret(64 * MiB).get(ValueLayout.JAVA_BYTE, 6 * MiB - 1));
        r.reinterpret(64 * MiB).set(ValueLayout.JAVA_BYTE, 64 * MiB - 1, (byte) 2);
        MemorySegment s = a.realloc(r, 64 * MiB, 5 * MiB);            // shrink in place
        assertEquals(r.address(), s.address());
        assertEquals(6 * MiB, a.mapping(s).orElseThrow().mappedByteSize());
        MemorySegment t = a.realloc(s, 5 * MiB, 4096);                 // mapping -> upstream
        assertEquals(1, upstream.liveBlocks());
        assertArrayEquals(head, t.reinterpret(4096).toArray(ValueLayout.JAVA_BYTE));
        assertEquals(0, a.snapshot().mappings().size());
        a.free(t, 4096);
        assertEquals(0, upstream.liveBlocks());
    }

    @Test
    void explicitPagesFallBackAsToldAndEveryFallbackIsRecordedAndCounted() {
        HugePages.Pool pool = HugePages.pool(2 * MiB).orElse(null);
        Assumptions.assumeTrue(pool != null, "skipped: this kernel offers no 2 MiB explicit huge pages");
        long size = (pool.available() + 2) * 2 * MiB;   // more than the pool can give now, above the threshold
        Assumptions.assumeTrue(size <= 256 * MiB, () -> "skipped: " + pool.available() + " free 2 MiB pages are "
                + "reserved on this machine; the test needs the pool nearly empty to see a fallback");
        HugePageAllocatorImpl normal = HugePageAllocatorImpl.builder().pages(PageKind.HUGETLB_2M).fallback(Fallback.NORMAL)
                .build();
        assertEquals(List.of(PageKind.HUGETLB_2M, PageKind.NORMAL), normal.pageKinds());
        MemorySegment p = normal.malloc(size);
        LayerSnapshot.Mapping m = normal.mapping(p).orElseThrow();
        assertEquals("normal, fallback", m.pages());
        assertTrue(m.pages().endsWith(", fallback"), "a fallback");
        assertEquals(Libc.pageSize(), normal.traitsOf(p).pageSize(), "the traits say what the block got");
        assertEquals(1, normal.fallbacks());
        assertEquals(1, normal.mappingCount(PageKind.NORMAL));
        assertEquals(0, normal.mappingCount(PageKind.HUGETLB_2M));
        normal.free(p, size);

        HugePageAllocatorImpl thp = HugePageAllocatorImpl.builder().pages(PageKind.HUGETLB_2M).fallback(Fallback.TRANSPARENT)
                .build();
        MemorySegment q = thp.malloc(size);
        assertEquals("transparent, fallback", thp.mapping(q).orElseThrow().pages());
        assertEquals(1, thp.fallbacks());
        thp.free(q, size);

        if (pool.total() == 0 && pool.available() == 0) {
            // nothing reserved: without a fallback every mapping would fail, so the allocator is refused
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> HugePageAllocatorImpl.builder().pages(PageKind.HUGETLB_2M).build());
            assertTrue(e.getMessage().contains("no 2 MiB huge pages are reserved"), e.getMessage());
        } else {
            HugePageAllocatorImpl fail = HugePageAllocatorImpl.builder().pages(PageKind.HUGETLB_2M).build();
            assertEquals(0, fail.malloc(size).address(), "no fallback: NULL");
            assertEquals(0, fail.fallbacks());
            assertEquals(0, fail.snapshot().mappings().size());
        }
    }

    @Test
    void arraysOnHugePagesAreCpuHostMemoryWithTheirPageSize() {
        DataMemHandler h = DataMem.createHandler("hugepages");
        try (NDArray big = DataMem.callWith(h, () -> NDArray.zeros(DType.FLOAT32, 1024, 1024));
             NDArray small = DataMem.callWith(h, () -> NDArray.zeros(DType.FLOAT32, 16))) {
            assertEquals(MemoryKind.HOST, big.traits().kind());
            assertEquals(Device.CPU, big.traits().device());
            assertTrue(big.traits().hostAccessible());
            assertEquals(THP, big.traits().pageSize(), "4 MiB array on transparent huge pages");
            assertEquals(Libc.pageSize(), small.traits().pageSize(), "64-byte array from the upstream");
            big.fill(1.5);
            assertEquals(1.5, big.getDouble(1023, 1023));
        }
    }

    @Test
    void handlerNamesParseTheirOptionsAndUpstream() {
        HugePageAllocatorImpl plain = assertInstanceOf(HugePageAllocatorImpl.class, DataMem.createHandler("hugepages")
                .allocator());
        assertEquals(PageKind.TRANSPARENT, plain.pages());
        assertEquals(Fallback.FAIL, plain.fallback());
        assertEquals(4 * MiB, plain.thresholdByteSize());
        assertEquals(DataMem.builtinDefault().allocator(), plain.upstream());
        Assumptions.assumeTrue(HugePages.pool(2 * MiB).isPresent(), "skipped: no 2 MiB explicit huge pages here");
        HugePageAllocatorImpl opts = (HugePageAllocatorImpl) DataMem.createHandler(
                "hugepages:2m,fallback=thp,threshold=8m(aligned64)").allocator();
        assertEquals(PageKind.HUGETLB_2M, opts.pages());
        assertEquals(Fallback.TRANSPARENT, opts.fallback());
        assertEquals(8 * MiB, opts.thresholdByteSize());
        assertEquals(64, assertInstanceOf(AlignedAllocator.class, opts.upstream()).byteAlignment());
        assertEquals(64, opts.traits().byteAlignment());
        assertEquals(Fallback.NORMAL, ((HugePageAllocatorImpl) DataMem.createHandler("hugepages:thp,fallback=normal")
                .allocator()).fallback());
        assertEquals(0, ((HugePageAllocatorImpl) DataMem.createHandler("hugepages:threshold=0").allocator())
                .thresholdByteSize());
        StatisticsAdaptor s = assertInstanceOf(StatisticsAdaptor.class,
                DataMem.createHandler("hugepages:2m,fallback=normal+stats").allocator());
        assertInstanceOf(HugePageAllocatorImpl.class, s.upstream());
        for (String[] c : new String[][] {{"hugepages:3m", "unknown option '3m'"},
                {"hugepages:fallback=maybe", "fallback=maybe (expected: fail, thp or normal)"},
                {"hugepages:threshold=lots", "threshold: 'lots' (expected: bytes, optionally with k, m, g or t, powers of 1024)"},
                {"hugepages:fallback=normal,2m", "the page size '2m' must come first"},
                {"hugepages()", "empty parentheses"}, {"hugepages:", "empty option"},
                {"hugepages:thp,fallback=thp", "fallback: TRANSPARENT for transparent pages"}}) {
            String m = assertThrows(IllegalArgumentException.class, () -> DataMem.createHandler(c[0])).getMessage();
            assertTrue(m.contains(c[1]), c[0] + ": " + m);
        }
    }

    @Test
    void builderRejectsWhatCannotWork() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> HugePageAllocatorImpl.builder()
                .pages(PageKind.NORMAL)).getMessage().contains("normal pages are a fallback"));
        assertEquals("thresholdByteSize: -1 (expected: >= 0 and <= 144115188075855872, the 2^57-byte address-space "
                + "limit)", assertThrows(IllegalArgumentException.class,
                () -> HugePageAllocatorImpl.builder().thresholdByteSize(-1)).getMessage());
        assertThrows(NullPointerException.class, () -> HugePageAllocatorImpl.builder().upstream(null));
        assertFalse(PageKind.TRANSPARENT.explicit());
        assertTrue(PageKind.HUGETLB_1G.explicit());
        assertEquals(1L << 30, PageKind.HUGETLB_1G.pageSize());
    }

    @Test
    void theMachineReportNamesEveryPoolAndTheTransparentMode() {
        String r = HugePages.report();
        assertTrue(r.startsWith("transparent huge pages: " + HugePages.transparentMode().name().toLowerCase()), r);
        for (HugePages.Pool p : HugePages.pools()) {
            assertTrue(r.contains("explicit huge pages " + HugePages.sizeName(p.pageSize()) + ": " + p.total()
                    + " in the pool"), r);
            assertEquals(-1, p.node(), "system-wide pools");
        }
        assertTrue(HugePages.residency(MemorySegment.ofAddress(8)).isEmpty(), "no mapping at address 8");
    }
}
