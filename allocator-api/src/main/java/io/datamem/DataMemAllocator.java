package io.datamem;

import java.lang.foreign.MemorySegment;

/**
 * An allocator of native memory: NEP 49's {@code PyDataMemAllocator}, with the object as its own
 * {@code ctx} and a sized {@code free}.
 *
 * <p>Pointers in and out are {@link MemorySegment}s used as addresses: what an allocator returns is
 * a zero-length segment whose {@link MemorySegment#address() address} is the start of the block,
 * or {@link MemorySegment#NULL} when the memory is exhausted. Implementations never throw for
 * exhaustion: they return {@code NULL}, as the C functions do. They throw only for caller
 * mistakes, before any native call: negative sizes, sizes above {@link #MAX_BYTE_SIZE}.
 *
 * <p>The caller keeps track of every block's size and passes it back exactly to
 * {@link #realloc realloc} and {@link #free free}; arrays do this for their users. A request of
 * zero bytes returns a unique pointer (never {@code NULL} unless memory is exhausted) that must be
 * freed with size 0.
 *
 * <p>Implementations are thread-safe: a block may be freed on another thread than the one that
 * allocated it.
 */
public interface DataMemAllocator {

    /**
     * The largest byte size any allocator accepts: 2<sup>57</sup>, the span of a 57-bit (5-level
     * paging) virtual address space. Requests above it can never succeed and are rejected as caller
     * mistakes, which also keeps rounding up to any page size free of overflow.
     */
    long MAX_BYTE_SIZE = io.datamem.internal.Checks.MAX_BYTE_SIZE;

    /**
     * Allocates {@code byteSize} bytes, uninitialised.
     *
     * @param byteSize the size of the block
     * @return the block, aligned to at least {@link MemoryTraits#byteAlignment()}, or
     *         {@link MemorySegment#NULL} if memory is exhausted
     * @throws IllegalArgumentException if {@code byteSize} is negative or above
     *                                  {@link #MAX_BYTE_SIZE}
     */
    MemorySegment malloc(long byteSize);

    /**
     * Allocates a zeroed block of {@code count * elementByteSize} bytes.
     *
     * @param count           the number of elements
     * @param elementByteSize the size of one element
     * @return the zeroed block, or {@link MemorySegment#NULL} if memory is exhausted or the product
     *         overflows
     * @throws IllegalArgumentException if {@code count} or {@code elementByteSize} is negative
     */
    MemorySegment calloc(long count, long elementByteSize);

    /**
     * Resizes a block, keeping its contents up to the smaller of the two sizes and the allocator's
     * alignment. The old size is an argument, unlike C's {@code realloc}: mmap-based, device and
     * pooled allocators need it, and every caller knows it.
     *
     * @param ptr          the block, or {@link MemorySegment#NULL} to allocate a new one
     * @param oldByteSize  the size {@code ptr} was allocated or last resized with (0 for {@code NULL})
     * @param newByteSize  the new size; 0 keeps a unique zero-size block, it does not free
     * @return the resized block, which may have moved, or {@link MemorySegment#NULL} if memory is
     *         exhausted, in which case {@code ptr} is untouched and still owned by the caller
     * @throws IllegalArgumentException if a size is negative or above {@link #MAX_BYTE_SIZE}
     */
    MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize);

    /**
     * Frees a block.
     *
     * @param ptr      the block, or {@link MemorySegment#NULL} (a no-op)
     * @param byteSize the size the block was allocated or last resized with
     * @throws IllegalArgumentException if {@code byteSize} is negative; checking adaptors also throw
     *                                  it when the size does not match the block
     */
    void free(MemorySegment ptr, long byteSize);

    /**
     * What this allocator guarantees for every block it returns.
     *
     * @return host memory aligned to 16 bytes, unless the implementation says otherwise
     */
    default MemoryTraits traits() {
        return MemoryTraits.host(16);
    }

    /**
     * What this allocator knows about one block it returned: the same as {@link #traits()} unless
     * the block differs (a huge-page request that fell back to small pages, say).
     *
     * @param ptr a block this allocator returned and has not freed
     * @return the block's traits
     */
    default MemoryTraits traitsOf(MemorySegment ptr) {
        return traits();
    }
}
