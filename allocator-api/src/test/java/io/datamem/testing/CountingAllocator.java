package io.datamem.testing;

import io.datamem.DataMemAllocator;
import io.datamem.MemoryTraits;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A test wrapper that counts live blocks and bytes exactly, to check that callers free everything
 * they allocate with the right sizes.
 */
public final class CountingAllocator implements DataMemAllocator {

    private final DataMemAllocator upstream;
    private final AtomicLong liveBlocks = new AtomicLong();
    private final AtomicLong liveBytes = new AtomicLong();
    private final AtomicLong allocations = new AtomicLong();
    private final AtomicLong frees = new AtomicLong();

    /**
     * Wraps an allocator.
     *
     * @param upstream the allocator to count
     */
    public CountingAllocator(DataMemAllocator upstream) {
        this.upstream = upstream;
    }

    @Override
    public MemorySegment malloc(long byteSize) {
        return count(upstream.malloc(byteSize), byteSize);
    }

    @Override
    public MemorySegment calloc(long count, long elementByteSize) {
        MemorySegment p = upstream.calloc(count, elementByteSize);
        return p.address() == 0 ? p : count(p, count * elementByteSize);
    }

    @Override
    public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        MemorySegment p = upstream.realloc(ptr, oldByteSize, newByteSize);
        if (p.address() != 0) {
            if (ptr.address() != 0) {
                liveBlocks.decrementAndGet();
                liveBytes.addAndGet(-oldByteSize);
            }
            liveBlocks.incrementAndGet();
            liveBytes.addAndGet(newByteSize);
        }
        return p;
    }

    @Override
    public void free(MemorySegment ptr, long byteSize) {
        upstream.free(ptr, byteSize);
        if (ptr.address() != 0) {
            frees.incrementAndGet();
            liveBlocks.decrementAndGet();
            liveBytes.addAndGet(-byteSize);
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

    private MemorySegment count(MemorySegment p, long size) {
        if (p.address() != 0) {
            allocations.incrementAndGet();
            liveBlocks.incrementAndGet();
            liveBytes.addAndGet(size);
        }
        return p;
    }

    /** @return blocks allocated and not freed */
    public long liveBlocks() {
        return liveBlocks.get();
    }

    /** @return bytes allocated and not freed */
    public long liveBytes() {
        return liveBytes.get();
    }

    /** @return successful malloc and calloc calls */
    public long allocations() {
        return allocations.get();
    }

    /** @return free calls with a non-NULL pointer */
    public long frees() {
        return frees.get();
    }
}
