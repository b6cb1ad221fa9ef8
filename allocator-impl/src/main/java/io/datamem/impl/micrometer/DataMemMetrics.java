package io.datamem.impl.micrometer;

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
import io.micrometer.core.instrument.binder.MeterBinder;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.function.ToDoubleFunction;

/**
 * Publishes the statistics of a handler to Micrometer: the {@link DataMemMeter meters} listed there,
 * tagged with the handler's name, version and memory kind (never an object's hash code).
 *
 * <pre>{@code
 * DataMemHandler h = DataMem.handler("aligned64+stats");
 * try (DataMemMetrics metrics = DataMemMetrics.of(h)) {
 *     metrics.bindTo(registry);
 *     ...
 * }                                   // removes the meters from every registry it was bound to
 * }</pre>
 *
 * <p>The handler's stack must contain a {@link StatisticsAdaptor} ({@code +stats}). Every meter reads
 * the adaptor's figures when the registry polls it, nothing is recorded per allocation: the sizes
 * of the allocations are read at scrape time from the adaptor's own histogram (their number
 * {@link DataMemMeter#ALLOCATIONS}, their bytes {@link DataMemMeter#ALLOCATION_SIZE}, the largest
 * {@link DataMemMeter#ALLOCATION_SIZE_MAX}, over the statistics' whole life), and with
 * {@link Builder#percentileHistogram(boolean)} a few of its power-of-two bounds
 * (63, 1023, 16383, 262143, 4194303, 67108863 and 1073741823 bytes, and {@code +Inf}) are published as cumulative {@link DataMemMeter#ALLOCATIONS_BY_SIZE}
 * counters. Bind a binder to
 * several registries if needed; give handlers unique names within a registry (or add a
 * distinguishing tag), since meters are identified by name and tags. Thread-safe.
 */
@SuppressWarnings("exports") // Micrometer is an optional dependency: users of this package require it
public final class DataMemMetrics implements MeterBinder, AutoCloseable {

    /** The tag holding the handler's name. */
    public static final String TAG_HANDLER = "handler";
    /** The tag holding the handler's version. */
    public static final String TAG_VERSION = "handler.version";
    /** The tag holding the handler's memory kind, in lower case. */
    public static final String TAG_MEMORY_KIND = "memory.kind";
    /**
     * The tag of {@link DataMemMeter#ALLOCATIONS_BY_SIZE} holding a bucket's upper bound in bytes,
     * as Prometheus names histogram bounds.
     */
    public static final String TAG_LE = "le";

    /**
     * The histogram buckets {@link DataMemMeter#ALLOCATIONS_BY_SIZE} is published for: bucket
     * {@code k} ends at 2<sup>k</sup> - 1 bytes, so one bound every factor of 16 from 63 bytes to
     * 1 GiB - 1, then the last bucket, published as {@code +Inf}.
     */
    private static final int[] SIZE_BUCKETS = {6, 10, 14, 18, 22, 26, 30, StatisticsAdaptor.HISTOGRAM_BUCKETS - 1};

    private final StatisticsAdaptor statistics;
    private final PoolingAllocator pool;   // the stack's pool, or null
    private final Tags tags;
    private final boolean percentileHistogram;
    private final Object lock = new Object();
    // Guarded by 'lock'.
    private final List<Bound> bound = new ArrayList<>();
    private boolean closed;

    private record Bound(MeterRegistry registry, List<Meter> meters) {
    }

    private DataMemMetrics(Builder b) {
        this.statistics = b.statistics;
        this.pool = AllocatorStack.find(b.handler, PoolingAllocator.class).orElse(null);
        this.tags = Tags.of(TAG_HANDLER, b.handler.name(), TAG_VERSION, Integer.toString(b.handler.version()),
                TAG_MEMORY_KIND, b.handler.traits().kind().name().toLowerCase(Locale.ROOT)).and(b.extraTags);
        this.percentileHistogram = b.percentileHistogram;
    }

    /**
     * A binder for a handler's statistics, with the standard tags.
     *
     * @param handler a handler whose stack contains a {@link StatisticsAdaptor}
     * @return the binder
     * @throws NullPointerException     if {@code handler} is null
     * @throws IllegalArgumentException if the handler has no statistics
     */
    public static DataMemMetrics of(DataMemHandler handler) {
        return builder(handler).build();
    }

    /**
     * A builder for a handler's binder.
     *
     * @param handler a handler whose stack contains a {@link StatisticsAdaptor}
     * @return the builder
     * @throws NullPointerException     if {@code handler} is null
     * @throws IllegalArgumentException if the handler has no statistics
     */
    public static Builder builder(DataMemHandler handler) {
        return new Builder(Objects.requireNonNull(handler, "handler"));
    }

    /** Options of a {@link DataMemMetrics}. */
    public static final class Builder {
        private final DataMemHandler handler;
        private final StatisticsAdaptor statistics;
        private Tags extraTags = Tags.empty();
        private boolean percentileHistogram;

        private Builder(DataMemHandler handler) {
            this.handler = handler;
            this.statistics = AllocatorStack.find(handler, StatisticsAdaptor.class).orElseThrow(() ->
                    new IllegalArgumentException("handler '" + handler.name() + "' has no statistics to publish"
                            + " (expected: a stack with a StatisticsAdaptor, for example '" + handler.name()
                            + "+stats')"));
        }

        /**
         * Adds tags to every meter.
         *
         * @param extra the tags
         * @return this builder
         * @throws NullPointerException if {@code extra} is null
         */
        public Builder tags(Iterable<Tag> extra) {
            this.extraTags = this.extraTags.and(Objects.requireNonNull(extra, "extra"));
            return this;
        }

