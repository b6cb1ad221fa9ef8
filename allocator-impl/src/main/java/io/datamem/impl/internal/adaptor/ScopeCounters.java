package io.datamem.impl.internal.adaptor;

import io.datamem.impl.snapshot.LayerSnapshot;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/** One set of counters: a scope's. */
final class ScopeCounters {
    final ScopeCounters parent;
    final AtomicLong current = new AtomicLong();
    final AtomicLong peak = new AtomicLong();
    final LongAdder allocatedBytes = new LongAdder();
    final LongAdder freedBytes = new LongAdder();
    final LongAdder allocations = new LongAdder();
    final LongAdder frees = new LongAdder();
    final LongAdder reallocations = new LongAdder();
    final LongAdder failures = new LongAdder();
    volatile boolean closed;

    ScopeCounters(ScopeCounters parent) {
        this.parent = parent;
    }

    void allocated(long byteSize) {
        allocations.increment();
        allocatedBytes(byteSize);
    }

    /** An allocation's bytes, without counting it (the whole-life count is the histogram's). */
    void allocatedBytes(long byteSize) {
        allocatedBytes.add(byteSize);
        raise(byteSize);
    }

    void reallocated(long oldByteSize, long newByteSize) {
        reallocations.increment();
        long delta = newByteSize - oldByteSize;
        if (delta >= 0) {
            allocatedBytes.add(delta);
            raise(delta);
        } else {
            freedBytes.add(-delta);
            current.addAndGet(delta);
        }
    }

    void freed(long byteSize) {
        frees.increment();
        freedBytes.add(byteSize);
        current.addAndGet(-byteSize);
    }

    void raise(long byteSize) {
        long now = current.addAndGet(byteSize);
        long p = peak.get();
        while (now > p && !peak.compareAndSet(p, now)) {
            p = peak.get();
        }
    }

    /** Adds a popped child's figures: RMM's add_counters_from_tracked_sub_block. */
    void absorb(ScopeCounters child) {
        long childPeak = child.peak.get();
        long base = current.get();
        long p = peak.get();
        while (base + childPeak > p && !peak.compareAndSet(p, base + childPeak)) {
            p = peak.get();
        }
        current.addAndGet(child.current.get());
        allocatedBytes.add(child.allocatedBytes.sum());
        freedBytes.add(child.freedBytes.sum());
        allocations.add(child.allocations.sum());
        frees.add(child.frees.sum());
        reallocations.add(child.reallocations.sum());
        failures.add(child.failures.sum());
    }

    LayerSnapshot.Statistics figures() {
        return figures(allocations.sum());
    }

    LayerSnapshot.Statistics figures(long allocationCount) {
        return new LayerSnapshot.Statistics(StatisticsAdaptorImpl.TYPE, current.get(), peak.get(), allocatedBytes.sum(), freedBytes.sum(),
                allocationCount, frees.sum(), reallocations.sum(), failures.sum());
    }
}
