package io.datamem.impl.micrometer;

import io.micrometer.core.instrument.Meter;

/**
 * Every meter {@link DataMemMetrics} publishes, with its name, type, base unit and description.
 * Names follow Micrometer's conventions (dot-separated, lower case, base units) and Prometheus's: a
 * meter in bytes has the unit {@code bytes} and a count has none, so a Prometheus registry renders
 * {@code datamem.memory.used} as {@code datamem_memory_used_bytes}, {@code datamem.allocations} as
 * {@code datamem_allocations_total} and no count ends in {@code _bytes_total}.
 *
 * <p>Every meter carries the tags {@value DataMemMetrics#TAG_HANDLER} (the handler's name),
 * {@value DataMemMetrics#TAG_VERSION} and {@value DataMemMetrics#TAG_MEMORY_KIND} ({@code host},
 * {@code host_pinned}, {@code device}, {@code managed}), plus any tags given to the binder.
 */
@SuppressWarnings("exports") // Micrometer is an optional dependency: users of this package require it
public enum DataMemMeter {

    /** Gauge, bytes: bytes allocated through the handler and not yet freed. */
    MEMORY_USED("datamem.memory.used", Meter.Type.GAUGE, "bytes",
            "Bytes allocated through the handler and not yet freed"),
    /** Gauge, bytes: the highest {@link #MEMORY_USED} since the statistics began. */
    MEMORY_PEAK("datamem.memory.peak", Meter.Type.GAUGE, "bytes",
            "The most bytes in use at once since the statistics began"),
    /** Counter, bytes: all bytes allocated, growth by realloc included. */
    MEMORY_ALLOCATED("datamem.memory.allocated", Meter.Type.COUNTER, "bytes",
            "All bytes allocated, growth by realloc included"),
    /** Counter, bytes: all bytes freed, shrinking by realloc included. */
    MEMORY_FREED("datamem.memory.freed", Meter.Type.COUNTER, "bytes",
            "All bytes freed, shrinking by realloc included"),
    /** Gauge: blocks allocated and not yet freed. */
    ALLOCATIONS_LIVE("datamem.allocations.live", Meter.Type.GAUGE, null,
            "Blocks allocated and not yet freed"),
    /** Counter: successful malloc, calloc and realloc of NULL. */
    ALLOCATIONS("datamem.allocations", Meter.Type.COUNTER, null,
            "Successful allocations (malloc, calloc, realloc of NULL)"),
    /** Counter: frees of non-NULL pointers. */
    FREES("datamem.frees", Meter.Type.COUNTER, null, "Blocks freed"),
    /** Counter: successful reallocations of existing blocks. */
    REALLOCATIONS("datamem.reallocations", Meter.Type.COUNTER, null,
            "Successful reallocations of existing blocks"),
    /** Counter: requests the allocator answered with NULL (exhaustion, a limit, an injected fault). */
    FAILURES("datamem.allocation.failures", Meter.Type.COUNTER, null,
            "Allocation requests that returned NULL"),
    /**
     * Counter, bytes: the sizes of the allocations counted by {@link #ALLOCATIONS} added up, over the
     * statistics' whole life (their number is {@link #ALLOCATIONS}, a count; this is bytes). A
     * Prometheus registry renders it {@code datamem_allocation_size_bytes_total}.
     */
    ALLOCATION_SIZE("datamem.allocation.size", Meter.Type.COUNTER, "bytes",
            "The sizes of the allocations counted by datamem.allocations, added up"),
    /**
     * Gauge, bytes: the largest allocation so far (it does not decay). Prometheus:
     * {@code datamem_allocation_size_max_bytes}.
     */
    ALLOCATION_SIZE_MAX("datamem.allocation.size.max", Meter.Type.GAUGE, "bytes",
            "The largest allocation so far"),
    /**
     * Counter, one per size bound, published only with
     * {@link DataMemMetrics.Builder#percentileHistogram(boolean)}: how many allocations asked for at
     * most the bytes in the {@value DataMemMetrics#TAG_LE} tag (cumulative, as Prometheus histogram
     * buckets; the last bound is {@code +Inf}). A count, so it has no unit: Prometheus renders it
     * {@code datamem_allocations_by_size_total}. The bounds: 63, 1023, 16383,
     * 262143, 4194303, 67108863, 1073741823 bytes and {@code +Inf}.
     */
    ALLOCATIONS_BY_SIZE("datamem.allocations.by.size", Meter.Type.COUNTER, null,
            "Allocations of at most the size in the le tag, in bytes"),
    /**
     * Gauge, bytes, published only when the handler's stack holds a pool ({@code pool(...)}): the
     * bytes the pool holds from its upstream that no block uses (free blocks and uncarved slab
     * space), as its memory snapshot reports them ({@code io.datamem.impl.snapshot}), read at
     * scrape time.
     */
    POOL_FREE("datamem.pool.free", Meter.Type.GAUGE, "bytes",
            "Bytes a pool holds from its upstream that no block uses"),
    /**
     * Gauge, bytes, published only with a pool: the longest stretch of free bytes inside one of the
     * pool's runs, from the same snapshot. Far below {@link #POOL_FREE}: the free memory is
     * fragmented.
     */
    POOL_LARGEST_FREE_RUN("datamem.pool.free.largest.run", Meter.Type.GAUGE, "bytes",
            "The longest stretch of free bytes in one of a pool's runs");

    private final String meterName;
    private final Meter.Type type;
    private final String baseUnit;
    private final String description;

    DataMemMeter(String meterName, Meter.Type type, String baseUnit, String description) {
        this.meterName = meterName;
        this.type = type;
        this.baseUnit = baseUnit;
        this.description = description;
    }

    /**
     * The meter's name in Micrometer's convention.
     *
     * @return for example {@code datamem.memory.used}
     */
    public String meterName() {
        return meterName;
    }

    /**
     * The meter's type.
     *
     * @return gauge or counter
     */
    public Meter.Type type() {
        return type;
    }

    /**
     * The base unit.
     *
     * @return {@code bytes}, or null for plain counts
     */
    public String baseUnit() {
        return baseUnit;
    }

    /**
     * What the meter measures.
     *
     * @return one sentence
     */
    public String description() {
        return description;
    }
}
