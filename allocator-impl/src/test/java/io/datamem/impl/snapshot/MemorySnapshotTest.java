package io.datamem.impl.snapshot;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.impl.AllocatorStack;
import io.datamem.impl.adaptor.StatisticsAdaptor;
import io.datamem.impl.adaptor.TrackingAdaptor;
import io.datamem.impl.internal.adaptor.StatisticsAdaptorImpl;
import io.datamem.impl.internal.cpu.AlignedAllocator;
import io.datamem.impl.internal.placement.HugePageAllocatorImpl;
import io.datamem.impl.internal.placement.HugePageAllocatorImpl.Fallback;
import io.datamem.impl.internal.pool.PoolOptions;
import io.datamem.impl.internal.pool.PoolingAllocatorImpl;
import io.datamem.impl.placement.HugePageAllocator;
import io.datamem.impl.placement.HugePageAllocator.PageKind;
import io.datamem.impl.pool.PoolingAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What a snapshot says of each kind of layer, its summary, and its JSON both ways. */
class MemorySnapshotTest {

    @Test
    void everyLayerOfAStackIsDescribedOutermostFirstAndThePoolsUpstreamToo() {
        DataMemHandler h = DataMem.createHandler("pool(aligned64+stats)+stats+tracking=full+limit=1m");
        List<NDArray> arrays = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            arrays.add(DataMem.callWith(h, () -> NDArray.zeros(DType.FLOAT32, 1000)));   // 4000 bytes each
        }
        MemorySnapshot s = MemorySnapshot.take(h);
        assertEquals(1, s.handlers().size());
        MemorySnapshot.Handler hs = s.handlers().getFirst();
        assertEquals(h.name(), hs.name());
        assertEquals(List.of("limit", "tracking", "statistics", "pool", "statistics", "other"),
                hs.layers().stream().map(LayerSnapshot::kind).toList());
        assertEquals("AlignedAllocator", hs.layers().getLast().type());

