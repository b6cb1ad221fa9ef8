package io.datamem.impl.micrometer;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.impl.AllocatorStack;
import io.datamem.impl.adaptor.StatisticsAdaptor;
import io.datamem.impl.pool.PoolingAllocator;
import io.datamem.impl.snapshot.LayerSnapshot;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The Micrometer binder: names, types, units, tags and values of every meter. */
class DataMemMetricsTest {

    private final DataMemHandler handler = DataMem.createHandler("aligned64+stats");
    private final StatisticsAdaptor stats = (StatisticsAdaptor) handler.allocator();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    private Meter meter(DataMemMeter m) {
        return registry.get(m.meterName()).tags(DataMemMetrics.TAG_HANDLER, "aligned64+stats").meter();
    }

    private double value(DataMemMeter m) {
        return switch (meter(m)) {
            case Gauge g -> g.value();
            case FunctionCounter c -> c.count();
            default -> throw new AssertionError(m + " is neither a gauge nor a counter: " + meter(m));
        };
    }

    private static double bound(String le) {
        return le.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(le);
    }

    @Test
    void everyMeterIsPublishedWithItsTypeUnitAndTags() {
        MemorySegment before = stats.malloc(100); // counted by the counters, not by the summary
        try (DataMemMetrics metrics = DataMemMetrics.builder(handler).percentileHistogram(true).build()) {
            metrics.bindTo(registry);
            MemorySegment a = stats.malloc(1000);
            MemorySegment b = stats.calloc(10, 300);
            MemorySegment c = stats.realloc(a, 1000, 4000);
            stats.free(b, 3000);
            assertEquals(0, stats.malloc(1L << 50).address());
            for (DataMemMeter m : java.util.EnumSet.complementOf(java.util.EnumSet.of(DataMemMeter.POOL_FREE,
                    DataMemMeter.POOL_LARGEST_FREE_RUN))) {   // a stack without a pool publishes no pool meter
                Meter meter = meter(m);
                assertEquals(m.type(), meter.getId().getType(), m.name());
                assertEquals(m.baseUnit(), meter.getId().getBaseUnit(), m.name());
                assertEquals(m.description(), meter.getId().getDescription(), m.name());
                Set<Tag> expected = new java.util.HashSet<>(Set.of(Tag.of("handler", "aligned64+stats"),
                        Tag.of("handler.version", "1"), Tag.of("memory.kind", "host")));
                if (m == DataMemMeter.ALLOCATIONS_BY_SIZE) {
                    expected.add(Tag.of(DataMemMetrics.TAG_LE, meter.getId().getTag(DataMemMetrics.TAG_LE)));
                }
                assertEquals(expected, Set.copyOf(meter.getId().getTags()), m.name());
            }
            assertEquals(4100, value(DataMemMeter.MEMORY_USED));
            assertEquals(7100, value(DataMemMeter.MEMORY_PEAK));
            assertEquals(7100, value(DataMemMeter.MEMORY_ALLOCATED));
            assertEquals(3000, value(DataMemMeter.MEMORY_FREED));
            assertEquals(2, value(DataMemMeter.ALLOCATIONS_LIVE));
            assertEquals(3, value(DataMemMeter.ALLOCATIONS));
            assertEquals(1, value(DataMemMeter.FREES));
            assertEquals(1, value(DataMemMeter.REALLOCATIONS));
            assertEquals(1, value(DataMemMeter.FAILURES));
            assertEquals(4100, value(DataMemMeter.ALLOCATION_SIZE), "every allocation's bytes, before binding too");
            assertEquals(3000, value(DataMemMeter.ALLOCATION_SIZE_MAX));
            assertEquals(0, bucket(registry, "63"));
            assertEquals(2, bucket(registry, "1023"), "100 and 1000 bytes");
            assertEquals(3, bucket(registry, "16383"), "and 3000 (realloc growth is not an allocation)");
            assertEquals(3, bucket(registry, "+Inf"));
            stats.free(c, 4000);
            assertEquals(100, value(DataMemMeter.MEMORY_USED), "gauges read the statistics when polled");
        }
        assertEquals(List.of(), registry.getMeters(), "closing the binder removes its meters");
        stats.free(before, 100);
    }

    @Test
    void aPoolInTheStackPublishesItsFreeBytesAndLargestFreeRunFromItsSnapshot() {
        DataMemHandler pooled = DataMem.createHandler("pool(aligned64)+stats");
        assertTrue(registry.find(DataMemMeter.POOL_FREE.meterName()).meters().isEmpty());
        try (DataMemMetrics metrics = DataMemMetrics.builder(pooled).build()) {
            metrics.bindTo(registry);
            List<MemorySegment> blocks = new java.util.ArrayList<>();
            for (int i = 0; i < 100; i++) {
                blocks.add(pooled.allocator().malloc(1000));
            }
            for (int i = 0; i < blocks.size(); i += 2) {
                pooled.allocator().free(blocks.get(i), 1000);
            }
            PoolingAllocator pool = AllocatorStack.find(pooled, PoolingAllocator.class).orElseThrow();
            LayerSnapshot.Pool now = (LayerSnapshot.Pool) pool.snapshot();
            Gauge free = registry.get(DataMemMeter.POOL_FREE.meterName()).tag(DataMemMetrics.TAG_HANDLER,
                    "pool(aligned64)+stats").gauge();
            Gauge run = registry.get(DataMemMeter.POOL_LARGEST_FREE_RUN.meterName()).gauge();
            assertEquals(now.freeByteSize(), free.value());
            assertEquals(now.largestFreeRunByteSize(), run.value());
            assertTrue(free.value() >= 50 * 1000, "the freed half is free: " + free.value());
            assertTrue(run.value() > 0 && run.value() <= free.value(), run.value() + " of " + free.value());
            assertEquals("bytes", free.getId().getBaseUnit());
            for (int i = 1; i < blocks.size(); i += 2) {
                pooled.allocator().free(blocks.get(i), 1000);
            }
            assertTrue(free.value() > now.freeByteSize(), "read when polled");
        }
        assertTrue(registry.find(DataMemMeter.POOL_FREE.meterName()).meters().isEmpty(), "removed on close");
    }

