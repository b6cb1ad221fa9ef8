package io.datamem.impl;

import io.datamem.DataMemAllocator;
import io.datamem.MemoryTraits;
import io.datamem.impl.internal.LinuxMemory;
import io.datamem.internal.Checks;
import io.datamem.internal.Libc;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Host memory aligned to a power of two from 8 bytes up to the page size and beyond (default 64,
 * a cache line). Alignments up to 16 use {@code malloc}, which already gives 16 on 64-bit glibc;
 * larger ones use {@code aligned_alloc}.
 *
 * <p>{@code calloc} returns NULL when {@code count * elementByteSize} overflows. It is lazy for large
 * blocks, as libc's is: with an alignment above 16, a block of at least
 * {@link #LAZY_CALLOC_BYTES} bytes is mapped fresh from the kernel ({@code mmap} of anonymous pages,
 * which are zero and committed only when touched; over-mapped and trimmed for alignments above the
 * page size) instead of being written with zeros, and is unmapped by {@code free}. Which blocks are
 * mapped follows from the size passed to {@code free} and {@code realloc} (at least
 * {@link #LAZY_CALLOC_BYTES}) and a table of the mapped addresses, so the sized-free contract (the
 * size the block was allocated with) must hold. Smaller blocks are zeroed in place.
 *
 * <p>{@code realloc} keeps the alignment: in place when the block's usable size allows it,
 * otherwise by allocating an aligned block, copying and freeing the old one (so a failure leaves the
 * old block untouched). Thread-safe.
 */
public final class AlignedAllocator implements DataMemAllocator {

    /** The default alignment: 64 bytes, a cache line and an AVX-512 vector. */
    public static final long DEFAULT_ALIGNMENT = 64;

    /**
     * The smallest {@code calloc} (with an alignment above 16) served with fresh mapped pages rather
     * than zeroed in place: 1 MiB.
     */
    public static final long LAZY_CALLOC_BYTES = 1L << 20;

    private static final long MALLOC_ALIGNMENT = 16;

    private final long byteAlignment;
    private final MemoryTraits traits;
    // Blocks mapped by calloc: address -> mapped length. Looked up only for sizes of at least
    // LAZY_CALLOC_BYTES, so small frees pay nothing.
    private final ConcurrentHashMap<Long, Long> mapped = new ConcurrentHashMap<>();

    /**
     * An allocator with the default 64-byte alignment.
     */
    public AlignedAllocator() {
        this(DEFAULT_ALIGNMENT);
    }

    /**
     * An allocator with the given alignment.
     *
     * @param byteAlignment a power of two, at least 8
     * @throws IllegalArgumentException if {@code byteAlignment} is not a power of two of at least 8
     */
    public AlignedAllocator(long byteAlignment) {
        if (byteAlignment < 8 || Long.bitCount(byteAlignment) != 1) {
            throw new IllegalArgumentException("byteAlignment: " + byteAlignment + " (expected: a power of two >= 8)");
        }
        if (byteAlignment > (1L << 40)) {
            throw new IllegalArgumentException("byteAlignment: " + byteAlignment + " (expected: <= 2^40)");
        }
        this.byteAlignment = byteAlignment;
        this.traits = MemoryTraits.host(Math.max(byteAlignment, MALLOC_ALIGNMENT));
    }

    /**
     * The alignment of every block.
     *
     * @return bytes
     */
    public long byteAlignment() {
        return byteAlignment;
    }

    @Override
    public MemorySegment malloc(long byteSize) {
        Checks.byteSize("byteSize", byteSize);
        return byteAlignment <= MALLOC_ALIGNMENT ? Libc.malloc(byteSize) : Libc.alignedAlloc(byteAlignment, byteSize);
    }

    /**
     * Allocates a zeroed, aligned block; lazily (fresh mapped pages) from {@link #LAZY_CALLOC_BYTES}
     * up when the alignment is above 16.
     *
     * @param count           elements
     * @param elementByteSize bytes per element
     * @return the block, or {@code NULL} if memory is exhausted or {@code count * elementByteSize}
     *         overflows
     * @throws IllegalArgumentException if {@code count} or {@code elementByteSize} is negative
     */
    @Override
    public MemorySegment calloc(long count, long elementByteSize) {
        long size = Checks.callocByteSize(count, elementByteSize);
        if (size < 0) {
            return MemorySegment.NULL;
        }
        if (byteAlignment <= MALLOC_ALIGNMENT) {
            return Libc.calloc(count, elementByteSize);
        }
        if (size >= LAZY_CALLOC_BYTES && LinuxMemory.supported()) {
            long address = mapZeroed(size);
            if (address != -1) {
                return MemorySegment.ofAddress(address);
            }
        }
        MemorySegment p = Libc.alignedAlloc(byteAlignment, size);
        if (p.address() != 0 && size > 0) {
            p.reinterpret(size).fill((byte) 0);
        }
        return p;
    }

    /**
     * Maps fresh zero pages for {@code size} bytes at the alignment: the address, 0 when the kernel
     * has no memory, or -1 when mapping failed otherwise (the caller falls back to zeroing).
     */
    private long mapZeroed(long size) {
        long page = Libc.pageSize();
        long length = Checks.alignUp(size, page);
        long slack = byteAlignment > page ? byteAlignment - page : 0;
        if (length > DataMemAllocator.MAX_BYTE_SIZE - slack) {
            return 0;
        }
        long address = LinuxMemory.mapAligned(length, byteAlignment, LinuxMemory.PROT_READ_WRITE, 0);
        if (address < 0) {
            return address == -LinuxMemory.ENOMEM ? 0 : -1;
        }
        mapped.put(address, length);
        return address;
    }

    /** The mapped length of a block if calloc mapped it, else -1. */
    private long mappedLength(MemorySegment ptr, long byteSize) {
        if (byteSize < LAZY_CALLOC_BYTES || mapped.isEmpty()) {
            return -1;
        }
        Long length = mapped.get(ptr.address());
        return length == null ? -1 : length;
    }

    private void unmap(long address, long length) {
        if (mapped.remove(address, length)) {
            LinuxMemory.munmap(address, length);
        }
    }

    /**
     * Resizes a block, keeping its alignment and data.
     *
     * @param ptr         a block of this allocator, or {@code NULL} (then a {@code malloc})
     * @param oldByteSize the size it was allocated with
     * @param newByteSize the size wanted
     * @return the resized block, or {@code NULL} if memory is exhausted (the old block is then
     *         untouched)
     * @throws IllegalArgumentException if a size is negative or above {@link #MAX_BYTE_SIZE}
     */
    @Override
    public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        Checks.byteSize("oldByteSize", oldByteSize);
        Checks.byteSize("newByteSize", newByteSize);
        if (ptr.address() == 0) {
            return malloc(newByteSize);
        }
        long length = mappedLength(ptr, oldByteSize);
        if (length >= 0) {
            if (newByteSize >= LAZY_CALLOC_BYTES && newByteSize <= length) {
                return ptr;   // still fits its pages, and free will still find it
            }
            MemorySegment moved = malloc(newByteSize);
            if (moved.address() == 0) {
                return MemorySegment.NULL;
            }
            long keep = Math.min(oldByteSize, newByteSize);
            if (keep > 0) {
                MemorySegment.copy(ptr.reinterpret(keep), 0, moved.reinterpret(keep), 0, keep);
            }
            unmap(ptr.address(), length);
            return moved;
        }
        if (byteAlignment <= MALLOC_ALIGNMENT) {
            return Libc.realloc(ptr, Math.max(newByteSize, 1));
        }
        long usable = Libc.mallocUsableSize(ptr);
        if (newByteSize <= usable && newByteSize >= usable / 2) {
            return ptr; // fits, and shrinking would not give back much
        }
        MemorySegment moved = Libc.alignedAlloc(byteAlignment, newByteSize);
        if (moved.address() == 0) {
            return MemorySegment.NULL;
        }
        long keep = Math.min(oldByteSize, newByteSize);
        if (keep > 0) {
            MemorySegment.copy(ptr.reinterpret(keep), 0, moved.reinterpret(keep), 0, keep);
        }
        Libc.free(ptr);
        return moved;
    }

    /**
     * Frees a block: unmaps it if {@code calloc} mapped it, else gives it to libc.
     *
     * @param ptr      a block of this allocator, or {@code NULL} (a no-op)
     * @param byteSize the size it was allocated with
     * @throws IllegalArgumentException if {@code byteSize} is negative
     */
    @Override
    public void free(MemorySegment ptr, long byteSize) {
        Checks.notNegative("byteSize", byteSize);
        long length = mappedLength(ptr, byteSize);
        if (length >= 0) {
            unmap(ptr.address(), length);
            return;
        }
        Libc.free(ptr);
    }

    @Override
    public MemoryTraits traits() {
        return traits;
    }

    @Override
    public String toString() {
        return "AlignedAllocator[" + byteAlignment + "]";
    }
}
