package io.datamem.examples.cli;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.impl.adaptor.StatisticsAdaptor;
import io.datamem.impl.micrometer.DataMemMetrics;
import io.datamem.impl.snapshot.LayerSnapshot;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Comparator;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The demo's profiled run: a compute block under {@code aligned64+stats}, its meters published
 * through Micrometer and printed as a table.
 */
final class ProfiledRun {

    private ProfiledRun() {
    }

    /**
     * Runs the block and prints the table.
     *
     * @return whether every byte was freed and nothing failed
     */
    static boolean run(PrintStream out, long elements) {
        DataMemHandler h = DataMem.createHandler("aligned64+stats");
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (DataMemMetrics metrics = DataMemMetrics.of(h)) {
            metrics.bindTo(registry);
            StatisticsAdaptor stats = metrics.statistics();
            LayerSnapshot.Statistics block;
            double sum;
            try (StatisticsAdaptor.Scope scope = stats.push()) {
                sum = DataMem.callWith(h, () -> computeBlock(elements));
                block = scope.figures();
            }
            out.println("profiled run: a compute block under '" + h.name() + "' (sum of z = " + String.format(
                    Locale.ROOT, "%.6e", sum) + "); its Micrometer meters:");
            out.printf("  %-30s %-22s %-7s %s%n", "meter", "type", "unit", "value");
            registry.getMeters().stream().sorted(Comparator.comparing(m -> m.getId().getName())).forEach(m ->
                    out.printf("  %-30s %-22s %-7s %s%n", m.getId().getName(),
                            m.getId().getType().name().toLowerCase(Locale.ROOT).replace('_', ' '),
                            m.getId().getBaseUnit() == null ? "" : m.getId().getBaseUnit(), value(m)));
            out.println("  tags of every meter: " + metrics.tags().stream().map(t -> t.getKey() + "=" + t.getValue())
                    .collect(Collectors.joining(", ")));
            out.printf("  the block's own figures (a statistics scope): %d allocations, %d reallocations, %d frees,"
                    + " peak %d bytes%n", block.allocations(), block.reallocations(), block.frees(), block.peakBytes());
            LayerSnapshot.Statistics all = stats.figures();
            return all.currentBytes() == 0 && all.failures() == 0;
        } finally {
            registry.close();
        }
    }

    private static String value(Meter m) {
        return switch (m) {
            case Gauge g -> String.format(Locale.ROOT, "%.0f", g.value());
            case FunctionCounter c -> String.format(Locale.ROOT, "%.0f", c.count());
            default -> m.measure().toString();
        };
    }

    /** x = i / n, y = 2 - x, z = 3x + y; z grows to hold x + z too; returns the sum of z. */
    private static double computeBlock(long n) {
        try (NDArray x = NDArray.empty(DType.FLOAT64, n);
             NDArray y = NDArray.empty(DType.FLOAT64, n);
             NDArray z = NDArray.zeros(DType.FLOAT64, n)) {
            MemorySegment xs = x.segment();
            MemorySegment ys = y.segment();
            for (long i = 0; i < n; i++) {
                double v = (double) i / n;
                xs.setAtIndex(ValueLayout.JAVA_DOUBLE, i, v);
                ys.setAtIndex(ValueLayout.JAVA_DOUBLE, i, 2 - v);
            }
            MemorySegment zs = z.segment();
            for (long i = 0; i < n; i++) {
                zs.setAtIndex(ValueLayout.JAVA_DOUBLE, i, 3 * xs.getAtIndex(ValueLayout.JAVA_DOUBLE, i)
                        + ys.getAtIndex(ValueLayout.JAVA_DOUBLE, i));
            }
            z.resize(2 * n); // realloc through the handler
            zs = z.segment();
            double sum = 0;
            for (long i = 0; i < n; i++) {
                double v = zs.getAtIndex(ValueLayout.JAVA_DOUBLE, i);
                zs.setAtIndex(ValueLayout.JAVA_DOUBLE, n + i, v + xs.getAtIndex(ValueLayout.JAVA_DOUBLE, i));
                sum += v;
            }
            return sum;
        }
    }
}
