package io.datamem.impl.internal.pool;

import io.datamem.internal.Checks;

import java.util.ArrayList;
import java.util.List;

/**
 * The size classes of a pool and the shape of each class's slabs and runs: how many blocks a
 * slab holds, how many slabs a run, and how many wholly free slabs a heap and the depot keep.
 * Fixed when the pool is made.
 *
 * <p>{@link PoolingAllocatorImpl} extends it, as Netty's {@code PoolArena} extends its
 * {@code SizeClasses}: {@link #classOf(long)} runs on every {@code malloc}, and as the pool's own
 * method it reads the pool's own fields, with no load of a separate object first.
 */
class SizeClasses {

    /** Most blocks in one slab: one bit each in a 64-bit occupancy word. */
    static final int MAX_BLOCKS_PER_SLAB = 64;
    /** Most slabs carved from one upstream allocation. */
    static final int MAX_SLABS_PER_RUN = 1 << 16;
    /** The bytes of wholly free slabs a heap keeps per class (at least one slab, at most 4). */
    private static final long SPARE_BYTES_PER_CLASS = 64 << 10;
    private static final int MAX_SPARES = 4;
    /** Sizes up to this many bytes find their class in a table (a load instead of arithmetic). */
    private static final int SMALL_TABLE_BYTES = 1024;
    /**
     * The bytes of wholly free slabs the depot keeps per class (at least one slab, at most 64);
     * older ones go back to the upstream, where other sizes can use the memory.
     */
    private static final long DEPOT_BYTES_PER_CLASS = 128 << 10;
    private static final int MAX_DEPOT_SLABS = 64;

    final long upstreamAlignment;
    /** The bytes a run of any class holds at least: the slab size, the upstream's alignment and page. */
    final long runTarget;
    final long[] classSizes;
    private final int gridShift;          // log2 of the first class at or above the upstream's alignment
    private final int smallClasses;       // the power-of-two classes below it: 16, 32, ... 2^(gridShift-1)
    private final long largestClass;
    private final byte[] smallClassTable; // the class of every size up to SMALL_TABLE_BYTES, by 16 bytes
    final int[] blocksPerSlab;
    final int[] slabsPerRun;
    final long[] slabByteSizes;
    final int[] spareCapacity;            // wholly free slabs a heap keeps per class
    final int[] depotCapacity;            // wholly free slabs the depot keeps per class

    /**
     * The classes of a pool over an upstream of this alignment and page size.
     *
     * @param upstreamAlignment the alignment the upstream guarantees
     * @param upstreamPageSize  the upstream's page size
     * @param options           the pool's options
     */
    SizeClasses(long upstreamAlignment, long upstreamPageSize, PoolOptions options) {
        this.upstreamAlignment = upstreamAlignment;
        long grid = Math.max(16, upstreamAlignment);
        this.classSizes = classSizes(upstreamAlignment, options.maxPooledByteSize());
        this.gridShift = Long.numberOfTrailingZeros(grid);
        this.smallClasses = gridShift - 4;
        this.largestClass = classSizes[classSizes.length - 1];
        this.smallClassTable = new byte[SMALL_TABLE_BYTES / 16 + 1];
        for (int i = 0; i < smallClassTable.length; i++) {
            smallClassTable[i] = (byte) searchClass(i * 16L);   // -1 above the largest class
        }
        this.runTarget = Math.max(options.slabByteSize(), Math.max(upstreamAlignment, upstreamPageSize));
        int n = classSizes.length;
        this.blocksPerSlab = new int[n];
        this.slabsPerRun = new int[n];
        this.slabByteSizes = new long[n];
        this.spareCapacity = new int[n];
        this.depotCapacity = new int[n];
        for (int c = 0; c < n; c++) {
            long size = classSizes[c];
            blocksPerSlab[c] = Math.clamp(options.slabByteSize() / size, 1, MAX_BLOCKS_PER_SLAB);
            slabsPerRun[c] = Math.clamp(runTarget / (size * blocksPerSlab[c]), 1, MAX_SLABS_PER_RUN);
            slabByteSizes[c] = size * blocksPerSlab[c];
            spareCapacity[c] = Math.clamp(SPARE_BYTES_PER_CLASS / slabByteSizes[c], 1, MAX_SPARES);
            depotCapacity[c] = Math.clamp(DEPOT_BYTES_PER_CLASS / slabByteSizes[c], 1, MAX_DEPOT_SLABS);
        }
    }

    /**
     * The size classes of a pool over an upstream of the given alignment: powers of two from 16
     * below it, then multiples of it up to four times it, then four per power of two, up to the
     * first class of at least {@code maxPooled}.
     */
    static long[] classSizes(long upstreamAlignment, long maxPooled) {
        long alignment = Math.max(16, upstreamAlignment);
        List<Long> sizes = new ArrayList<>();
        for (long s = 16; s < alignment; s <<= 1) {
            sizes.add(s);
            if (s >= maxPooled) {
                return sizes.stream().mapToLong(Long::longValue).toArray();
            }
        }
        long s = alignment;
        while (true) {
            sizes.add(s);
            if (s >= maxPooled) {
                break;
            }
            long step = s < 4 * alignment ? alignment : Long.highestOneBit(s) / 4;
            s = Checks.alignUp(s + step, alignment);
        }
        return sizes.stream().mapToLong(Long::longValue).toArray();
    }

    /** The number of classes. */
    final int classCount() {
        return classSizes.length;
    }

    /**
     * The alignment every block of a request of this size has (the size already checked): the
     * upstream's, or less below it.
     */
    final long alignmentOf(long byteSize) {
        if (byteSize >= upstreamAlignment) {
            return upstreamAlignment;
        }
        return Math.min(upstreamAlignment, Long.highestOneBit(Math.max(16, byteSize) * 2 - 1));
    }

    /**
     * The size class of a request, or -1 if it is not pooled. The classes are a fixed grid (see
     * {@link #classSizes}), so the class is computed: below the grid step {@code a} they are powers
     * of two from 16; up to four times {@code a} the multiples of {@code a}; above, four per power of
     * two, {@code 2^k + j * 2^(k-2)} for {@code j} from 1 to 4.
     */
    final int classOf(long byteSize) {
        if (byteSize <= SMALL_TABLE_BYTES) {
            return smallClassTable[(int) (byteSize + 15) >>> 4];   // classes are multiples of 16
        }
        if (byteSize > largestClass) {
            return -1;
        }
        int c;
        if (smallClasses > 0 && byteSize <= 1L << (gridShift - 1)) {
            c = byteSize <= 16 ? 0 : 60 - Long.numberOfLeadingZeros(byteSize - 1);   // log2 rounded up, - 4
        } else if (byteSize <= 4L << gridShift) {
            c = smallClasses + (byteSize == 0 ? 0 : (int) ((byteSize - 1) >>> gridShift));
        } else {
            int k = 63 - Long.numberOfLeadingZeros(byteSize - 1);           // 2^k < byteSize <= 2^(k+1)
            int j = (int) ((byteSize - 1 - (1L << k)) >>> (k - 2)) + 1;      // 1 to 4
            c = smallClasses + 3 + 4 * (k - gridShift - 2) + j;
        }
        if (classSizes[c] < byteSize) {
            return searchClass(byteSize);   // not expected: the grid and the formula are tested to agree
        }
        return c;
    }

    /** The size class of a request by binary search, or -1 if it is not pooled. */
    final int searchClass(long byteSize) {
        if (byteSize > largestClass) {
            return -1;
        }
        int lo = 0;
        int hi = classSizes.length - 1;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (classSizes[mid] >= byteSize) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return lo;
    }
}