        LayerSnapshot.Limit limit = assertInstanceOf(LayerSnapshot.Limit.class, hs.layers().get(0));
        assertEquals(1L << 20, limit.limitBytes());
        assertEquals(20000, limit.inUseBytes());
        LayerSnapshot.Tracking tracking = assertInstanceOf(LayerSnapshot.Tracking.class, hs.layers().get(1));
        assertEquals("full", tracking.stackTraces());
        assertEquals(5, tracking.blocks().size());
        assertEquals(20000, tracking.liveBytes());
        assertEquals(hs.blocks(), tracking.blocks());
        for (LiveBlock b : tracking.blocks()) {
            assertEquals(4000, b.byteSize());
            assertEquals(Thread.currentThread().getName(), b.thread());
            assertTrue(!b.age().isNegative() && b.time().isBefore(s.time().plusSeconds(1)), b.toString());
            assertTrue(b.site().contains("MemorySnapshotTest"), b.site());
        }
        LayerSnapshot.Statistics stats = assertInstanceOf(LayerSnapshot.Statistics.class, hs.layers().get(2));
        assertEquals(20000, stats.currentBytes());
        assertEquals(5, stats.liveAllocations());
        LayerSnapshot.Pool pool = assertInstanceOf(LayerSnapshot.Pool.class, hs.layers().get(3));
        assertEquals(5 * 4096, pool.usedByteSize(), "4000 bytes take the 4096-byte class");
        LayerSnapshot.Statistics runs = assertInstanceOf(LayerSnapshot.Statistics.class, hs.layers().get(4));
        assertEquals(pool.runByteSize(), runs.currentBytes(), "what the pool holds is what its upstream counts");
        assertEquals(20000, hs.liveBytes().orElseThrow(), "the outermost layer that knows");
        arrays.forEach(NDArray::close);
    }

    @Test
    void aPoolReportsEachClassRunAndSlabWithItsFreeBlocksAndLargestFreeRun() {
        PoolingAllocator pool = PoolingAllocatorImpl.of(AlignedAllocator.of(64),
                PoolOptions.DEFAULTS.withSlabByteSize(4096).withMaxPooledByteSize(1024));
        List<MemorySegment> blocks = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            blocks.add(pool.malloc(64));   // one slab of 64 blocks, alone in its run of 4096 bytes
        }
        blocks.sort(Comparator.comparingLong(MemorySegment::address));
        for (int i = 10; i < 20; i++) {
            pool.free(blocks.get(i), 64);
        }
        pool.free(blocks.get(30), 64);
        pool.free(blocks.get(40), 64);
        MemorySegment large = pool.malloc(5000);   // above max: passed to the upstream

        LayerSnapshot.Pool p = assertInstanceOf(LayerSnapshot.Pool.class, pool.snapshot());
        assertEquals(1, p.classes().size());
        LayerSnapshot.SizeClass c = p.classes().getFirst();
        assertEquals(64, c.byteSize());
        assertEquals(64, c.blocksPerSlab());
        assertEquals(1, c.slabs());
        assertEquals(52, c.usedBlocks());
        assertEquals(12, c.freeBlocks());
        assertEquals(12 * 64, c.freeByteSize());
        assertEquals(0, c.whollyFreeSlabs());
        assertEquals(640, c.largestFreeRunByteSize(), "blocks 10 to 19 are the longest free stretch");
        LayerSnapshot.Run run = p.runs().getFirst();
        assertEquals(blocks.getFirst().address(), run.address());
        assertEquals(4096, run.byteSize());
        assertEquals(640, run.largestFreeRunByteSize());
        LayerSnapshot.Slab slab = p.slabs().getFirst();
        assertEquals(52, slab.usedBlocks());
        assertEquals(0x3FFL << 10 | 1L << 30 | 1L << 40, slab.freeMask());
        assertEquals(Thread.currentThread().getName(), slab.owner());
        assertEquals(List.of(new LayerSnapshot.LargeBlock(large.address(), 5000)), p.largeBlocks());
        assertEquals(640, p.largestFreeRunByteSize());
        assertEquals(52 * 64, p.usedByteSize());
        assertEquals(12 * 64, p.freeByteSize());
        assertEquals(64, p.allocations(), "the pooled blocks handed out");
        assertEquals(12, p.allocations() - c.usedBlocks(), "the blocks given back");
        assertEquals(1, p.passThroughAllocations());
        assertEquals(1, p.slabAllocations());
        assertEquals(0, p.slabReleases() + p.trims() + p.failures() + p.racingDoubleFrees());
        assertEquals(p, pool.statistics(), "the same read");

        for (int i = 0; i < 64; i++) {
            if (i < 10 || i >= 20 && i != 30 && i != 40) {
                pool.free(blocks.get(i), 64);
            }
        }
        LayerSnapshot.Pool empty = (LayerSnapshot.Pool) pool.snapshot();
        assertEquals(1, empty.whollyFreeSlabs());
        assertEquals(4096, empty.largestFreeRunByteSize());
        assertEquals(0, empty.usedByteSize());
        pool.free(large, 5000);
        pool.close();
        assertEquals(List.of(), ((LayerSnapshot.Pool) pool.snapshot()).runs(), "trimmed: no run left");
    }

    @Test
    void trackedBlocksGetThePagesOfTheMappingTheyLieIn() {
        HugePageAllocator pages = HugePageAllocatorImpl.builder().pages(PageKind.TRANSPARENT).fallback(Fallback.NORMAL)
                .thresholdByteSize(0).build();
        DataMemHandler h = AllocatorStack.on(PoolingAllocatorImpl.of(pages))
                .with("tracking=off")
                .handler("pool(hugepages:thp,threshold=0)+tracking=off");
        MemorySegment a = h.allocator().malloc(1000);
        MemorySnapshot.Handler hs = MemorySnapshot.take(h).handlers().getFirst();
        LayerSnapshot.Placement placement = hs.layers(LayerSnapshot.Placement.class).getFirst();
        assertEquals("HugePageAllocator", placement.type());
        LayerSnapshot.Mapping m = placement.mappings().getFirst();
        assertTrue(m.pages().startsWith("transparent") || m.pages().equals("normal, fallback"), m.pages());
        LiveBlock b = hs.blocks().getFirst();
        assertEquals(a.address(), b.address());
        assertTrue(b.pageSize() > 0);
        assertEquals(m.pageSize(), b.pageSize());
        assertEquals(List.of(), b.nodes());
        h.allocator().free(a, 1000);
    }

    @Test
    void aHandlerWithoutFiguresIsListedByTypeAndSaysSo() {
        MemorySnapshot.Handler hs = MemorySnapshot.take(DataMem.createHandler("aligned64")).handlers().getFirst();
        assertEquals(List.of(new LayerSnapshot.Other("AlignedAllocator", Map.of())), hs.layers());
        assertTrue(hs.liveBytes().isEmpty());
        assertEquals("  handler 'aligned64': no layer keeps figures (add +stats, or +tracking to see the blocks)",
                hs.summary());
    }

    @Test
    void theSummaryNamesTheBytesLiveThePoolsFreeRunsAndTheLargestSites() {
        DataMemHandler h = DataMem.createHandler("pool(aligned64)+stats+tracking=full");
        List<NDArray> big = DataMem.callWith(h, () -> bigBuffers());
        NDArray small = DataMem.callWith(h, () -> NDArray.zeros(DType.INT8, 100));
        String summary = MemorySnapshot.take(h).summary();
        String[] lines = summary.split("\n");
        assertEquals("  handler 'pool(aligned64)+stats+tracking=full': 24676 bytes live in 4 tracked blocks", lines[0]);
        assertTrue(lines[1].startsWith("  statistics: 24676 bytes in use, peak 24676, 4 allocations, 0 frees, 0 failures"),
                summary);
        assertTrue(lines[2].startsWith("  pool: ") && lines[2].contains("largest free run"), summary);
        assertEquals("  largest consumers by allocation site:", lines[3]);
        assertTrue(lines[4].startsWith("    24576 bytes in 3 block(s) at ") && lines[4].contains("bigBuffers"), summary);
        assertTrue(lines[5].startsWith("    100 bytes in 1 block(s) at ") && lines[5].contains("lambda$"), summary);
        big.forEach(NDArray::close);
        small.close();
    }

    private static List<NDArray> bigBuffers() {
        List<NDArray> all = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            all.add(NDArray.zeros(DType.INT64, 1024));
        }
        return all;
    }

    @Test
    void jsonRoundTripsASnapshotTakenFromLiveLayers(@TempDir Path dir) throws IOException {
        DataMemHandler h = DataMem.createHandler("pool(aligned64)+stats+tracking=full+limit=64m");
        DataMemHandler plain = DataMem.createHandler("aligned64+stats");
        List<NDArray> arrays = new ArrayList<>();
        for (int i = 1; i <= 20; i++) {
            int n = i * 100;
            arrays.add(DataMem.callWith(i % 2 == 0 ? h : plain, () -> NDArray.zeros(DType.FLOAT64, n)));
        }
        MemorySnapshot s = MemorySnapshot.take(h, plain);
        String json = s.toJson();
        assertTrue(json.startsWith("{\n  \"schema\": \"datamem-snapshot\",\n  \"version\": 1,\n"), json);
        assertEquals(s, MemorySnapshot.parse(json));
        Path file = s.write(dir.resolve("s.json"));
        assertEquals(json, Files.readString(file));
        assertEquals(s, MemorySnapshot.read(file));
        arrays.forEach(NDArray::close);
    }

    @Test
    void aWorkspaceReportsItsCyclesAndTheSnapshotWalksOnIntoItsUpstream() {
        DataMemHandler h = DataMem.createHandler("workspace(pool(aligned64)+stats)");
        io.datamem.array.Workspace.run(h, () -> {
            for (int i = 0; i < 4; i++) {
                NDArray.zeros(DType.FLOAT64, 128).setDouble(i, 0);   // 1 KiB each, left to the scope
            }
        });
        MemorySnapshot s = MemorySnapshot.take(h);
        List<LayerSnapshot> layers = s.handlers().getFirst().layers();
        LayerSnapshot.Workspace w = assertInstanceOf(LayerSnapshot.Workspace.class, layers.getFirst());
        assertEquals(4096, w.lastCycleBytes());
        assertEquals(4096, w.largestCycleBytes());
        assertEquals(0, w.currentCycleBytes(), "no cycle open");
        assertEquals(1, w.cycles());
        assertTrue(w.regionBytes() >= 4096, w.toString());
        assertTrue(layers.stream().anyMatch(l -> l instanceof LayerSnapshot.Pool), "on into the upstream: " + layers);
        assertTrue(layers.stream().anyMatch(l -> l instanceof LayerSnapshot.Statistics), layers.toString());
        assertEquals(s, MemorySnapshot.parse(s.toJson()));
        assertTrue(s.summary().contains("workspace: 0 bytes in the open cycles, last cycle 4096, largest 4096"),
                s.summary());
        assertThrows(IllegalArgumentException.class, () -> new LayerSnapshot.Workspace("Workspace", -1, 0, 0, 0, 0,
                0, 0));
    }

    @Test
    void jsonRoundTripsEveryKindOfLayerAndAwkwardText() {
        Instant t = Instant.parse("2026-11-22T01:03:12.345678901Z");
        LiveBlock block = new LiveBlock(0xffff_fff0_0000_0040L, 48, "w\"orker\n\u00e9\u2028", 7, t,
                Duration.ofNanos(123_456_789), 9, List.of("com.example.A.b(A.java:1)", "java.base/java.lang.Thread.run"),
                2L << 20, List.of(0, 3));
        Map<String, String> details = new LinkedHashMap<>();
        details.put("quarantine", "4 MiB \\ \"ok\"");
        details.put("\t", "");
        MemorySnapshot s = new MemorySnapshot(t, 42, List.of(new MemorySnapshot.Handler("n\u00e4me", 3, List.of(
                new LayerSnapshot.Limit("LimitingAdaptor", 100, 48, 2),
                new LayerSnapshot.Tracking("TrackingAdaptor", "sampled", 1, List.of(block)),
                new LayerSnapshot.Statistics("StatisticsAdaptor", 48, 96, 144, 96, 3, 2, 1, 0),
                new LayerSnapshot.Pool("PoolingAllocator", 11, 12, 13, 14, 15, 16, 17,
                        List.of(new LayerSnapshot.SizeClass(48, 3072, 64, 1, 4096, 1, 0, 0, 1, 63, 1024, 4048)),
                        List.of(new LayerSnapshot.Run(0x1000, 4096, 48, 1, 1, 4048, 4048)),
                        List.of(new LayerSnapshot.Slab(0x1000, 48, 64, -2L, "main (ended)")),
                        List.of(new LayerSnapshot.LargeBlock(0x7fff_0000L, 1L << 40))),
                new LayerSnapshot.Placement("NumaAllocator", List.of(new LayerSnapshot.Mapping(0xffff_fff0_0000_0000L,
                        4096, 2L << 20, 2L << 20, "transparent, fallback", "bind", List.of(0, 3)))),
                new LayerSnapshot.Other("GuardAdaptor", details)))));
        String json = s.toJson();
        assertEquals(s, MemorySnapshot.parse(json), json);
        assertTrue(json.contains("\"address\": \"0xfffffff000000040\""), json);
        assertTrue(json.contains("\"freeMask\": \"0xfffffffffffffffe\""), json);
    }

    @Test
    void readingRefusesOtherSchemasOtherVersionsAndMissingFieldsSayingWhere() {
        String good = new MemorySnapshot(Instant.EPOCH, 1, List.of(new MemorySnapshot.Handler("h", 1,
                List.of(new LayerSnapshot.Limit("LimitingAdaptor", 1, 0, 0))))).toJson();
        assertEquals(1, MemorySnapshot.parse(good).handlers().size());
        IllegalArgumentException schema = assertThrows(IllegalArgumentException.class,
                () -> MemorySnapshot.parse(good.replace("datamem-snapshot", "other")));
        assertEquals("schema: 'other' (expected: 'datamem-snapshot')", schema.getMessage());
        IllegalArgumentException version = assertThrows(IllegalArgumentException.class,
                () -> MemorySnapshot.parse(good.replace("\"version\": 1,\n  \"time\"", "\"version\": 2,\n  \"time\"")));
        assertTrue(version.getMessage().startsWith("version: 2 (expected: 1"), version.getMessage());
        IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
                () -> MemorySnapshot.parse(good.replace("\"inUseBytes\": 0, ", "")));
        assertEquals("the document.handlers[0].layers[0]: the field 'inUseBytes' is missing", missing.getMessage());
        IllegalArgumentException negative = assertThrows(IllegalArgumentException.class,
                () -> MemorySnapshot.parse(good.replace("\"inUseBytes\": 0", "\"inUseBytes\": -5")));
        assertTrue(negative.getMessage().startsWith("the document.handlers[0].layers[0]: limit 1, in use -5"),
                negative.getMessage());
        IllegalArgumentException broken = assertThrows(IllegalArgumentException.class,
                () -> MemorySnapshot.parse(good.substring(0, good.length() - 3)));
        assertTrue(broken.getMessage().startsWith("not JSON: "), broken.getMessage());
        assertEquals(1, MemorySnapshot.parse(good.replace("\"refusals\": 0", "\"refusals\": 0, \"later\": [1.5, true,"
                + " null, {}]")).handlers().size(), "fields it does not know are ignored");
    }

    @Test
    void aPoolSectionWithoutItsCountersReadsThemAsZero() {
        LayerSnapshot.Pool pool = new LayerSnapshot.Pool("PoolingAllocator", 1, 2, 3, 4, 5, 6, 7, List.of(), List.of(),
                List.of(), List.of());
        String json = new MemorySnapshot(Instant.EPOCH, 1, List.of(new MemorySnapshot.Handler("h", 1,
                List.of(pool)))).toJson();
        String older = json;   // as written before the pool's counters were part of the section
        for (String field : List.of("allocations", "passThroughAllocations", "failures", "slabAllocations",
                "slabReleases", "trims", "racingDoubleFrees")) {
            older = older.replaceFirst("\"" + field + "\": \\d+,\\s*", "");
        }
        assertFalse(older.contains("\"trims\""), older);
        assertEquals(new LayerSnapshot.Pool("PoolingAllocator", 0, 0, 0, 0, 0, 0, 0, List.of(), List.of(), List.of(),
                List.of()), MemorySnapshot.parse(older).handlers().getFirst().layers().getFirst(), older);
        assertThrows(IllegalArgumentException.class, () -> MemorySnapshot.parse(json.replace("\"trims\": 6",
                "\"trims\": -6")));
    }

    @Test
    void theRecordsRefuseFiguresThatDoNotAddUp() {
        assertThrows(IllegalArgumentException.class,
                () -> new LayerSnapshot.SizeClass(64, 4096, 64, 1, 4096, 1, 0, 0, 60, 3, 0, 0));   // 63 of 64 blocks
        assertThrows(IllegalArgumentException.class,
                () -> new LayerSnapshot.SizeClass(64, 4096, 64, 1, 8192, 1, 0, 0, 60, 4, 0, 0));   // a run too long
        assertThrows(IllegalArgumentException.class,
                () -> new LayerSnapshot.Slab(0, 64, 8, 1L << 8, "main"));   // a free bit past the blocks
        assertThrows(IllegalArgumentException.class,
                () -> new LayerSnapshot.Run(0, 4096, 64, 1, 1, 100, 200));   // a free run longer than the free bytes
    }

    @Test
    void theSiteIsTheFirstFrameOutsideDatamemAndTheJdk() {
        LiveBlock b = new LiveBlock(16, 8, "main", 1, Instant.EPOCH, Duration.ZERO, 1, List.of(
                "io.datamem.array.NDArray.allocate(NDArray.java:247)",
                "app//io.datamem.DataMem.callWith(DataMem.java:174)",
                "java.base/java.lang.ScopedValue$Carrier.call(ScopedValue.java:419)",
                "loader/mod@1.0/com.example.Foo$$Lambda/0x01.run(Unknown Source)",
                "com.example.Foo.main(Foo.java:3)"), 0, List.of());
        assertEquals("loader/mod@1.0/com.example.Foo$$Lambda/0x01.run(Unknown Source)", b.site());
        LiveBlock inside = b.withPlacement(4096, List.of(1));
        assertEquals(List.of(1), inside.nodes());
        LiveBlock onlyLibrary = new LiveBlock(16, 8, "main", 1, Instant.EPOCH, Duration.ZERO, 1,
                List.of("io.datamem.impl.pool.PoolingAllocator.malloc(PoolingAllocator.java:1)"), 0, List.of());
        assertEquals("io.datamem.impl.pool.PoolingAllocator.malloc(PoolingAllocator.java:1)", onlyLibrary.site(),
                "the first frame when every frame is datamem's");
        assertEquals("", new LiveBlock(16, 8, "main", 1, Instant.EPOCH, Duration.ZERO, 1, List.of(), 0, List.of())
                .site());
    }

    @Test
    void aPlacementLayerFindsTheMappingHoldingAnAddress() {
        LayerSnapshot.Placement p = new LayerSnapshot.Placement("HugePageAllocator", List.of(
                new LayerSnapshot.Mapping(0x40_0000, 100, 2L << 20, 2L << 20, "transparent", "", List.of()),
                new LayerSnapshot.Mapping(0x1000, 10, 4096, 4096, "normal", "bind", List.of(0))));
        assertEquals(0x1000, p.mappings().getFirst().address(), "sorted by address");
        assertEquals(0x1000, p.find(0x1fff).address());
        assertEquals(null, p.find(0x2000));
        assertEquals(0x40_0000, p.find(0x40_0000 + (2L << 20) - 1).address());
        assertEquals(null, p.find(0xfff));
    }

    @Test
    void aStatisticsLayerReadsNoNegativeFigures() {
        StatisticsAdaptor stats = StatisticsAdaptorImpl.of(AlignedAllocator.of(64));
        MemorySegment p = stats.malloc(100);
        LayerSnapshot.Statistics s = (LayerSnapshot.Statistics) stats.snapshot();
        assertEquals(100, s.currentBytes());
        assertEquals(1, s.liveAllocations());
        stats.free(p, 100);
    }
}
