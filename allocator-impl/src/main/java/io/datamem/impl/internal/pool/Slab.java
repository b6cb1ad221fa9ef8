package io.datamem.impl.internal.pool;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Up to 64 blocks of one class, with two bitmaps: {@code free}, the blocks free in its owner's
 * hands (written only by the owner, with release stores), and {@code remote}, the blocks other
 * threads freed and the owner has not collected (set atomically). A block is live when it is in
 * neither. The slab is on its owner's remote stack exactly while {@code remote} is not empty
 * (from the free that set the first bit until the owner collects).
 */
final class Slab {

    /** {@link #free}: release stores by the owner, acquire reads by others. */
    static final VarHandle FREE;
    /** {@link #remote}: set atomically by other threads, swapped out by the owner. */
    static final VarHandle REMOTE;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            FREE = lookup.findVarHandle(Slab.class, "free", long.class);
            REMOTE = lookup.findVarHandle(Slab.class, "remote", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final long base;
    final long end;
    final long blockSize;
    final int blockCount;
    final int classIndex;
    final long mask;                            // one bit per block
    final long smallestSize;                    // the smallest request of the class
    // Block index = ((address - base) >>> shift) * reciprocal >>> 32: blockSize is odd * 2^shift,
    // and for quotients below 64 * odd < 2^32 / odd the rounded-up reciprocal of odd is exact.
    private final int shift;
    private final long odd;
    private final long reciprocal;              // 0: divide (an odd part too large to be exact)
    long free;                                  // FREE: written by the owner only
    volatile long remote;                       // REMOTE: set by other threads, cleared by the owner
    volatile Heap owner;                        // changes only while every block is free
    volatile boolean released;                  // back in its run: no longer in the index
    Slab nextRemote;                            // on the owner's remote stack
    Slab prevAvailable;                         // on the owner's list of slabs with free blocks
    Slab nextAvailable;
    boolean listed;
    boolean spare;                              // one of its owner's spares
    Run run;                                    // set before the slab is published
    int slot;

    Slab(long base, long blockSize, int blockCount, int classIndex) {
        this(base, blockSize, blockCount, classIndex, 0);
    }

    Slab(long base, long blockSize, int blockCount, int classIndex, long smallestSize) {
        this.smallestSize = smallestSize;
        this.base = base;
        this.blockSize = blockSize;
        this.blockCount = blockCount;
        this.classIndex = classIndex;
        this.end = base + blockSize * blockCount;
        this.mask = blockCount == 64 ? -1L : (1L << blockCount) - 1;
        this.free = mask;
        this.shift = Long.numberOfTrailingZeros(blockSize);
        this.odd = blockSize >>> shift;
        this.reciprocal = odd < (1 << 13) ? ((1L << 32) + odd - 1) / odd : 0;
    }

    /** The index of the block an address lies in ({@code base <= address < end}). */
    int index(long address) {
        long x = (address - base) >>> shift;
        return (int) (reciprocal != 0 ? (x * reciprocal) >>> 32 : x / odd);
    }

    /** Whether a block is handed out (as far as any thread can tell now). */
    boolean isLive(int block) {
        return ((((long) FREE.getAcquire(this)) | remote) & (1L << block)) == 0;
    }

    /**
     * Checks a pointer and size against this slab, which the pointer lies in, and returns its block
     * index.
     *
     * @throws IllegalArgumentException if the size is not of this slab's class or the pointer is
     *                                  not a block's start; the message names {@code pool}
     */
    int check(long address, long byteSize, String op, Object pool) {
        if (byteSize > blockSize || byteSize < smallestSize) {
            throw new IllegalArgumentException(pool + ": " + op + "(0x" + Long.toHexString(address) + ", " + byteSize
                    + "): the block belongs to the " + blockSize + "-byte class (requests of "
                    + smallestSize + " to " + blockSize
                    + " bytes) (expected: the size it was allocated with)");
        }
        long offset = address - base;
        int block;
        long into;
        if (odd == 1) {   // a power of two: no multiplication
            block = (int) (offset >>> shift);
            into = offset & (blockSize - 1);
        } else {
            block = index(address);
            into = offset - block * blockSize;
        }
        if (into != 0) {
            throw new IllegalArgumentException(pool + ": " + op + "(0x" + Long.toHexString(address) + ", " + byteSize
                    + "): an interior pointer, " + into + " bytes into a block (expected: the block's start)");
        }
        return block;
    }
}
