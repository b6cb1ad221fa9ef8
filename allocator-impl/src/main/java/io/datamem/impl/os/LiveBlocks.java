package io.datamem.impl.os;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ToLongFunction;

/**
 * The blocks an allocator handed out and has not freed: each block's address mapped to the record
 * the allocator keeps for it (the size the caller asked for, at least). The one table behind the
 * NUMA and huge-page allocators, the CUDA allocators, and the SYCL allocator's over-aligned and
 * zero-size blocks.
 *
 * <ul>
 *   <li>A free of a pointer that is not live (a double free, a foreign pointer) or with another
 *       size than the block's is refused with an {@link IllegalArgumentException} before anything
 *       is given back, and changes nothing. Each allocator words the refusals
 *       ({@link Refusals}).</li>
 *   <li>Thread-safe: of two threads removing the same block, one wins and the other is refused
 *       ({@link Refusals#freedConcurrently}).</li>
 * </ul>
 *
 * <p>Internal: public for datamem's device backends, to which alone its package is exported.
 *
 * @param <B> the record of a block
 */
public final class LiveBlocks<B> {

    /** How an allocator words what its table refuses. */
    public interface Refusals {

        /**
         * A pointer that is not a live block.
         *
         * @param address  the pointer
         * @param byteSize the size the caller gave
         * @param op       the operation ({@code free}, {@code realloc})
         * @return the exception to throw
         */
        IllegalArgumentException notLive(long address, long byteSize, String op);

        /**
         * A live block given with another size than its own.
         *
         * @param address      the block
         * @param liveByteSize the size it was allocated with
         * @param byteSize     the size the caller gave
         * @param op           the operation
         * @return the exception to throw
         */
        IllegalArgumentException wrongSize(long address, long liveByteSize, long byteSize, String op);

        /**
         * A block another thread removed between the check and the removal.
         *
         * @param address  the block
         * @param byteSize the size the caller gave
         * @param op       the operation
         * @return the exception to throw; by default {@link #notLive}'s
         */
        default IllegalArgumentException freedConcurrently(long address, long byteSize, String op) {
            return notLive(address, byteSize, op);
        }

        /**
         * The plain wording: {@code OWNER: OP(0xADDRESS, SIZE): not a live block of this allocator
         * (...)} and {@code ...: the block was allocated with N bytes (expected: that size)}.
         *
         * @param owner the allocator's name
         * @return the wording
         * @throws NullPointerException if {@code owner} is null
         */
        static Refusals of(String owner) {
            Objects.requireNonNull(owner, "owner");
            return new Refusals() {
                @Override
                public IllegalArgumentException notLive(long address, long byteSize, String op) {
                    return new IllegalArgumentException(owner + ": " + op + "(0x" + Long.toHexString(address) + ", "
                            + byteSize + "): not a live block of this allocator (expected: a pointer it returned and"
                            + " that was not freed; a double free or a foreign pointer)");
                }

                @Override
                public IllegalArgumentException wrongSize(long address, long liveByteSize, long byteSize, String op) {
                    return new IllegalArgumentException(owner + ": " + op + "(0x" + Long.toHexString(address) + ", "
                            + byteSize + "): the block was allocated with " + liveByteSize + " bytes (expected: that"
                            + " size)");
                }
            };
        }
    }

    private final ConcurrentHashMap<Long, B> blocks = new ConcurrentHashMap<>();
    private final ToLongFunction<? super B> byteSize;
    private final Refusals refusals;

    private LiveBlocks(ToLongFunction<? super B> byteSize, Refusals refusals) {
        this.byteSize = Objects.requireNonNull(byteSize, "byteSize");
        this.refusals = Objects.requireNonNull(refusals, "refusals");
    }

    /**
     * An empty table of blocks described by records.
     *
     * @param <B>      the record of a block
     * @param byteSize the size the caller allocated a block with, read from its record
     * @param refusals how the allocator words refusals
     * @return the table
     * @throws NullPointerException if an argument is null
     */
    public static <B> LiveBlocks<B> of(ToLongFunction<? super B> byteSize, Refusals refusals) {
        return new LiveBlocks<>(byteSize, refusals);
    }

