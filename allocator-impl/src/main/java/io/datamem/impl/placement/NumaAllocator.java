package io.datamem.impl.placement;

import io.datamem.BackendException;
import io.datamem.DataMemAllocator;
import io.datamem.impl.snapshot.SnapshotSource;

import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * Host memory placed on chosen NUMA nodes through hwloc: every block is a mapping of its own
 * (whole pages), bound with a {@link NumaPolicy} to the nodes of a target (node ids, the local
 * node, the nodes near a PCI device, all nodes) before anything touches it.
 *
 * <ul>
 *   <li><b>Policies:</b> {@link NumaPolicy#BIND bind}, {@link NumaPolicy#PREFERRED preferred},
 *       {@link NumaPolicy#INTERLEAVE interleave}, {@link NumaPolicy#FIRST_TOUCH first-touch}
 *       ({@link NumaPolicy#NEXT_TOUCH next-touch} where the platform has it: not on Linux).</li>
 *   <li><b>Targets:</b> explicit node ids, the node local to the allocating thread (found per
 *       allocation), the nodes nearest a PCI device, all nodes.</li>
 *   <li><b>Strict:</b> fail rather than accept another placement: hwloc's {@code STRICT} flag is
 *       passed, and (with {@code populate}) a block verified to lie off its nodes
 *       is given back and the allocation returns {@code NULL}. Without it such blocks are counted
 *       ({@link #placementMismatches()}) and reported.</li>
 *   <li><b>Populate:</b> fault every page in at allocation (in the bound placement, through
 *       {@code madvise(MADV_POPULATE_WRITE)}) and verify where the pages went. Costs the page
 *       faults up front; turns "the node is full" into {@code NULL} instead of the kernel's
 *       out-of-memory handling at first touch. A bound block larger than what its nodes have left
 *       ({@code MemFree} less the zones' high watermarks) is refused before any page is faulted,
 *       since faulting it in would end the process just the same.</li>
 * </ul>
 *
 * <p><b>Verification.</b> Pages get their node when first touched. {@link #placement} asks hwloc
 * ({@code hwloc_get_area_memlocation}) and the kernel ({@code move_pages}) where the pages of a
 * block are and compares with the policy: call it after the block has been written.
 *
 * <p><b>Composition.</b> With a huge-page upstream ({@code numa:bind=1(hugepages)}), blocks of
 * at least its threshold are huge-page mappings, bound the same way before first touch (explicit
 * huge pages are always populated at allocation: a bound explicit huge page that cannot be had
 * would otherwise kill the process with {@code SIGBUS} at first touch). With another upstream that
 * guarantees page-aligned blocks (such as {@code aligned:4096}), blocks are taken from it in whole
 * pages, bound with migration of any page already touched, and their policy is reset when freed.
 *
 * <p><b>Cost.</b> Each block is its own mapping: a {@code mmap}, an {@code mbind} and a
 * {@code munmap} per block, and at least a page. Put a pool in front for many small blocks.
 *
 * <p><b>Errors.</b> An unknown node, an unsupported policy, or a platform where memory cannot be
 * bound are exceptions when the handler is made that list what exists; nothing is ever allocated
 * unbound instead. At run time, exhaustion is {@code NULL}; other kernel or hwloc failures are
 * {@link BackendException}s naming the errno.
 *
 * <p><b>Making one.</b> By name: {@code DataMem.handler("numa:bind=0,strict")}
 * ({@code numa:local}, {@code numa:POLICY=TARGET[,strict][,populate][(UPSTREAM)]});
 * {@code AllocatorStack.find(handler, NumaAllocator.class)} finds it in a handler's stack.
 *
 * <p>Thread-safe. Linux only.
 */
public interface NumaAllocator extends DataMemAllocator, SnapshotSource {

    /**
     * The topology the target was resolved on (this machine).
     *
     * @return the topology
     */
    NumaTopology topology();

    /**
     * The nodes a block allocated now, on this thread, is placed on.
     *
     * @return node ids, ascending
     */
    List<Integer> nodes();

    /**
     * Blocks found off their target nodes when verified at allocation (the flag
     * {@code populate}); with {@code strict} they were given back.
     *
     * @return a count
     */
    long placementMismatches();

    /**
     * Blocks whose placement was verified at allocation.
     *
     * @return a count
     */
    long verifiedBlocks();

    /**
     * Where the pages of a block are now, compared with its policy.
     *
     * @param ptr a live block of this allocator
     * @return the placement report
     * @throws NullPointerException          if {@code ptr} is null
     * @throws IllegalArgumentException      if {@code ptr} is not a live block of this allocator
     * @throws UnsupportedOperationException if this platform cannot tell where pages are
     * @throws BackendException              if hwloc or the kernel fails to answer
     */
    NumaPlacement placement(MemorySegment ptr);
}
