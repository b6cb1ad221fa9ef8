package io.datamem.impl;

import io.datamem.DataMemAllocator;
import io.datamem.MemoryTraits;

import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts what flows through an upstream allocator: bytes in use now and at peak, total bytes
 * allocated and freed, and the number of allocations, frees, reallocations and failures.
 *
 * <p>Accounting follows the sizes callers pass: {@code free(ptr, n)} subtracts {@code n}. A failed
 * allocation (NULL) counts as a failure and changes nothing else. Thread-safe; figures read while
 * other threads allocate are each exact but not a consistent snapshot of one instant.
 */
public final class StatisticsAdaptor implements DataMemAllocator {

    private final DataMemAllocator upstream;
    private final AtomicLong currentBytes = new AtomicLong();
    private final AtomicLong peakBytes = new AtomicLong();
    private final LongAdder allocatedBytes = new LongAdder();
    private final LongAdder freedBytes = new LongAdder();
    private final LongAdder allocations = new LongAdder();
    private final LongAdder frees = new LongAdder();
    private final LongAdder reallocations = new LongAdder();
    private final LongAdder failures = new LongAdder();

    /**
     * Wraps an upstream allocator.
     *
     * @param upstream the allocator to count
     * @throws NullPointerException if {@code upstream} is null
     */
    public StatisticsAdaptor(DataMemAllocator upstream) {
        this.upstream = Objects.requireNonNull(upstream, "upstream");
    }

    /**
     * The wrapped allocator.
     *
     * @return the upstream
     */
    public DataMemAllocator upstream() {
        return upstream;
    }

    @Override
    public MemorySegment malloc(long byteSize) {
        return allocated(upstream.malloc(byteSize), byteSize);
    }

    @Override
    public MemorySegment calloc(long count, long elementByteSize) {
        MemorySegment p = upstream.calloc(count, elementByteSize);
        return allocated(p, p.address() == 0 ? 0 : count * elementByteSize);
    }

    private MemorySegment allocated(MemorySegment p, long byteSize) {
        if (p.address() == 0) {
            failures.increment();
            return p;
        }
        allocations.increment();
        allocatedBytes.add(byteSize);
        raise(byteSize);
        return p;
    }

    private void raise(long byteSize) {
        long now = currentBytes.addAndGet(byteSize);
        long peak = peakBytes.get();
        while (now > peak && !peakBytes.compareAndSet(peak, now)) {
            peak = peakBytes.get();
        }
    }

    @Override
    public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        MemorySegment p = upstream.realloc(ptr, oldByteSize, newByteSize);
        if (p.address() == 0) {
            failures.increment();
            return p;
        }
        if (ptr.address() == 0) {
            allocations.increment();
            allocatedBytes.add(newByteSize);
            raise(newByteSize);
        } else {
            reallocations.increment();
            long delta = newByteSize - oldByteSize;
            if (delta >= 0) {
                allocatedBytes.add(delta);
                raise(delta);
            } else {
                freedBytes.add(-delta);
                currentBytes.addAndGet(delta);
            }
        }
        return p;
    }

    @Override
    public void free(MemorySegment ptr, long byteSize) {
        upstream.free(ptr, byteSize);
        if (ptr.address() != 0) {
            frees.increment();
            freedBytes.add(byteSize);
            currentBytes.addAndGet(-byteSize);
        }
    }

    @Override
    public MemoryTraits traits() {
        return upstream.traits();
    }

    @Override
    public MemoryTraits traitsOf(MemorySegment ptr) {
        return upstream.traitsOf(ptr);
    }

    /**
     * Bytes allocated and not yet freed.
     *
     * @return bytes in use
     */
    public long currentBytes() {
        return currentBytes.get();
    }

    /**
     * The highest {@link #currentBytes()} seen.
     *
     * @return peak bytes
     */
    public long peakBytes() {
        return peakBytes.get();
    }

    /**
     * All bytes ever allocated (growth by realloc included).
     *
     * @return bytes
     */
    public long allocatedBytes() {
        return allocatedBytes.sum();
    }

    /**
     * All bytes ever freed (shrinking by realloc included).
     *
     * @return bytes
     */
    public long freedBytes() {
        return freedBytes.sum();
    }

    /**
     * Successful malloc and calloc calls (and realloc of NULL).
     *
     * @return count
     */
    public long allocations() {
        return allocations.sum();
    }

    /**
     * Frees of non-NULL pointers.
     *
     * @return count
     */
    public long frees() {
        return frees.sum();
    }

    /**
     * Successful reallocations of existing blocks.
     *
     * @return count
     */
    public long reallocations() {
        return reallocations.sum();
    }

    /**
     * Requests the upstream answered with NULL.
     *
     * @return count
     */
    public long failures() {
        return failures.sum();
    }

    @Override
    public String toString() {
        return "StatisticsAdaptor[" + upstream + "]";
    }
}
