package io.datamem.impl.internal.cpu;

import io.datamem.DataMemAllocator;
import io.datamem.MemoryTraits;
import io.datamem.impl.os.LinuxMemory;
import io.datamem.internal.Checks;
import io.datamem.internal.Libc;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Host memory aligned to a power of two from 8 bytes up to the page size and beyond (default 64,
 * a cache line). Three ways to a block, chosen by the alignment alone:
 *
 * <ul>
 *   <li>up to 16: {@code malloc}, which already gives 16 on 64-bit glibc;</li>
 *   <li>above 16 and up to {@link #OVER_ALLOCATION_MAX_ALIGNMENT} (256): {@code malloc} of
 *       {@code byteSize + byteAlignment} bytes, returning the first aligned address at least 8
 *       bytes into it. The 8 bytes just before that address always hold a tagged word with the
 *       distance back to the start, which {@code free} and {@code realloc} read (and refuse a
 *       pointer without it), so nothing depends on how the C library lays out its own blocks.
 *       This avoids {@code posix_memalign}/{@code aligned_alloc}, several times slower than
 *       {@code malloc} for small blocks, at the price of {@code byteAlignment} bytes per
 *       block;</li>
 *   <li>above 256: {@code aligned_alloc}, which wastes nothing on over-allocation (a 16-byte block
 *       of {@code aligned:4096} or {@code aligned:2097152} does not cost a page or 2 MiB).</li>
 * </ul>
 *
 * <p>{@code calloc} returns NULL when {@code count * elementByteSize} overflows. It is lazy for large
 * blocks, as libc's is: with an alignment above 16, a block of at least
 * {@link #LAZY_CALLOC_BYTES} bytes is mapped fresh from the kernel ({@code mmap} of anonymous pages,
 * which are zero and committed only when touched; over-mapped and trimmed for alignments above the
 * page size) instead of being written with zeros, and is unmapped by {@code free}. Smaller blocks
 * come from libc's {@code calloc} (over-allocated as above) or are zeroed in place (alignments above
 * 256).
 *
 * <p>Sizes passed to {@code free} and {@code realloc} must be the sizes the blocks were allocated or
 * last resized with, as {@link DataMemAllocator} requires. This allocator does not trust them to
 * tell its blocks apart, though: mapped blocks are found in a table of mapped addresses (looked up
 * for sizes of at least {@link #LAZY_CALLOC_BYTES} and for page-aligned addresses, where every
 * mapped block lies), over-allocated blocks by their tagged word. A wrong size therefore neither
 * crashes nor leaks in {@code free}; {@code realloc} keeps {@code min(oldByteSize, newByteSize)}
 * bytes of the data, so a wrong old size may lose data (never write outside the blocks). Adaptors
 * above still count the size given: {@code +guard} reports the mismatch.
 *
 * <p>{@code realloc} keeps the alignment and the data. Over-allocated blocks use libc's
 * {@code realloc} (in place when it can) and move the data to the new block's aligned address when
 * that is at another distance from the block's start; blocks of {@code aligned_alloc} stay in place
 * when their usable size allows it, else an aligned block is allocated, the data copied and the old
 * block freed; a mapped block moves to a {@code malloc}ed one unless it still fits its pages. A
 * failure leaves the old block untouched. Thread-safe.
 */
public final class AlignedAllocator implements DataMemAllocator {

    /** The default alignment: 64 bytes, a cache line and an AVX-512 vector. */
    public static final long DEFAULT_ALIGNMENT = 64;

    /**
     * The smallest {@code calloc} (with an alignment above 16) served with fresh mapped pages rather
     * than zeroed in place: 1 MiB.
     */
    public static final long LAZY_CALLOC_BYTES = 1L << 20;

    /**
     * The largest alignment served by over-allocating with {@code malloc} (256 bytes): larger ones use
     * {@code aligned_alloc}, so that over-allocation never costs more than 248 bytes per block.
     */
    public static final long OVER_ALLOCATION_MAX_ALIGNMENT = 256;

    private static final long MALLOC_ALIGNMENT = 16;

    // The word before an over-allocated block (always written): TAG in the high 32 bits, the
    // distance back to the malloc block's start (8 to 256) in the low ones.
    private static final long TAG = 0xDA7A_A119_0000_0000L;
    private static final long TAG_MASK = 0xFFFF_FFFF_0000_0000L;
    private static final MemorySegment EVERYWHERE = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

    private final long byteAlignment;
    private final boolean overAllocates;
    private final long pageMask = Libc.pageSize() - 1;
    private final MemoryTraits traits;
    // Blocks mapped by calloc: address -> mapped length. Looked up only for sizes of at least
    // LAZY_CALLOC_BYTES and page-aligned addresses while it is not empty, so small frees pay nothing.
    private final ConcurrentHashMap<Long, Long> mapped = new ConcurrentHashMap<>();

    /**
     * An allocator with the default 64-byte alignment.
     *
     * @return a new allocator
     */
    public static AlignedAllocator of() {
        return new AlignedAllocator(DEFAULT_ALIGNMENT);
    }

    /**
     * An allocator with the given alignment.
     *
     * @param byteAlignment a power of two, at least 8
     * @return a new allocator
     * @throws IllegalArgumentException if {@code byteAlignment} is not a power of two of at least 8,
     *                                  or above 2^40
     */
    public static AlignedAllocator of(long byteAlignment) {
        return new AlignedAllocator(byteAlignment);
    }

    private AlignedAllocator(long byteAlignment) {
        if (byteAlignment < 8 || Long.bitCount(byteAlignment) != 1) {
            throw new IllegalArgumentException("byteAlignment: " + byteAlignment + " (expected: a power of two >= 8)");
        }
        if (byteAlignment > (1L << 40)) {
            throw new IllegalArgumentException("byteAlignment: " + byteAlignment + " (expected: <= 2^40)");
        }
        this.byteAlignment = byteAlignment;
        this.overAllocates = byteAlignment > MALLOC_ALIGNMENT && byteAlignment <= OVER_ALLOCATION_MAX_ALIGNMENT;
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

    /**
     * Allocates an aligned block.
     *
     * @param byteSize the size of the block
     * @return the block, aligned to {@link #byteAlignment()}, or {@code NULL} if memory is exhausted
     * @throws IllegalArgumentException if {@code byteSize} is negative or above {@link #MAX_BYTE_SIZE}
     */
    @Override
    public MemorySegment malloc(long byteSize) {
        Checks.byteSize("byteSize", byteSize);
        if (overAllocates) {
            return place(Libc.malloc(byteSize + byteAlignment));
        }
        return byteAlignment <= MALLOC_ALIGNMENT ? Libc.malloc(byteSize) : Libc.alignedAlloc(byteAlignment, byteSize);
    }

    /**
     * The first aligned address at least 8 bytes into an over-allocated {@code malloc} block, with
     * the tagged distance written in the 8 bytes before it; NULL stays NULL.
     */
    private MemorySegment place(MemorySegment raw) {
        long start = raw.address();
        if (start == 0) {
            return MemorySegment.NULL;
        }
        long address = Checks.alignUp(start + 8, byteAlignment);   // 8 to byteAlignment bytes in
        EVERYWHERE.set(ValueLayout.JAVA_LONG_UNALIGNED, address - 8, TAG | (address - start));
        return MemorySegment.ofAddress(address);
    }

    /**
     * The start of the {@code malloc} block behind an over-allocated block's address, or -1 when
     * no tagged word precedes it (not a block of an over-allocating allocator). Package-private for
     * tests.
     */
    static long startOf(long address) {
        long word = EVERYWHERE.get(ValueLayout.JAVA_LONG_UNALIGNED, address - 8);
        long distance = word & ~TAG_MASK;
        return (word & TAG_MASK) == TAG && distance >= 8 && distance <= OVER_ALLOCATION_MAX_ALIGNMENT
                ? address - distance : -1;
    }

    /**
     * {@link #startOf}, or an {@link IllegalArgumentException} naming the call (built only then:
     * this is on every free's path).
     */
    private long startOrThrow(long address, long byteSize, long newByteSize) {
        long start = startOf(address);
        if (start < 0) {
            String call = newByteSize < 0
                    ? "free(0x" + Long.toHexString(address) + ", " + byteSize + ")"
                    : "realloc(0x" + Long.toHexString(address) + ", " + byteSize + ", " + newByteSize + ")";
            throw new IllegalArgumentException(this + ": " + call + ": not a block of this allocator: no"
                    + " header before 0x" + Long.toHexString(address) + " (expected: a pointer its malloc,"
                    + " calloc or realloc returned)");
        }
        return start;
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
        if (overAllocates) {
            return place(Libc.calloc(1, size + byteAlignment));
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

    /**
     * The mapped length of a block if calloc mapped it, else -1. Mapped blocks are page-aligned, so
     * a small size at an address inside a page needs no look-up, whatever size the caller passed.
     */
    private long mappedLength(long address, long byteSize) {
        if ((byteSize < LAZY_CALLOC_BYTES && (address & pageMask) != 0) || mapped.isEmpty()) {
            return -1;
        }
        Long length = mapped.get(address);
        return length == null ? -1 : length;
    }

    /** How many blocks {@code calloc} has mapped and not yet unmapped. Package-private for tests. */
    int mappedBlocks() {
        return mapped.size();
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
        long address = ptr.address();
        if (address == 0) {
            return malloc(newByteSize);
        }
        long length = mappedLength(address, oldByteSize);
        if (length >= 0) {
            if (newByteSize >= LAZY_CALLOC_BYTES && newByteSize <= length) {
                return ptr;   // still fits its pages, and free will still find it
            }
            MemorySegment moved = malloc(newByteSize);
            if (moved.address() == 0) {
                return MemorySegment.NULL;
            }
            copy(address, moved.address(), Math.min(Math.min(oldByteSize, newByteSize), length));
            unmap(address, length);
            return moved;
        }
        if (byteAlignment <= MALLOC_ALIGNMENT) {
            return Libc.realloc(ptr, Math.max(newByteSize, 1));
        }
        if (overAllocates) {
            return reallocOverAllocated(address, oldByteSize, newByteSize);
        }
        long usable = Libc.mallocUsableSize(ptr);
        if (newByteSize <= usable && newByteSize >= usable / 2) {
            return ptr; // fits, and shrinking would not give back much
        }
        MemorySegment moved = Libc.alignedAlloc(byteAlignment, newByteSize);
        if (moved.address() == 0) {
            return MemorySegment.NULL;
        }
        copy(address, moved.address(), Math.min(Math.min(oldByteSize, newByteSize), usable));
        Libc.free(ptr);
        return moved;
    }

    /**
     * libc's realloc of the whole {@code malloc} block, then the data moved to the new block's first
     * aligned address if that lies at another distance from the start than before. The new block
     * has {@code newByteSize + byteAlignment} bytes, and both distances are at most
     * {@code byteAlignment}, so the move stays inside it.
     */
    private MemorySegment reallocOverAllocated(long address, long oldByteSize, long newByteSize) {
        long start = startOrThrow(address, oldByteSize, newByteSize);
        MemorySegment raw = Libc.realloc(MemorySegment.ofAddress(start), newByteSize + byteAlignment);
        long newStart = raw.address();
        if (newStart == 0) {
            return MemorySegment.NULL;   // libc left the old block as it was
        }
        long newAddress = Checks.alignUp(newStart + 8, byteAlignment);
        long oldOffset = address - start;
        if (newAddress - newStart != oldOffset) {
            copy(newStart + oldOffset, newAddress, Math.min(oldByteSize, newByteSize));   // may overlap
        }
        EVERYWHERE.set(ValueLayout.JAVA_LONG_UNALIGNED, newAddress - 8, TAG | (newAddress - newStart));
        return MemorySegment.ofAddress(newAddress);
    }

    /** Copies bytes between native addresses; overlapping ranges are copied as if through a buffer. */
    private static void copy(long from, long to, long byteSize) {
        if (byteSize > 0) {
            MemorySegment.copy(EVERYWHERE, from, EVERYWHERE, to, byteSize);
        }
    }

    /**
     * Frees a block: unmaps it if {@code calloc} mapped it, else gives its {@code malloc} block to
     * libc. The size does not decide which (see the class comment).
     *
     * @param ptr      a block of this allocator, or {@code NULL} (a no-op)
     * @param byteSize the size it was allocated with
     * @throws IllegalArgumentException if {@code byteSize} is negative
     */
    @Override
    public void free(MemorySegment ptr, long byteSize) {
        Checks.notNegative("byteSize", byteSize);
        long address = ptr.address();
        if (address == 0) {
            return;
        }
        long length = mappedLength(address, byteSize);
        if (length >= 0) {
            unmap(address, length);
            return;
        }
        if (overAllocates) {
            Libc.free(MemorySegment.ofAddress(startOrThrow(address, byteSize, -1)));
        } else {
            Libc.free(ptr);
        }
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