        /**
         * Whether the adaptor's size histogram is also published, as one cumulative
         * {@link DataMemMeter#ALLOCATIONS_BY_SIZE} counter per bound
         * (63, 1023, 16383, 262143, 4194303, 67108863, 1073741823 bytes and {@code +Inf}; tag {@value DataMemMetrics#TAG_LE}: allocations
         * of at most that many bytes), buckets a Prometheus server can aggregate. Off by default.
         *
         * @param enabled whether to publish it
         * @return this builder
         */
        public Builder percentileHistogram(boolean enabled) {
            this.percentileHistogram = enabled;
            return this;
        }

        /**
         * Builds the binder.
         *
         * @return the binder, bound to no registry yet
         */
        public DataMemMetrics build() {
            return new DataMemMetrics(this);
        }
    }

    /**
     * The tags every meter carries.
     *
     * @return the tags
     */
    public Tags tags() {
        return tags;
    }

    /**
     * The statistics published.
     *
     * @return the adaptor
     */
    public StatisticsAdaptor statistics() {
        return statistics;
    }

    /**
     * Registers the meters in a registry.
     *
     * @param registry the registry
     * @throws NullPointerException  if {@code registry} is null
     * @throws IllegalStateException if the binder is closed
     */
    @Override
    public void bindTo(MeterRegistry registry) {
        Objects.requireNonNull(registry, "registry");
        synchronized (lock) {
            if (closed) {
                throw new IllegalStateException("bindTo: " + this + " is closed");
            }
            List<Meter> meters = new ArrayList<>();
            meters.add(gauge(registry, DataMemMeter.MEMORY_USED, s -> s.figures().currentBytes()));
            meters.add(gauge(registry, DataMemMeter.MEMORY_PEAK, s -> s.figures().peakBytes()));
            meters.add(gauge(registry, DataMemMeter.ALLOCATIONS_LIVE, s -> s.figures().liveAllocations()));
            meters.add(counter(registry, DataMemMeter.MEMORY_ALLOCATED, s -> s.figures().allocatedBytes()));
            meters.add(counter(registry, DataMemMeter.MEMORY_FREED, s -> s.figures().freedBytes()));
            meters.add(counter(registry, DataMemMeter.ALLOCATIONS, s -> s.figures().allocations()));
            meters.add(counter(registry, DataMemMeter.FREES, s -> s.figures().frees()));
            meters.add(counter(registry, DataMemMeter.REALLOCATIONS, s -> s.figures().reallocations()));
            meters.add(counter(registry, DataMemMeter.FAILURES, s -> s.figures().failures()));
            meters.add(counter(registry, DataMemMeter.ALLOCATION_SIZE, s -> s.histogram().totalBytes()));
            meters.add(gauge(registry, DataMemMeter.ALLOCATION_SIZE_MAX, s -> s.histogram().largestBytes()));
            if (pool != null) {
                meters.add(poolGauge(registry, DataMemMeter.POOL_FREE, LayerSnapshot.Pool::freeByteSize));
                meters.add(poolGauge(registry, DataMemMeter.POOL_LARGEST_FREE_RUN,
                        LayerSnapshot.Pool::largestFreeRunByteSize));
            }
            if (percentileHistogram) {
                for (int bucket : SIZE_BUCKETS) {
                    String le = bucket == StatisticsAdaptor.HISTOGRAM_BUCKETS - 1 ? "+Inf"
                            : Long.toString(StatisticsAdaptor.SizeHistogram.upperBound(bucket));
                    meters.add(FunctionCounter.builder(DataMemMeter.ALLOCATIONS_BY_SIZE.meterName(), statistics,
                                    s -> cumulativeCount(s, bucket))
                            .description(DataMemMeter.ALLOCATIONS_BY_SIZE.description())
                            .tags(tags)
                            .tag(TAG_LE, le)
                            .register(registry));
                }
            }
            bound.add(new Bound(registry, meters));
        }
    }

    private static double cumulativeCount(StatisticsAdaptor s, int bucket) {
        long[] counts = s.histogram().counts();
        long n = 0;
        for (int i = 0; i <= bucket; i++) {
            n += counts[i];
        }
        return n;
    }

    /** A gauge over the pool's memory snapshot, taken when the gauge is read. */
    private Meter poolGauge(MeterRegistry registry, DataMemMeter m, ToDoubleFunction<LayerSnapshot.Pool> f) {
        PoolingAllocator p = pool;
        return Gauge.builder(m.meterName(), p, x -> f.applyAsDouble(x.statistics()))
                .description(m.description())
                .baseUnit(m.baseUnit())
                .tags(tags)
                .strongReference(true)
                .register(registry);
    }

    private Meter gauge(MeterRegistry registry, DataMemMeter m, ToDoubleFunction<StatisticsAdaptor> f) {
        return Gauge.builder(m.meterName(), statistics, f)
                .description(m.description())
                .baseUnit(m.baseUnit())
                .tags(tags)
                .strongReference(true)
                .register(registry);
    }

    private Meter counter(MeterRegistry registry, DataMemMeter m, ToDoubleFunction<StatisticsAdaptor> f) {
        return FunctionCounter.builder(m.meterName(), statistics, f)
                .description(m.description())
                .baseUnit(m.baseUnit())
                .tags(tags)
                .register(registry);
    }

    /**
     * Removes the meters from every registry this binder was bound to and stops observing
     * allocations. Idempotent.
     */
    @Override
    public void close() {
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            for (Bound b : bound) {
                b.meters().forEach(b.registry()::remove);
            }
            bound.clear();
        }
    }

    @Override
    public String toString() {
        return "DataMemMetrics[" + tags.stream().map(t -> t.getKey() + "=" + t.getValue())
                .reduce((x, y) -> x + ", " + y).orElse("") + "]";
    }
}
