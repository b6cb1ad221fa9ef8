package io.datamem.impl.pool;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.impl.internal.cpu.AlignedAllocator;
import io.datamem.impl.internal.pool.PoolOptions;
import io.datamem.impl.internal.pool.PoolingAllocatorImpl;
import io.datamem.testing.CountingAllocator;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Size classes start at 16 bytes whatever the upstream's alignment, small slabs share one upstream
 * run, and every block keeps the alignment the pool promises for its size.
 */
class PoolingSmallClassesTest {

    private static final long TWO_MIB = 2L << 20;

    @Test
    void smallBlocksOverAHugeAlignmentShareOneUpstreamAllocation() {
        CountingAllocator counting = new CountingAllocator(AlignedAllocator.of(TWO_MIB));
        PoolingAllocator pool = PoolingAllocatorImpl.of(counting);
        assertEquals(16, pool.classByteSizes()[0], "the smallest class is 16 bytes");
        MemorySegment first = pool.malloc(64);
        assertTrue(pool.statistics().runByteSize() <= TWO_MIB,
                "one 64-byte block took " + pool.statistics().runByteSize() + " bytes upstream");
        pool.free(first, 64);
        List<MemorySegment> blocks = allocateAndCheck(pool, 1000, 64);
        assertEquals(1, counting.allocations(), "1000 blocks of 64 bytes came from one upstream allocation");
        assertTrue(pool.statistics().runByteSize() <= TWO_MIB, pool.statistics().toString());
        blocks.forEach(p -> pool.free(p, 64));
        pool.trim();
        assertEquals(0, counting.liveBlocks(), "the run went back once all its slabs were free");
        assertEquals(0, pool.statistics().runByteSize());
        pool.close();
    }

    @Test
    void transparentHugePagesServeSixtyFourByteBlocksAtAboutTheirSize() {
        DataMemHandler h;
        try {
            h = DataMem.createHandler("pool(hugepages:thp,threshold=0)");
        } catch (RuntimeException e) {
            Assumptions.abort("transparent huge pages are not usable here: " + e.getMessage());
            return;
        }
        PoolingAllocator pool = assertInstanceOf(PoolingAllocator.class, h.allocator());
        List<MemorySegment> blocks = allocateAndCheck(pool, 1000, 64);
        assertTrue(pool.statistics().runByteSize() <= TWO_MIB,
                "1000 blocks of 64 bytes took " + pool.statistics().runByteSize() + " bytes upstream");
        blocks.forEach(p -> pool.free(p, 64));
        pool.close();
        assertEquals(0, pool.statistics().runByteSize());
    }

    @ParameterizedTest
    @ValueSource(longs = {8, 16, 64, 4096, 2L << 20})
    void everyBlockHasTheAlignmentThePoolPromises(long upstreamAlignment) {
        CountingAllocator counting = new CountingAllocator(AlignedAllocator.of(upstreamAlignment));
        PoolingAllocator pool = PoolingAllocatorImpl.of(counting, PoolOptions.DEFAULTS
                .withMaxPooledByteSize(8L << 20));
        long a = counting.traits().byteAlignment();
        assertEquals(Math.min(a, 16), pool.traits().byteAlignment(), "what every block gets");
        List<long[]> live = new ArrayList<>();
        for (long size = 0; size <= (8L << 20); size = size < 4096 ? size + 1 : size * 5 / 4) {
            long promised = pool.byteAlignmentOf(size);
            assertEquals(Math.min(a, Long.highestOneBit(Math.max(16, size) * 2 - 1)), promised, "size " + size);
            assertTrue(promised >= pool.traits().byteAlignment());
            for (int i = 0; i < 3; i++) {
                MemorySegment p = pool.malloc(size);
                assertEquals(0, p.address() % promised, "a block of " + size + " bytes at 0x"
                        + Long.toHexString(p.address()) + " (promised: " + promised + ")");
                long said = pool.traitsOf(p).byteAlignment();
                assertTrue(said <= promised && p.address() % said == 0, "traitsOf a block of " + size
                        + " bytes says " + said + " (promised: " + promised + ")");
                live.add(new long[] {p.address(), size});
            }
            if (live.size() > 600) {
                live.forEach(b -> pool.free(MemorySegment.ofAddress(b[0]), b[1]));
                live.clear();
            }
        }
        live.forEach(b -> pool.free(MemorySegment.ofAddress(b[0]), b[1]));
        pool.close();
        assertEquals(0, counting.liveBlocks());
    }

    private static List<MemorySegment> allocateAndCheck(PoolingAllocator pool, int count, long size) {
        List<MemorySegment> blocks = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            MemorySegment p = pool.malloc(size);
            assertEquals(0, p.address() % pool.byteAlignmentOf(size));
            p.reinterpret(size).set(ValueLayout.JAVA_LONG, 0, i);
            p.reinterpret(size).set(ValueLayout.JAVA_LONG, size - 8, i);
            blocks.add(p);
        }
        for (int i = 0; i < count; i++) {
            MemorySegment p = blocks.get(i).reinterpret(size);
            assertEquals(i, p.get(ValueLayout.JAVA_LONG, 0));
            assertEquals(i, p.get(ValueLayout.JAVA_LONG, size - 8));
        }
        return blocks;
    }
}
