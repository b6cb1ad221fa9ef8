package io.datamem.impl.internal.pool;

import io.datamem.DataMemAllocator;
import io.datamem.impl.snapshot.LayerSnapshot;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Every live block the upstream allocated directly for a pool (requests above
 * {@link PoolOptions#maxPooledByteSize()}, and calloc of memory the host cannot zero): address ->
 * size. A free or realloc outside the slabs must name one of them, with its size, before it
 * reaches the upstream.
 */
final class LargeBlocks {

    private final Object pool;            // for messages
    private final DataMemAllocator upstream;
    private final ConcurrentHashMap<Long, Long> live = new ConcurrentHashMap<>();
    final LongAdder allocations = new LongAdder();
    final LongAdder failures = new LongAdder();

    LargeBlocks(Object pool, DataMemAllocator upstream) {
        this.pool = pool;
        this.upstream = upstream;
    }

    /**
     * Counts a block the upstream allocated directly, records it as live, and returns its address
     * (0 for NULL): the caller makes the segment (see {@code PoolingAllocatorImpl.segment(long)}).
     */
    long counted(MemorySegment p, long byteSize) {
        long address = p.address();
        if (address == 0) {
            failures.increment();
        } else {
            allocations.increment();
            live.put(address, byteSize);
        }
        return address;
    }

    /**
     * Frees a block the upstream allocated directly.
     *
     * @throws IllegalArgumentException if it is not a live one, or not of this size
     */
    void free(long address, long byteSize) {
        Long allocated = live.get(address);
        if (allocated == null) {
            throw notOurs(address, "free(0x" + Long.toHexString(address) + ", " + byteSize + ")");
        }
        if (allocated != byteSize) {
            throw wrongSize(address, allocated, byteSize, "free");
        }
        if (!live.remove(address, allocated)) {   // freed by another thread meanwhile
            throw notOurs(address, "free(0x" + Long.toHexString(address) + ", " + byteSize + ")");
        }
        try {
            upstream.free(MemorySegment.ofAddress(address), byteSize);
        } catch (RuntimeException | Error e) {
            live.put(address, allocated);   // the upstream kept it
            throw e;
        }
    }

    /**
     * Checks that a block outside the slabs is a live one of this size, before a realloc.
     *
     * @throws IllegalArgumentException if it is not
     */
    void checkLive(long address, long oldByteSize, long newByteSize) {
        Long allocated = live.get(address);
        if (allocated == null) {
            throw notOurs(address, "realloc(0x" + Long.toHexString(address) + ", " + oldByteSize + ", "
                    + newByteSize + ")");
        }
        if (allocated != oldByteSize) {
            throw wrongSize(address, allocated, oldByteSize, "realloc");
        }
    }

    /**
     * The upstream's realloc of a live block that stays large (checked by {@link #checkLive});
     * the record follows the block when it moves.
     */
    MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        MemorySegment p = upstream.realloc(ptr, oldByteSize, newByteSize);
        if (p.address() != 0) {
            live.remove(ptr.address(), oldByteSize);
            live.put(p.address(), newByteSize);
        }
        return p;
    }

    /** The blocks live within the window of this read, by address; none overlaps another. */
    List<LayerSnapshot.LargeBlock> describe() {
        List<Map.Entry<Long, Long>> read = new ArrayList<>(live.entrySet());
        List<LayerSnapshot.LargeBlock> large = new ArrayList<>(read.size());
        for (Map.Entry<Long, Long> e : read) {
            if (live.get(e.getKey()) == e.getValue()) {   // the same record: live all along
                large.add(new LayerSnapshot.LargeBlock(e.getKey(), e.getValue()));
            }
        }
        large.sort(Comparator.comparingLong(LayerSnapshot.LargeBlock::address));
        return large;
    }

    private IllegalArgumentException notOurs(long address, String call) {
        return new IllegalArgumentException(pool + ": " + call + ": not a block of this pool, nor a live block"
                + " it passed to the upstream (never allocated here, an interior pointer, or already freed)"
                + " (expected: a pointer this pool's malloc, calloc or realloc returned, with its size)");
    }

    private IllegalArgumentException wrongSize(long address, long allocated, long given, String op) {
        return new IllegalArgumentException(pool + ": " + op + "(0x" + Long.toHexString(address) + ", " + given
                + "): the block was allocated with " + allocated + " bytes (expected: that size)");
    }
}