    private static double bucket(MeterRegistry registry, String le) {
        return registry.get(DataMemMeter.ALLOCATIONS_BY_SIZE.meterName())
                .tag(DataMemMetrics.TAG_LE, le).functionCounter().count();
    }

    @Test
    void sizesAreReadFromTheAdaptorsHistogramWhenScrapedNotRecordedPerAllocation() throws Exception {
        DataMemHandler h = DataMem.createHandler("default_allocator+stats");
        StatisticsAdaptor s = (StatisticsAdaptor) h.allocator();
        try (DataMemMetrics metrics = DataMemMetrics.builder(h).percentileHistogram(true).build()) {
            metrics.bindTo(registry);
            long[] sizes = {0, 1, 100, 127, 128, 4096, 70_000};
            Thread[] threads = new Thread[4];
            for (int t = 0; t < threads.length; t++) {
                Runnable work = () -> {
                    for (int round = 0; round < 100; round++) {
                        for (long size : sizes) {
                            s.free(s.malloc(size), size);
                        }
                    }
                };
                threads[t] = t % 2 == 0 ? Thread.ofPlatform().start(work) : Thread.ofVirtual().start(work);
            }
            for (Thread t : threads) {
                t.join();
            }
            FunctionCounter count = registry.get(DataMemMeter.ALLOCATIONS.meterName()).functionCounter();
            FunctionCounter bytes = registry.get(DataMemMeter.ALLOCATION_SIZE.meterName()).functionCounter();
            assertEquals("bytes", bytes.getId().getBaseUnit());
            assertEquals(null, count.getId().getBaseUnit(), "a count has no unit");
            assertEquals(2800, count.count());
            assertEquals(400 * (1 + 100 + 127 + 128 + 4096 + 70_000), bytes.count());
            assertEquals(70_000, registry.get(DataMemMeter.ALLOCATION_SIZE_MAX.meterName()).gauge().value());
            assertEquals(800, bucket(registry, "63"), "0 and 1 bytes");
            assertEquals(2000, bucket(registry, "1023"), "and 100, 127, 128");
            assertEquals(2400, bucket(registry, "16383"), "and 4096");
            assertEquals(2800, bucket(registry, "262143"), "and 70000");
            assertEquals(List.of("63", "1023", "16383", "262143", "4194303", "67108863", "1073741823", "+Inf"),
                    registry.find(DataMemMeter.ALLOCATIONS_BY_SIZE.meterName()).functionCounters().stream()
                            .map(c -> c.getId().getTag(DataMemMetrics.TAG_LE))
                            .sorted(java.util.Comparator.comparingDouble(DataMemMetricsTest::bound)).toList(),
                    "a small set of bounds, +Inf last");
            assertEquals(2800, bucket(registry, "+Inf"));
            // Nothing was recorded per allocation: the figures are the adaptor's, read now.
            assertEquals(s.histogram().total(), (long) count.count());
            s.free(s.malloc(5), 5);
            assertEquals(2801, count.count(), "the next read sees the next allocation");
            assertEquals(801, bucket(registry, "63"));
        }
    }

    @Test
    void namesFollowMicrometerConventions() {
        for (DataMemMeter m : DataMemMeter.values()) {
            assertTrue(m.meterName().matches("datamem(\\.[a-z]+)+"), m.meterName());
        }
        assertEquals(DataMemMeter.values().length,
                Arrays.stream(DataMemMeter.values()).map(DataMemMeter::meterName).collect(Collectors.toSet()).size());
    }

    @Test
    void severalRegistriesExtraTagsAndHistograms() {
        SimpleMeterRegistry other = new SimpleMeterRegistry();
        DataMemMetrics metrics = DataMemMetrics.builder(handler).tags(Tags.of("app", "test"))
                .percentileHistogram(true).build();
        metrics.bindTo(registry);
        metrics.bindTo(other);
        MemorySegment p = stats.malloc(64);
        double count = stats.figures().allocations();
        assertEquals(count, other.get("datamem.allocations").tag("app", "test").functionCounter().count());
        assertEquals(count, registry.get("datamem.allocations").functionCounter().count());
        assertEquals(count, bucket(other, "1023"));
        stats.free(p, 64);
        metrics.close();
        metrics.close();
        assertEquals(List.of(), other.getMeters());
        assertThrows(IllegalStateException.class, () -> metrics.bindTo(registry));
        MemorySegment q = stats.malloc(64);
        stats.free(q, 64);
        assertTrue(metrics.toString().contains("handler=aligned64+stats"), metrics.toString());
    }

    @Test
    void aHandlerWithoutStatisticsIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> DataMemMetrics.of(DataMem.handler("aligned64")));
        assertEquals("handler 'aligned64' has no statistics to publish (expected: a stack with a StatisticsAdaptor,"
                + " for example 'aligned64+stats')", e.getMessage());
        DataMemHandler deeper = DataMem.createHandler("aligned64+stats+tracking");
        assertEquals(io.datamem.impl.AllocatorStack.find(deeper, StatisticsAdaptor.class).orElseThrow(),
                DataMemMetrics.of(deeper).statistics(), "found below other adaptors");
    }
}
