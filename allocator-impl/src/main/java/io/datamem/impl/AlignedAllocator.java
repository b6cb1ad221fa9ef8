package io.datamem.impl;

import io.datamem.DataMemAllocator;
import io.datamem.MemoryTraits;
import io.datamem.internal.Checks;
import io.datamem.internal.Libc;

import java.lang.foreign.MemorySegment;

/**
 * Host memory aligned to a power of two from 8 bytes up to the page size and beyond (default 64,
 * a cache line). Alignments up to 16 use {@code malloc}, which already gives 16 on 64-bit glibc;
 * larger ones use {@code aligned_alloc}.
 *
 * <p>{@code calloc} returns NULL when {@code count * elementByteSize} overflows. {@code realloc}
 * keeps the alignment: in place when the block's usable size allows it, otherwise by allocating an
 * aligned block, copying and freeing the old one (so a failure leaves the old block untouched).
 * Thread-safe.
 */
public final class AlignedAllocator implements DataMemAllocator {

    /** The default alignment: 64 bytes, a cache line and an AVX-512 vector. */
    public static final long DEFAULT_ALIGNMENT = 64;

    private static final long MALLOC_ALIGNMENT = 16;

    private final long byteAlignment;
    private final MemoryTraits traits;

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

    @Override
    public MemorySegment calloc(long count, long elementByteSize) {
        long size = Checks.callocByteSize(count, elementByteSize);
        if (size < 0) {
            return MemorySegment.NULL;
        }
        if (byteAlignment <= MALLOC_ALIGNMENT) {
            return Libc.calloc(count, elementByteSize);
        }
        MemorySegment p = Libc.alignedAlloc(byteAlignment, size);
        if (p.address() != 0 && size > 0) {
            p.reinterpret(size).fill((byte) 0);
        }
        return p;
    }

    @Override
    public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        Checks.byteSize("oldByteSize", oldByteSize);
        Checks.byteSize("newByteSize", newByteSize);
        if (ptr.address() == 0) {
            return malloc(newByteSize);
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

    @Override
    public void free(MemorySegment ptr, long byteSize) {
        Checks.notNegative("byteSize", byteSize);
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
