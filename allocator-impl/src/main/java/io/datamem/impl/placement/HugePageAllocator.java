package io.datamem.impl.placement;

import io.datamem.BackendException;
import io.datamem.DataMemAllocator;
import io.datamem.impl.snapshot.LayerSnapshot;
import io.datamem.impl.snapshot.SnapshotSource;
import io.datamem.internal.Libc;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Optional;

/**
 * Host memory on huge pages: transparent huge pages (a huge-page-aligned anonymous mapping advised
 * with {@code madvise(MADV_HUGEPAGE)}) or explicit huge pages of 2 MiB or 1 GiB
 * ({@code mmap(MAP_HUGETLB | MAP_HUGE_2MB / MAP_HUGE_1GB)}) from the pools the administrator
 * reserved.
 *
 * <p><b>Small requests go upstream.</b> Requests below the threshold (the option {@code threshold=BYTES}, 4 MiB by
 * default, NumPy's rule for {@code madvise(MADV_HUGEPAGE)}) go to the upstream allocator (by
 * default the C library's {@code malloc}, {@link io.datamem.DataMem#builtinDefault()}'s allocator);
 * larger ones get a mapping of their own, its length rounded up to
 * whole pages. Callers still pass their own sizes to {@link #free free} and {@link #realloc
 * realloc}: the allocator tells the two apart by size (below the threshold: upstream) and checks
 * that a mapped block is freed with the size it has.
 *
 * <p><b>Nothing falls back silently.</b> When the pages asked for cannot be had (no explicit page
 * left in the pool, transparent huge pages switched off), the fallback policy decides
 * ({@code fallback=fail}, {@code thp} or {@code normal}): fail ({@code NULL}), fall back to
 * transparent huge pages, or fall back to normal pages. Every
 * block records the pages it actually got ({@link #mapping(MemorySegment)}, and its
 * {@link #traitsOf(MemorySegment) traits}' page size), and fallbacks are counted
 * ({@link #fallbacks()}). A transparent block records the transparent huge page size: the kernel
 * backs it with huge pages when it faults it in, if it can; {@link HugePages#residency} reads
 * {@code /proc/self/smaps} to tell how much it did.
 *
 * <p>{@code realloc} of a mapped block uses {@code mremap}: shrinking unmaps the tail, growing
 * extends the mapping in place or moves it (keeping transparent blocks huge-page aligned);
 * explicit huge page blocks, and anything {@code mremap} cannot do, are moved by allocating,
 * copying and unmapping. A failure leaves the old block untouched. Kernel errors that are not
 * exhaustion are {@link BackendException}s naming the errno.
 *
 * <p><b>Making one.</b> By name: {@code DataMem.handler("hugepages:2m,fallback=thp")}
 * ({@code hugepages[:thp|2m|1g][,fallback=fail|thp|normal][,threshold=BYTES][(UPSTREAM)]});
 * {@code AllocatorStack.find(handler, HugePageAllocator.class)} finds it in a handler's stack.
 *
 * <p>Thread-safe. Linux only.
 */
public interface HugePageAllocator extends DataMemAllocator, SnapshotSource {

    /** The pages behind a mapping. */
    enum PageKind {
        /** Explicit 1 GiB huge pages ({@code MAP_HUGETLB | MAP_HUGE_1GB}). */
        HUGETLB_1G(1L << 30),
        /** Explicit 2 MiB huge pages ({@code MAP_HUGETLB | MAP_HUGE_2MB}). */
        HUGETLB_2M(2L << 20),
        /** Transparent huge pages: an aligned mapping advised with {@code MADV_HUGEPAGE}. */
        TRANSPARENT(0),
        /** Normal pages of the system page size. */
        NORMAL(0);

        private final long fixedPageSize;

        PageKind(long fixedPageSize) {
            this.fixedPageSize = fixedPageSize;
        }

        /**
         * Whether these are explicit (hugetlbfs) huge pages.
         *
         * @return true for {@link #HUGETLB_1G} and {@link #HUGETLB_2M}
         */
        public boolean explicit() {
            return fixedPageSize != 0;
        }

        /**
         * The page size on this machine.
         *
         * @return bytes: 1 GiB, 2 MiB, the transparent huge page size (2 MiB if the kernel does not
         *         say), or the system page size
         */
        public long pageSize() {
            return switch (this) {
                case HUGETLB_1G, HUGETLB_2M -> fixedPageSize;
                case TRANSPARENT -> HugePages.transparentPageSize() > 0 ? HugePages.transparentPageSize() : 2L << 20;
                case NORMAL -> Libc.pageSize();
            };
        }
    }

    /**
     * The page kinds this allocator tries for a mapping, in order: the pages asked for and the
     * fallback, less those this machine does not offer.
     *
     * @return one or two kinds
     */
    List<PageKind> pageKinds();

    /**
     * The mapping a block lives in, with the pages it got: what {@link #snapshot()} lists for it.
     * Its {@code byteSize} is the size the caller asked for (and frees with), its
     * {@code mappedByteSize} that size rounded up to whole pages of {@code pageSize}; its
     * {@code pages} names the {@link PageKind} in lower case ({@code transparent}, {@code hugetlb_2m},
     * ...), followed by {@code ", fallback"} when these are not the pages asked for. Its
     * {@code policy} and {@code nodes} are empty: a NUMA allocator over this one says those.
     *
     * @param ptr a block this allocator returned
     * @return its mapping, or empty if the block came from the upstream (or is not a live block)
     * @throws NullPointerException if {@code ptr} is null
     */
    Optional<LayerSnapshot.Mapping> mapping(MemorySegment ptr);

    /**
     * How many mappings got other pages than those asked for, since this allocator was made.
     *
     * @return a count
     */
    long fallbacks();

    /**
     * How many mappings of one kind of page this allocator made (reallocations that moved a block
     * included).
     *
     * @param kind the page kind
     * @return a count
     * @throws NullPointerException if {@code kind} is null
     */
    long mappingCount(PageKind kind);
}
