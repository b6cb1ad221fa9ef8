package io.datamem.impl.micrometer;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.impl.StatisticsAdaptor;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
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
            case DistributionSummary s -> s.count();
            default -> throw new AssertionError(m);
        };
    }

    @Test
    void everyMeterIsPublishedWithItsTypeUnitAndTags() {
        MemorySegment before = stats.malloc(100); // counted by the counters, not by the summary
        try (DataMemMetrics metrics = DataMemMetrics.of(handler)) {
            metrics.bindTo(registry);
            MemorySegment a = stats.malloc(1000);
            MemorySegment b = stats.calloc(10, 300);
            MemorySegment c = stats.realloc(a, 1000, 4000);
            stats.free(b, 3000);
            assertEquals(0, stats.malloc(1L << 50).address());
            for (DataMemMeter m : DataMemMeter.values()) {
                Meter meter = meter(m);
                assertEquals(m.type(), meter.getId().getType(), m.name());
                assertEquals(m.baseUnit(), meter.getId().getBaseUnit(), m.name());
                assertEquals(m.description(), meter.getId().getDescription(), m.name());
                assertEquals(Set.of(Tag.of("handler", "aligned64+stats"), Tag.of("handler.version", "1"),
                        Tag.of("memory.kind", "host")), Set.copyOf(meter.getId().getTags()), m.name());
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
            DistributionSummary sizes = (DistributionSummary) meter(DataMemMeter.ALLOCATION_SIZE);
            assertEquals(2, sizes.count(), "allocations made while bound");
            assertEquals(4000, sizes.totalAmount());
            assertEquals(3000, sizes.max());
            stats.free(c, 4000);
            assertEquals(100, value(DataMemMeter.MEMORY_USED), "gauges read the statistics when polled");
        }
        assertEquals(List.of(), registry.getMeters(), "closing the binder removes its meters");
        stats.free(before, 100);
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
        assertEquals(1, other.get("datamem.allocation.size").tag("app", "test").summary().count());
        assertEquals(1, registry.get("datamem.allocation.size").summary().count());
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
