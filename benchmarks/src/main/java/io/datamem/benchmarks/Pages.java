package io.datamem.benchmarks;

import io.datamem.DataMem;
import io.datamem.impl.placement.HugePageAllocator;
import io.datamem.impl.placement.HugePages;

import java.lang.foreign.MemorySegment;

/**
 * Large blocks on one kind of page: transparent huge pages through datamem's
 * {@link HugePageAllocator} ({@code thp}), or ordinary 4 KiB pages ({@code 4k}: an anonymous mapping
 * advised {@code MADV_NOHUGEPAGE}, so that it stays on base pages whatever the transparent huge page
 * mode).
 */
public final class Pages implements AutoCloseable {

    private static HugePageAllocator transparent;

    private final String kind;
    private final long byteSize;
    private final MemorySegment segment;

    private Pages(String kind, long byteSize, MemorySegment segment) {
        this.kind = kind;
        this.byteSize = byteSize;
        this.segment = segment;
    }

    /**
     * Maps a block.
     *
     * @param kind     {@code thp} or {@code 4k}
     * @param byteSize bytes, a multiple of 2 MiB
     * @return the block, not yet touched
     * @throws IllegalArgumentException if {@code kind} is unknown
     * @throws IllegalStateException    if the pages cannot be had (transparent huge pages off, or no
     *                                  memory)
     */
    public static Pages map(String kind, long byteSize) {
        long address = switch (kind) {
            case "thp" -> {
                MemorySegment p = transparent().malloc(byteSize);
                if (p.address() == 0) {
                    throw new IllegalStateException("no memory for " + byteSize + " bytes on transparent huge pages");
                }
                yield p.address();
            }
            case "4k" -> NativeCalls.mapBasePages(byteSize);
            default -> throw new IllegalArgumentException("pages: " + kind + " (expected: thp or 4k)");
        };
        return new Pages(kind, byteSize, MemorySegment.ofAddress(address).reinterpret(byteSize));
    }

    private static synchronized HugePageAllocator transparent() {
        if (transparent == null) {
            transparent = (HugePageAllocator) DataMem.createHandler("hugepages").allocator();
        }
        return transparent;
    }

    /**
     * The block.
     *
     * @return a segment over it (global scope: valid until {@link #close()})
     */
    public MemorySegment segment() {
        return segment;
    }

    /**
     * What backs the block now, from {@code /proc/self/smaps}.
     *
     * @return a one-line description
     */
    public String residency() {
        return HugePages.residency(segment).map(Object::toString).orElse("smaps not readable");
    }

    /** Unmaps the block. */
    @Override
    public void close() {
        if (kind.equals("thp")) {
            transparent().free(segment, byteSize);
        } else {
            NativeCalls.unmap(segment.address(), byteSize);
        }
    }
}
