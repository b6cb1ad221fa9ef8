package io.datamem.impl.internal.pool;

import io.datamem.impl.internal.cpu.AlignedAllocator;
import io.datamem.testing.CountingAllocator;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;

/**
 * A slab the pool grows for a thread's cache goes to that cache whole (when it fits), so that two
 * threads allocating small blocks flip bits in occupancy words of their own rather than sharing one
 * slab's cache line. Frees from other threads still work: the word is atomic either way.
 */
class PoolingSlabAffinityTest {

    private final CountingAllocator counting = new CountingAllocator(AlignedAllocator.of(64));

    @Test
    void threadsGetSlabsOfTheirOwn() throws Exception {
        PoolingAllocatorImpl pool = PoolingAllocatorImpl.of(counting);
        MemorySegment mine = pool.malloc(64);
        AtomicReference<MemorySegment> theirs = new AtomicReference<>();
        Thread t = new Thread(() -> theirs.set(pool.malloc(64)));
        t.start();
        t.join();
        assertNotNull(theirs.get());
        Slab a = pool.slabOf(mine.address());
        Slab b = pool.slabOf(theirs.get().address());
        assertNotSame(a, b, "each thread's first small block comes from a slab of its own");
        assertEquals(2, pool.statistics().slabAllocations());
        pool.free(theirs.get(), 64);   // a free from another thread than the allocating one
        pool.free(mine, 64);
        pool.trim();
        assertEquals(0, pool.statistics().usedByteSize());
        assertEquals(0, counting.liveBlocks(), "both slabs went back once free and trimmed");
    }
}
