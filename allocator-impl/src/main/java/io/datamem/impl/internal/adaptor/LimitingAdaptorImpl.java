package io.datamem.impl.internal.adaptor;

import io.datamem.AllocationRefusal;
import io.datamem.DataMemAllocator;
import io.datamem.impl.ForwardingAllocator;
import io.datamem.impl.adaptor.LimitingAdaptor;
import io.datamem.impl.snapshot.LayerSnapshot;
import io.datamem.internal.Checks;

import io.datamem.spi.BlockReleased;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The {@link LimitingAdaptor} of the handler term {@code limit=BYTES}. The behaviour is stated on the interface.
 */
public final class LimitingAdaptorImpl extends ForwardingAllocator implements LimitingAdaptor {

    private final long limitBytes;
    private final AtomicLong inUse = new AtomicLong();
    private final LongAdder refusals = new LongAdder();

    /**
     * Wraps an upstream with a cap.
     *
     * @param upstream   the allocator to cap
     * @param limitBytes the most bytes that may be in use at once, at least 0
     * @return a new adaptor
     * @throws NullPointerException     if {@code upstream} is null
     * @throws IllegalArgumentException if {@code limitBytes} is negative
     */
    public static LimitingAdaptorImpl of(DataMemAllocator upstream, long limitBytes) {
        return new LimitingAdaptorImpl(upstream, limitBytes);
    }

    private LimitingAdaptorImpl(DataMemAllocator upstream, long limitBytes) {
        super(upstream);
        this.limitBytes = Checks.notNegative("limitBytes", limitBytes);
    }

    /**
     * The cap, the bytes in use and the refusals, for a memory snapshot.
     *
     * @return a {@link LayerSnapshot.Limit}
     */
    @Override
    public LayerSnapshot.Limit snapshot() {
        return new LayerSnapshot.Limit("LimitingAdaptor", limitBytes, inUse.get(), refusals.sum());
    }

    @Override
    public MemorySegment malloc(long byteSize) {
        Checks.byteSize("byteSize", byteSize);
        if (!reserve(byteSize, 0)) {
            return MemorySegment.NULL;
        }
        MemorySegment p;
        try {
            p = upstream().malloc(byteSize);
        } catch (RuntimeException | Error e) {
            inUse.addAndGet(-byteSize);
            throw e;
        }
        return settle(p, byteSize);
    }

    @Override
    public MemorySegment calloc(long count, long elementByteSize) {
        long byteSize = Checks.callocByteSize(count, elementByteSize);
        if (byteSize < 0) {
            return upstream().calloc(count, elementByteSize); // NULL: the product overflows
        }
        if (!reserve(byteSize, 0)) {
            return MemorySegment.NULL;
        }
        MemorySegment p;
        try {
            p = upstream().calloc(count, elementByteSize);
        } catch (RuntimeException | Error e) {
            inUse.addAndGet(-byteSize);
            throw e;
        }
        return settle(p, byteSize);
    }

    /**
     * Resizes a block through the upstream, reserving its growth first.
     *
     * @param ptr         the block, or {@code NULL} (then a {@code malloc})
     * @param oldByteSize its size
     * @param newByteSize the size wanted
     * @return the resized block, or {@code NULL} (refused for the cap, or the upstream failed; the
     *         old block is untouched and the accounting unchanged)
     * @throws IllegalArgumentException if a size is negative, or if the upstream refuses the call
     *                                  (the accounting is then unchanged)
     */
    @Override
    public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        Checks.byteSize("oldByteSize", oldByteSize);
        Checks.byteSize("newByteSize", newByteSize);
        long old = ptr.address() == 0 ? 0 : oldByteSize;
        long growth = newByteSize - old;
        if (growth > 0 && !reserve(growth, old)) {
            return MemorySegment.NULL;
        }
        MemorySegment p;
        try {
            p = upstream().realloc(ptr, oldByteSize, newByteSize);
        } catch (RuntimeException | Error e) {
            if (growth > 0) {
                inUse.addAndGet(-growth);
            }
            if (old > 0 && BlockReleased.by(e)) {
                // The guard below freed the old block and allocated nothing.
                inUse.accumulateAndGet(old, (now, bytes) -> Math.max(0, now - bytes));
            }
            throw e;
        }
        if (p.address() == 0) {
            if (growth > 0) {
                inUse.addAndGet(-growth); // roll back: the old block is untouched
            }
        } else if (growth < 0) {
            inUse.accumulateAndGet(-growth, (now, bytes) -> Math.max(0, now - bytes)); // never negative
        }
        return p;
    }

    /**
     * Frees a block through the upstream and releases its bytes.
     *
     * @param ptr      the block, or {@code NULL} (a no-op upstream)
     * @param byteSize its size
     * @throws IllegalArgumentException if {@code byteSize} is negative, or larger than the bytes in use
     *                                  (the block cannot have come through this adaptor with that
     *                                  size: nothing is freed and the accounting is unchanged), or if
     *                                  the upstream refuses the free
     */
    @Override
    public void free(MemorySegment ptr, long byteSize) {
        Checks.notNegative("byteSize", byteSize);
        if (ptr.address() == 0) {
            upstream().free(ptr, byteSize);
            return;
        }
        release(ptr.address(), byteSize);
        try {
            upstream().free(ptr, byteSize);
        } catch (RuntimeException | Error e) {
            if (!BlockReleased.by(e)) {
                inUse.addAndGet(byteSize); // the upstream kept the block
            }
            throw e;
        }
    }

    /**
     * Releases {@code bytes} of the bytes in use, or throws if fewer are in use: the accounting
     * never goes negative, so {@code limitBytes - inUse} never overflows.
     */
    private void release(long address, long bytes) {
        long now = inUse.get();
        while (true) {
            if (bytes > now) {   // the message is built only here: free is a hot path
                throw new IllegalArgumentException(this + ": free(0x" + Long.toHexString(address) + ", " + bytes
                        + ") releases " + bytes + " bytes, but only "
                        + now + " bytes in use came through this adaptor (expected: the size the block was"
                        + " allocated with)");
            }
            long witness = inUse.compareAndExchange(now, now - bytes);
            if (witness == now) {
                return;
            }
            now = witness;
        }
    }

    /**
     * Reserves {@code bytes} if that keeps the total within the cap; else notes the refusal.
     *
     * @param resizing the size of the block being resized (0 for a new block), for the message
     */
    private boolean reserve(long bytes, long resizing) {
        long now = inUse.get();
        while (true) {
            if (bytes > limitBytes - now) { // 0 <= now <= limitBytes: no overflow
                refusals.increment();
                AllocationRefusal.limitExceeded(bytes + resizing, limitBytes, now - resizing);
                return false;
            }
            long witness = inUse.compareAndExchange(now, now + bytes);
            if (witness == now) {
                return true;
            }
            now = witness;
        }
    }

    private MemorySegment settle(MemorySegment p, long byteSize) {
        if (p.address() == 0) {
            inUse.addAndGet(-byteSize); // roll back the reservation
        }
        return p;
    }

    @Override
    public String toString() {
        return "LimitingAdaptor[" + upstream() + ", limit " + limitBytes + " bytes]";
    }
}
