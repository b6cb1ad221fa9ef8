package io.datamem.cuda.internal;

import java.util.concurrent.ConcurrentHashMap;

/**
 * The blocks a CUDA allocator handed out and has not freed, with their sizes: a free of a pointer
 * it did not return, of a block already freed, or with another size is an
 * {@link IllegalArgumentException} before any CUDA call (CUDA itself would report a double free
 * as an error at best). Internal.
 */
public final class LiveBlocks {

    private final String owner;
    private final ConcurrentHashMap<Long, Long> sizes = new ConcurrentHashMap<>();

    /**
     * Blocks of one allocator.
     *
     * @param owner the allocator, for messages
     */
    public LiveBlocks(String owner) {
        this.owner = owner;
    }

    /**
     * Records a new block.
     *
     * @param address  its start
     * @param byteSize the size requested
     */
    public void add(long address, long byteSize) {
        sizes.put(address, byteSize);
    }

    /**
     * Checks a block is live with this size, without removing it.
     *
     * @param address  the block
     * @param byteSize the size the caller gives
     * @param op       the operation, for messages
     * @throws IllegalArgumentException if the block is not live or its size differs
     */
    public void check(long address, long byteSize, String op) {
        Long size = sizes.get(address);
        if (size == null) {
            throw notLive(address, byteSize, op);
        }
        if (size != byteSize) {
            throw wrongSize(address, size, byteSize, op);
        }
    }

    /**
     * Removes a block being freed.
     *
     * @param address  the block
     * @param byteSize the size the caller gives
     * @param op       the operation, for messages
     * @throws IllegalArgumentException if the block is not live or its size differs (nothing changes)
     */
    public void remove(long address, long byteSize, String op) {
        check(address, byteSize, op);
        if (!sizes.remove(address, byteSize)) {
            throw notLive(address, byteSize, op);   // another thread freed it first
        }
    }

    /**
     * The size of a live block.
     *
     * @param address the block
     * @return its size, or -1 if it is not live
     */
    public long sizeOf(long address) {
        Long size = sizes.get(address);
        return size == null ? -1 : size;
    }

    /**
     * The number of live blocks.
     *
     * @return the count
     */
    public int count() {
        return sizes.size();
    }

    private IllegalArgumentException notLive(long address, long byteSize, String op) {
        return new IllegalArgumentException(owner + ": " + op + "(0x" + Long.toHexString(address) + ", " + byteSize
                + "): not a live block of this allocator (expected: a pointer it returned and that was not freed;"
                + " a double free or a foreign pointer)");
    }

    private IllegalArgumentException wrongSize(long address, long size, long given, String op) {
        return new IllegalArgumentException(owner + ": " + op + "(0x" + Long.toHexString(address) + ", " + given
                + "): the block was allocated with " + size + " bytes (expected: that size)");
    }
}