    /**
     * An empty table whose records are the blocks' sizes, with the {@linkplain Refusals#of plain
     * wording}.
     *
     * @param owner the allocator's name, for messages
     * @return the table
     * @throws NullPointerException if {@code owner} is null
     */
    public static LiveBlocks<Long> sizes(String owner) {
        return new LiveBlocks<>(Long::longValue, Refusals.of(owner));
    }

    /**
     * Records a new block (replacing any record at that address).
     *
     * @param address the block's start
     * @param block   its record
     * @throws NullPointerException if {@code block} is null
     */
    public void add(long address, B block) {
        blocks.put(address, Objects.requireNonNull(block, "block"));
    }

    /**
     * The record of a live block.
     *
     * @param address the block's start
     * @return its record, or null if no live block starts there
     */
    public B get(long address) {
        return blocks.get(address);
    }

    /**
     * Checks that a block is live with this size, without removing it.
     *
     * @param address  the block
     * @param byteSize the size the caller gives
     * @param op       the operation, for messages
     * @return the block's record
     * @throws IllegalArgumentException if the block is not live or its size differs
     */
    public B check(long address, long byteSize, String op) {
        B block = blocks.get(address);
        if (block == null) {
            throw refusals.notLive(address, byteSize, op);
        }
        long size = this.byteSize.applyAsLong(block);
        if (size != byteSize) {
            throw refusals.wrongSize(address, size, byteSize, op);
        }
        return block;
    }

    /**
     * Removes a block being freed: {@link #check}, then {@link #remove(long, Object, long, String)}.
     *
     * @param address  the block
     * @param byteSize the size the caller gives
     * @param op       the operation, for messages
     * @return the removed block's record
     * @throws IllegalArgumentException if the block is not live or its size differs (nothing
     *                                  changes), or another thread removed it first
     */
    public B remove(long address, long byteSize, String op) {
        B block = check(address, byteSize, op);
        remove(address, block, byteSize, op);
        return block;
    }

    /**
     * Removes a block {@link #check} returned, if it is still that record.
     *
     * @param address  the block
     * @param block    the record {@code check} returned
     * @param byteSize the size the caller gives, for messages
     * @param op       the operation, for messages
     * @throws IllegalArgumentException if another thread removed or replaced it first
     */
    public void remove(long address, B block, long byteSize, String op) {
        if (!blocks.remove(address, block)) {
            throw refusals.freedConcurrently(address, byteSize, op);
        }
    }

    /**
     * Removes whatever record an address has, without checks.
     *
     * @param address the block
     * @return its record, or null if none
     */
    public B take(long address) {
        return blocks.remove(address);
    }

    /**
     * Records a block that a reallocation resized or moved: the old record goes (if it is still
     * there) and the new one is added.
     *
     * @param oldAddress where the block was
     * @param old        its record
     * @param newAddress where it is now (may be {@code oldAddress})
     * @param now        its new record
     * @throws NullPointerException if {@code now} is null
     */
    public void replace(long oldAddress, B old, long newAddress, B now) {
        Objects.requireNonNull(now, "now");
        if (oldAddress != newAddress) {
            blocks.remove(oldAddress, old);
        }
        blocks.put(newAddress, now);
    }

    /**
     * The size of a live block.
     *
     * @param address the block
     * @return its size, or -1 if it is not live
     */
    public long sizeOf(long address) {
        B block = blocks.get(address);
        return block == null ? -1 : byteSize.applyAsLong(block);
    }

    /**
     * The records of the live blocks, for a report: those in the table both when a pass over it
     * read them and when each was looked up again after the pass. A record leaves the table only
     * when its block is freed and a new block gets a new record, so the blocks returned were all
     * live at one instant: none is listed twice, and none overlaps another, even when blocks are
     * freed and their memory mapped again during the call. Blocks added during the call may be
     * missing.
     *
     * @return the records, in no particular order
     */
    public List<B> records() {
        List<Map.Entry<Long, B>> read = new ArrayList<>(blocks.entrySet());
        List<B> live = new ArrayList<>(read.size());
        for (Map.Entry<Long, B> e : read) {
            if (blocks.get(e.getKey()) == e.getValue()) {
                live.add(e.getValue());
            }
        }
        return live;
    }

    /**
     * The number of live blocks.
     *
     * @return the count
     */
    public int count() {
        return blocks.size();
    }

    /**
     * Whether no block is live.
     *
     * @return true if the table is empty
     */
    public boolean isEmpty() {
        return blocks.isEmpty();
    }
}
