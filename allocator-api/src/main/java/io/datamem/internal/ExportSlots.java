package io.datamem.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The live exports of one protocol (DLPack tensors, Arrow structs): a table of slots, each with a
 * generation, the Java object that keeps the export's resources (an array's pin, a copy), and
 * optionally a fixed-size native block the export writes its struct into. It replaces a
 * concurrent map keyed by boxed addresses or tokens: taking and releasing a slot is one
 * compare-and-set on a free list and one on the slot's generation, and allocates nothing.
 *
 * <ul>
 *   <li>A slot's <em>token</em> is its generation (odd while live) and its index: a protocol writes
 *       it into the struct ({@code private_data}) and {@link #release(long)} accepts it only while
 *       that generation is live, so a stale token (a second release) or a forged one (an index out
 *       of range, an even or other generation) is refused without touching anything.</li>
 *   <li>With native blocks, a slot is also found by its block's address ({@link #tokenAt(long)}),
 *       by arithmetic on the slabs' ranges and never by reading the memory at that address: a
 *       deleter called with a foreign pointer is refused without a dereference. The blocks live in
 *       slabs of the global arena, never freed: a released block goes back to the free list, so
 *       the memory kept is that of the most exports live at once (at most {@code maxSlabs}
 *       slabs; past that {@link #acquire} answers -1 and the protocol falls back to its own
 *       allocation).</li>
 *   <li>Release is exactly once: of any number of concurrent {@link #release} calls for one
 *       token, one wins the generation's compare-and-set and gets the holder.</li>
 * </ul>
 *
 * <p>Thread safety: every method may be called from any thread.
 */
public final class ExportSlots {

    /** One slab: {@code slabSlots} slots and, with native blocks, their memory. */
    private static final class Slab {
        final long base;
        final AtomicIntegerArray generations;
        final Object[] holders;
        final int[] next;

        Slab(long base, int slots) {
            this.base = base;
            this.generations = new AtomicIntegerArray(slots);
            this.holders = new Object[slots];
            this.next = new int[slots];
        }
    }

    private final long blockSize;
    private final int slabShift;
    private final int slabMask;
    private final int maxSlabs;
    /** The slabs, grown under {@code this}; a reader sees a prefix that never changes. */
    private volatile Slab[] slabs = new Slab[0];
    /** The free list's head: a tag (against ABA) in the high 32 bits, the index + 1 in the low (0: empty). */
    private final AtomicLong head = new AtomicLong();

    /**
     * A table.
     *
     * @param blockSize the size of each slot's native block, a multiple of 16; 0 for none
     * @param slabShift log2 of the slots per slab
     * @param maxSlabs  the most slabs; {@code maxSlabs << slabShift} must stay below 2^30, so that
     *                  a token's index never has bit 30 or 31 set (a protocol may tag a token
     *                  with bit 30, which {@link #peek} and {@link #release} then refuse as out
     *                  of range)
     * @throws IllegalArgumentException if an argument is out of range
     */
    public ExportSlots(long blockSize, int slabShift, int maxSlabs) {
        if (blockSize < 0 || blockSize % 16 != 0 || slabShift < 1 || slabShift > 16 || maxSlabs < 1
                || ((long) maxSlabs << slabShift) > Integer.MAX_VALUE / 2) {
            throw new IllegalArgumentException("blockSize " + blockSize + ", slabShift " + slabShift + ", maxSlabs "
                    + maxSlabs);
        }
        this.blockSize = blockSize;
        this.slabShift = slabShift;
        this.slabMask = (1 << slabShift) - 1;
        this.maxSlabs = maxSlabs;
    }

    /**
     * Takes a free slot for {@code holder}.
     *
     * @param holder what the slot keeps until released, not null
     * @return the slot's token, or -1 if every slot of every slab is taken
     */
    public long acquire(Object holder) {
        int index = pop();
        if (index < 0) {
            return -1;
        }
        Slab s = slabs[index >>> slabShift];
        int i = index & slabMask;
        s.holders[i] = holder;
        int generation = s.generations.get(i) + 1;   // odd: live; only this thread writes it now
        s.generations.set(i, generation);            // volatile: publishes the holder to the releaser
        return ((long) generation << 32) | index;
    }

    /**
     * The native block of a live token's slot (tables with blocks only).
     *
     * @param token a token {@link #acquire} returned
     * @return the block's address
     */
    public long address(long token) {
        int index = (int) token;
        return slabs[index >>> slabShift].base + (index & slabMask) * blockSize;
    }

    /**
     * Releases a live token's slot, once: the first call gets the holder and frees the slot; a
     * stale, forged or released token gets null and changes nothing.
     *
     * @param token a token, from anywhere
     * @return the holder, or null
     */
    public Object release(long token) {
        int index = (int) token;
        int generation = (int) (token >>> 32);
        Slab[] all = slabs;
        if (index < 0 || (generation & 1) == 0 || index >>> slabShift >= all.length) {
            return null;
        }
        Slab s = all[index >>> slabShift];
        int i = index & slabMask;
        if (!s.generations.compareAndSet(i, generation, generation + 1)) {
            return null;
        }
        Object holder = s.holders[i];
        s.holders[i] = null;
        push(index);
        return holder;
    }

    /**
     * The holder of a live token's slot, without releasing it.
     *
     * @param token a token, from anywhere
     * @return the holder, or null if the token is not live
     */
    public Object peek(long token) {
        int index = (int) token;
        int generation = (int) (token >>> 32);
        Slab[] all = slabs;
        if (index < 0 || (generation & 1) == 0 || index >>> slabShift >= all.length) {
            return null;
        }
        Slab s = all[index >>> slabShift];
        int i = index & slabMask;
        if (s.generations.get(i) != generation) {
            return null;
        }
        Object holder = s.holders[i];
        return s.generations.get(i) == generation ? holder : null;
    }

    /**
     * The token of the live slot whose native block starts at {@code address}, found from the
     * slabs' ranges alone (the memory at {@code address} is never read).
     *
     * @param address any address
     * @return the live token, or -1 if no live slot's block starts there
     */
    public long tokenAt(long address) {
        if (blockSize == 0) {
            return -1;
        }
        Slab[] all = slabs;
        long span = blockSize << slabShift;
        for (int n = 0; n < all.length; n++) {
            long offset = address - all[n].base;
            if (offset >= 0 && offset < span && offset % blockSize == 0) {
                int i = (int) (offset / blockSize);
                int generation = all[n].generations.get(i);
                return (generation & 1) == 0 ? -1 : ((long) generation << 32) | ((n << slabShift) | i);
            }
        }
        return -1;
    }

    /**
     * Live slots: a count for tests and statistics, read slot by slot (not one atomic snapshot).
     *
     * @return the count
     */
    public int live() {
        int n = 0;
        for (Slab s : slabs) {
            for (int i = 0; i <= slabMask; i++) {
                n += s.generations.get(i) & 1;
            }
        }
        return n;
    }

    /**
     * Calls {@code action} with the holder of each slot live when it is reached (not one atomic
     * snapshot): for statistics and tests.
     *
     * @param action what to call
     */
    public void forEachLive(java.util.function.Consumer<Object> action) {
        for (Slab s : slabs) {
            for (int i = 0; i <= slabMask; i++) {
                int generation = s.generations.get(i);
                Object holder = s.holders[i];
                if ((generation & 1) != 0 && holder != null && s.generations.get(i) == generation) {
                    action.accept(holder);
                }
            }
        }
    }

    /**
     * Slots made so far (every slab's), live or free.
     *
     * @return the count
     */
    public int capacity() {
        return slabs.length << slabShift;
    }

    private int pop() {
        while (true) {
            long h = head.get();
            int index = (int) h - 1;
            if (index < 0) {
                if (!grow()) {
                    return -1;
                }
                continue;
            }
            int next = slabs[index >>> slabShift].next[index & slabMask];
            if (head.compareAndSet(h, ((h >>> 32) + 1) << 32 | (next + 1L))) {
                return index;
            }
        }
    }

    private void push(int index) {
        int[] next = slabs[index >>> slabShift].next;
        while (true) {
            long h = head.get();
            next[index & slabMask] = (int) h - 1;
            if (head.compareAndSet(h, ((h >>> 32) + 1) << 32 | (index + 1L))) {
                return;
            }
        }
    }

    /** Adds a slab and pushes its slots; false if there are {@code maxSlabs} already. */
    private synchronized boolean grow() {
        if ((int) head.get() != 0) {
            return true;   // another thread grew meanwhile, or slots came back
        }
        Slab[] all = slabs;
        if (all.length >= maxSlabs) {
            return false;
        }
        int slots = 1 << slabShift;
        long base = 0;
        if (blockSize > 0) {
            MemorySegment memory = Arena.global().allocate(blockSize * slots, 64);
            base = memory.address();
        }
        Slab s = new Slab(base, slots);
        Slab[] grown = java.util.Arrays.copyOf(all, all.length + 1);
        grown[all.length] = s;
        slabs = grown;
        int first = all.length << slabShift;
        for (int i = slots - 1; i >= 0; i--) {
            push(first + i);
        }
        return true;
    }
}
