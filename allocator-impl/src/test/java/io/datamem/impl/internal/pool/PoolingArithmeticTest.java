package io.datamem.impl.internal.pool;

import io.datamem.impl.internal.cpu.AlignedAllocator;
import io.datamem.testing.CountingAllocator;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The pool's fast path computes a request's size class and a pointer's block index with arithmetic
 * instead of a search and a division: both must agree exactly with the slow forms, for every size and
 * every offset, whatever the alignment of the upstream.
 */
class PoolingArithmeticTest {

    @ParameterizedTest
    @ValueSource(longs = {8, 16, 64, 4096, 2L << 20})
    void theComputedClassIsTheSearchedOne(long alignment) {
        for (long maxPooled : new long[] {16L << 20, 100, 5000, 1L << 30}) {
            PoolingAllocatorImpl pool = PoolingAllocatorImpl.of(new CountingAllocator(AlignedAllocator.of(alignment)),
                    PoolOptions.DEFAULTS.withMaxPooledByteSize(maxPooled));
            long[] classes = pool.classByteSizes();
            long largest = classes[classes.length - 1];
            for (long s = 0; s <= Math.min(largest + 1, 1 << 20); s++) {
                assertEquals(pool.searchClass(s), pool.classOf(s), "size " + s);
            }
            for (long c : classes) {
                for (long s : new long[] {c - 1, c, c + 1}) {
                    assertEquals(pool.searchClass(s), pool.classOf(s), "size " + s + " around class " + c);
                }
            }
            SplittableRandom r = new SplittableRandom(alignment ^ maxPooled);
            for (int i = 0; i < 200_000; i++) {
                long s = r.nextLong(0, largest + 1000);
                assertEquals(pool.searchClass(s), pool.classOf(s), "size " + s);
            }
            assertEquals(-1, pool.classOf(largest + 1));
            assertEquals(-1, pool.classOf(Long.MAX_VALUE));
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {16, 64, 4096, 2L << 20})
    void theComputedBlockIndexIsTheQuotient(long alignment) {
        PoolingAllocatorImpl pool = PoolingAllocatorImpl.of(new CountingAllocator(AlignedAllocator.of(alignment)),
                PoolOptions.DEFAULTS.withMaxPooledByteSize(1L << 32));
        long base = 1L << 45;   // only arithmetic: nothing is dereferenced
        for (long size : pool.classByteSizes()) {
            Slab slab = new Slab(base, size, SizeClasses.MAX_BLOCKS_PER_SLAB, 0);
            for (int block = 0; block < SizeClasses.MAX_BLOCKS_PER_SLAB; block++) {
                long start = base + block * size;
                for (long into : new long[] {0, 1, size / 2, size - 1}) {
                    assertEquals(block, slab.index(start + into), "class " + size + ", block " + block + " + " + into);
                }
            }
        }
        // Odd parts larger than the classes use: still exact, or the division fallback.
        for (long size : new long[] {8191L * 16, 8193L * 16, 12345L * 64, (1L << 31) - 1}) {
            Slab slab = new Slab(base, size, SizeClasses.MAX_BLOCKS_PER_SLAB, 0);
            for (int block = 0; block < SizeClasses.MAX_BLOCKS_PER_SLAB; block++) {
                assertEquals(block, slab.index(base + block * size + size - 1));
                assertEquals(block, slab.index(base + block * size));
            }
        }
        assertTrue(pool.classByteSizes().length > 10);
    }
}
