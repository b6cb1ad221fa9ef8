package io.datamem.impl.internal.cpu;

import io.datamem.impl.Rss;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The three ways {@link AlignedAllocator} makes a block (plain malloc up to 16, over-allocated
 * malloc with a tagged word up to 256, aligned_alloc above) and the mapped lazy calloc: alignment
 * of every small size, data kept across realloc between them, zeroing after reuse, sizes that do
 * not decide the path, and no leak.
 */
class AlignedAllocatorPathsTest {

    private static final long MIB = 1L << 20;

    private static void fill(MemorySegment p, long byteSize, int seed) {
        MemorySegment s = p.reinterpret(byteSize);
        for (long i = 0; i < byteSize; i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) (seed + i * 31));
        }
    }

    private static void check(MemorySegment p, long byteSize, int seed, String what) {
        MemorySegment s = p.reinterpret(byteSize);
        for (long i = 0; i < byteSize; i++) {
            if (s.get(ValueLayout.JAVA_BYTE, i) != (byte) (seed + i * 31)) {
                throw new AssertionError(what + ": byte " + i + " of " + byteSize + " changed");
            }
        }
    }

    /** Checks only a sample of a large block: its first and last 4 KiB and every 64 KiB. */
    private static void fillSparse(MemorySegment p, long byteSize, long seed) {
        MemorySegment s = p.reinterpret(byteSize);
        for (long i = 0; i + 8 <= byteSize; i += (i < 4096 || i > byteSize - 4096) ? 8 : 65536) {
            s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, seed ^ i);
        }
    }

    private static void checkSparse(MemorySegment p, long byteSize, long seed, String what) {
        MemorySegment s = p.reinterpret(byteSize);
        for (long i = 0; i + 8 <= byteSize; i += (i < 4096 || i > byteSize - 4096) ? 8 : 65536) {
            assertEquals(seed ^ i, s.get(ValueLayout.JAVA_LONG_UNALIGNED, i), what + " at " + i);
        }
    }

    @ParameterizedTest(name = "aligned:{0}")
    @ValueSource(longs = {8, 16, 32, 64, 128, 256, 4096})
    void everySizeUpToAPageIsAlignedAndBlocksDoNotOverlap(long alignment) {
        AlignedAllocator a = AlignedAllocator.of(alignment);
        int n = 4097;
        MemorySegment[] blocks = new MemorySegment[n];
        for (int size = 0; size < n; size++) {
            blocks[size] = size % 2 == 0 ? a.malloc(size) : a.calloc(size, 1);
            assertNotEquals(0, blocks[size].address(), "size " + size);
            assertEquals(0, blocks[size].address() % alignment, "size " + size);
            fill(blocks[size], size, size);
        }
        for (int size = 0; size < n; size++) {
            check(blocks[size], size, size, "aligned:" + alignment + " size " + size);
            a.free(blocks[size], size);
        }
        for (long size : new long[] {64 * 1024 - 1, MIB - 8, MIB, 3 * MIB + 7, 64 * MIB}) {
            for (boolean zeroed : new boolean[] {false, true}) {
                MemorySegment p = zeroed ? a.calloc(1, size) : a.malloc(size);
                assertEquals(0, p.address() % alignment, "size " + size + (zeroed ? " (calloc)" : ""));
                fillSparse(p, size, size);
                checkSparse(p, size, size, "size " + size);
                a.free(p, size);
            }
        }
        assertEquals(0, a.mappedBlocks());
    }

    @ParameterizedTest(name = "aligned:{0}")
    @ValueSource(longs = {32, 64, 128, 256})
    void overAllocatedBlocksAlwaysCarryATaggedWord(long alignment) {
        AlignedAllocator a = AlignedAllocator.of(alignment);
        List<MemorySegment> blocks = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            MemorySegment p = a.malloc(i % 300);
            blocks.add(p);
            long start = AlignedAllocator.startOf(p.address());
            long distance = p.address() - start;
            assertTrue(start > 0 && distance >= 8 && distance <= alignment, "distance " + distance);
        }
        for (int i = 0; i < blocks.size(); i++) {
            a.free(blocks.get(i), i % 300);
        }
    }

    @ParameterizedTest(name = "aligned:{0}")
    @ValueSource(longs = {32, 64, 256})
    void aPointerWithoutTheTaggedWordIsRefusedNotFreed(long alignment) {
        AlignedAllocator a = AlignedAllocator.of(alignment);
        MemorySegment foreign = io.datamem.internal.Libc.malloc(100);
        try {
            String free = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                    () -> a.free(foreign, 100)).getMessage();
            assertTrue(free.contains("not a block of this allocator") && free.contains(Long.toHexString(
                    foreign.address())), free);
            org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                    () -> a.realloc(foreign, 100, 200));
        } finally {
            io.datamem.internal.Libc.free(foreign);
        }
    }

    @ParameterizedTest(name = "aligned:{0}")
    @ValueSource(longs = {16, 32, 64, 128, 4096})
    void reallocKeepsDataAndAlignmentAcrossEveryPath(long alignment) {
        AlignedAllocator a = AlignedAllocator.of(alignment);
        // Small to large (the mapped threshold and glibc's mmap threshold), large to small, and back.
        long[] sizes = {1, 15, 16, 17, 63, 64, 65, 200, 4096, 100_000, MIB, MIB + 1, 5 * MIB, 1000, 0, 7,
                2 * MIB, 40, 4 * MIB};
        MemorySegment p = a.malloc(0);
        long size = 0;
        for (long next : sizes) {
            fillSparse(p, size, 7);
            MemorySegment q = a.realloc(p, size, next);
            assertNotEquals(0, q.address());
            assertEquals(0, q.address() % alignment, size + " -> " + next);
            checkSparse(q, Math.min(size, next) & ~7L, 7, size + " -> " + next);
            p = q;
            size = next;
        }
        a.free(p, size);
        // From a mapped (lazy calloc) block to small and large ones, and from small ones into the
        // mapping's size range again.
        for (long target : new long[] {100, 64 * 1024, 2 * MIB, 8 * MIB}) {
            MemorySegment c = a.calloc(1, 2 * MIB);
            fillSparse(c, 2 * MIB, target);
            MemorySegment d = a.realloc(c, 2 * MIB, target);
            assertEquals(0, d.address() % alignment);
            checkSparse(d, Math.min(2 * MIB, target) & ~7L, target, "mapped -> " + target);
            MemorySegment e = a.realloc(d, target, 3 * MIB);
            checkSparse(e, Math.min(2 * MIB, target) & ~7L, target, target + " -> 3 MiB");
            a.free(e, 3 * MIB);
        }
        assertEquals(0, a.mappedBlocks(), "every mapped block unmapped");
    }

    @ParameterizedTest(name = "aligned:{0}")
    @ValueSource(longs = {32, 64, 256})
    void randomReallocsMovingBlocksKeepTheirData(long alignment) {
        AlignedAllocator a = AlignedAllocator.of(alignment);
        SplittableRandom random = new SplittableRandom(alignment);
        int n = 64;
        MemorySegment[] blocks = new MemorySegment[n];
        long[] sizes = new long[n];
        for (int i = 0; i < n; i++) {
            blocks[i] = MemorySegment.NULL;
        }
        int movedToAnotherDistance = 0;
        for (int step = 0; step < 20_000; step++) {
            int i = random.nextInt(n);
            long next = random.nextInt(10) == 0 ? random.nextLong(200_000) : random.nextLong(600);
            long before = blocks[i].address() == 0 ? -1 : blocks[i].address() - AlignedAllocator.startOf(blocks[i].address());
            MemorySegment q = a.realloc(blocks[i], sizes[i], next);
            assertEquals(0, q.address() % alignment);
            check(q, Math.min(sizes[i], next), i, "block " + i + " at step " + step);
            long after = q.address() - AlignedAllocator.startOf(q.address());
            if (before >= 0 && after != before) {
                movedToAnotherDistance++;
            }
            fill(q, next, i);
            blocks[i] = q;
            sizes[i] = next;
        }
        for (int i = 0; i < n; i++) {
            a.free(blocks[i], sizes[i]);
        }
        assertTrue(movedToAnotherDistance > 0, "some realloc moved data to another distance from the start");
    }

    @ParameterizedTest(name = "aligned:{0}")
    @ValueSource(longs = {32, 64, 128, 4096})
    void callocZeroesBlocksThatReuseDirtyMemory(long alignment) {
        AlignedAllocator a = AlignedAllocator.of(alignment);
        for (int round = 0; round < 3; round++) {
            List<MemorySegment> dirty = new ArrayList<>();
            for (int size = 1; size <= 2048; size += 37) {
                MemorySegment p = a.malloc(size);
                p.reinterpret(size).fill((byte) -1);
                dirty.add(p);
            }
            int k = 0;
            for (int size = 1; size <= 2048; size += 37) {
                a.free(dirty.get(k++), size);
            }
            for (int size = 1; size <= 2048; size += 37) {
                MemorySegment z = a.calloc(size, 1);
                assertEquals(0, z.address() % alignment);
                MemorySegment s = z.reinterpret(size);
                for (int i = 0; i < size; i++) {
                    assertEquals(0, s.get(ValueLayout.JAVA_BYTE, i), "calloc(" + size + ") byte " + i);
                }
                s.fill((byte) -1);
                a.free(z, size);
            }
        }
    }

    @ParameterizedTest(name = "aligned:{0}")
    @ValueSource(longs = {32, 64, 256, 4096, 1 << 21})
    void aWrongSizeDoesNotDecideHowABlockIsFreed(long alignment) {
        AlignedAllocator a = AlignedAllocator.of(alignment);
        // A small block freed with a size in the mapped range, and the other way round.
        for (int i = 0; i < 300; i++) {
            a.free(a.malloc(i), 2 * MIB + i);
        }
        Assumptions.assumeTrue(io.datamem.impl.os.LinuxMemory.supported(), "mapped calloc needs Linux");
        MemorySegment mapped = a.calloc(1, 4 * MIB);
        assertEquals(1, a.mappedBlocks());
        a.free(mapped, 10);
        assertEquals(0, a.mappedBlocks(), "the mapped block was found by its address and unmapped");
        MemorySegment again = a.calloc(1, 4 * MIB);
        MemorySegment moved = a.realloc(again, 100, 200);   // old size wrong: found anyway
        assertEquals(0, a.mappedBlocks());
        assertEquals(0, moved.address() % alignment);
        a.free(moved, 200);
    }

    @Test
    void churnOnEveryPathLeaksNothing() {
        Assumptions.assumeTrue(Rss.available(), "needs /proc/self/status");
        AlignedAllocator a64 = AlignedAllocator.of(64);
        AlignedAllocator a4k = AlignedAllocator.of(4096);
        Runnable round = () -> {
            for (int i = 0; i < 20_000; i++) {
                for (AlignedAllocator a : new AlignedAllocator[] {a64, a4k}) {
                    long size = 1000 + (i % 3000);
                    MemorySegment p = a.malloc(size);
                    p.reinterpret(size).fill((byte) 1);   // commit what a leak would keep
                    MemorySegment q = a.realloc(p, size, size * 2);
                    q.reinterpret(size * 2).fill((byte) 2);
                    a.free(q, size * 2);
                    MemorySegment z = a.calloc(size, 3);
                    a.free(z, size * 3);
                }
            }
            for (int i = 0; i < 50; i++) {
                MemorySegment m = a64.calloc(1, 2 * MIB);
                m.reinterpret(2 * MIB).fill((byte) 3);
                a64.free(a64.realloc(m, 2 * MIB, 3 * MIB), 3 * MIB);
            }
        };
        round.run();   // warm: the C library's arenas reach their working size
        long before = Rss.bytes();
        for (int r = 0; r < 5; r++) {
            round.run();
        }
        long grown = Rss.bytes() - before;
        // A leak would keep about 5 * 20_000 * 2 * 9 KB (~1.8 GB) plus 250 * 2 MiB resident.
        assertTrue(grown < (64L << 20), "resident memory grew by " + (grown >> 20) + " MiB");
        assertEquals(0, a64.mappedBlocks());
    }
}
