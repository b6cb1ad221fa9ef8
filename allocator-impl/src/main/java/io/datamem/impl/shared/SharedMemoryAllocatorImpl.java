package io.datamem.impl.shared;

import io.datamem.MemoryTraits;
import io.datamem.impl.os.LiveBlocks;
import io.datamem.internal.Checks;
import io.datamem.internal.Libc;

import java.lang.foreign.MemorySegment;
import java.security.SecureRandom;

/** The {@link SharedMemoryAllocator} that {@link SharedMemoryAllocator#of()} returns. */
final class SharedMemoryAllocatorImpl implements SharedMemoryAllocator {

    private static final SecureRandom TAGS = new SecureRandom();

    private record Block(Mapping mapping, long byteSize) {
    }

    private final long pageSize = Libc.pageSize();
    private final MemoryTraits traits = MemoryTraits.host(pageSize).withPageSize(pageSize);
    private final LiveBlocks<Block> live = LiveBlocks.of(Block::byteSize, LiveBlocks.Refusals.of(toString()));

    SharedMemoryAllocatorImpl() {
    }

    /**
     * Allocates a shared block: a new sealed memfd mapped shared.
     *
     * @param byteSize the size of the block
     * @return the block, page-aligned, or {@code NULL} if memory, descriptors or address space are
     *         exhausted
     * @throws IllegalArgumentException if {@code byteSize} is negative or above {@link #MAX_BYTE_SIZE}
     */
    @Override
    public MemorySegment malloc(long byteSize) {
        Checks.byteSize("byteSize", byteSize);
        return map(byteSize);
    }

    /**
     * Allocates a zeroed shared block (fresh memfd pages are zero: no writing).
     *
     * @param count           elements
     * @param elementByteSize bytes per element
     * @return the block, or {@code NULL} if memory is exhausted or the product overflows
     * @throws IllegalArgumentException if {@code count} or {@code elementByteSize} is negative
     */
    @Override
    public MemorySegment calloc(long count, long elementByteSize) {
        long size = Checks.callocByteSize(count, elementByteSize);
        return size < 0 ? MemorySegment.NULL : map(size);
    }

    private MemorySegment map(long byteSize) {
        long length = Math.max(pageSize, Checks.alignUp(byteSize, pageSize));
        long high = TAGS.nextLong();
        long low = TAGS.nextLong();
        int fd = Posix.memfdCreate(Mapping.memfdName(high, low), Posix.MFD_CLOEXEC | Posix.MFD_ALLOW_SEALING);
        if (fd < 0) {
            return MemorySegment.NULL;   // EMFILE, ENFILE, ENOMEM: exhaustion
        }
        long address = -1;
        if (Posix.ftruncate(fd, length) == 0
                && Posix.fcntl(fd, Posix.F_ADD_SEALS, Posix.F_SEAL_SHRINK | Posix.F_SEAL_GROW | Posix.F_SEAL_SEAL) == 0) {
            address = Posix.mapShared(fd, length);
        }
        if (address < 0) {
            Posix.close(fd);
            return MemorySegment.NULL;
        }
        Mapping m = new Mapping(address, length, fd, high, low);
        Mapping.LIVE.put(address, m);
        live.add(address, new Block(m, byteSize));
        return MemorySegment.ofAddress(address);
    }

    /**
     * Resizes a block: in place while {@code newByteSize} fits its pages, else into a new mapping
     * (the data copied, the old block freed).
     *
     * @param ptr         a live block of this allocator, or {@code NULL} (then a {@code malloc})
     * @param oldByteSize its size
     * @param newByteSize the size wanted
     * @return the block, or {@code NULL} if memory is exhausted (the old block is then untouched)
     * @throws IllegalArgumentException if a size is negative or above {@link #MAX_BYTE_SIZE}, or
     *                                  {@code ptr} is not a live block of this allocator with
     *                                  {@code oldByteSize}
     */
    @Override
    public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        Checks.byteSize("oldByteSize", oldByteSize);
        Checks.byteSize("newByteSize", newByteSize);
        long address = ptr.address();
        if (address == 0) {
            return malloc(newByteSize);
        }
        Block block = live.check(address, oldByteSize, "realloc");
        if (newByteSize <= block.mapping().length) {
            live.replace(address, block, address, new Block(block.mapping(), newByteSize));
            return ptr;
        }
        MemorySegment moved = map(newByteSize);
        if (moved.address() == 0) {
            return MemorySegment.NULL;
        }
        long keep = Math.min(oldByteSize, newByteSize);
        if (keep > 0) {
            MemorySegment.copy(ptr.reinterpret(keep), 0, moved.reinterpret(keep), 0, keep);
        }
        free(ptr, oldByteSize);
        return moved;
    }

    /**
     * Frees a block: unmaps it and closes its descriptor. Importers that mapped it keep its pages
     * until they unmap them.
     *
     * @param ptr      a live block of this allocator, or {@code NULL} (a no-op)
     * @param byteSize its size
     * @throws IllegalArgumentException if {@code byteSize} is negative, or {@code ptr} is not a
     *                                  live block of this allocator with that size (a double free, a
     *                                  foreign or interior pointer); nothing is freed then
     */
    @Override
    public void free(MemorySegment ptr, long byteSize) {
        Checks.notNegative("byteSize", byteSize);
        long address = ptr.address();
        if (address == 0) {
            return;
        }
        Mapping m = live.remove(address, byteSize, "free").mapping();
        Mapping.LIVE.remove(address, m);
        Posix.munmap(m.address, m.length);
        Posix.close(m.fd);
    }

    /**
     * Host memory, aligned to the page size.
     *
     * @return the traits
     */
    @Override
    public MemoryTraits traits() {
        return traits;
    }

    /**
     * How many blocks are live.
     *
     * @return the count
     */
    @Override
    public int liveBlocks() {
        return live.count();
    }

    @Override
    public String toString() {
        return "SharedMemoryAllocator";
    }
}
