package io.datamem.impl.placement;

/**
 * How a {@link NumaAllocator} places the pages of its blocks on NUMA nodes: hwloc's memory binding
 * policies, named for what they do on Linux.
 */
public enum NumaPolicy {

    /**
     * Only the target nodes (hwloc {@code BIND} with {@code STRICT}; Linux {@code MPOL_BIND}). When
     * they are full, the allocation fails: at once with the {@code populate}
     * flag, otherwise when a page is first touched (the kernel's out-of-memory handling).
     */
    BIND("bind"),

    /**
     * The target nodes first, other nodes when they are full (hwloc {@code BIND} without
     * {@code STRICT}; Linux {@code MPOL_PREFERRED_MANY}, or {@code MPOL_PREFERRED} on kernels
     * before 5.15, which prefer the first target node only).
     */
    PREFERRED("preferred"),

    /** Pages spread round-robin over the target nodes (hwloc {@code INTERLEAVE}; {@code MPOL_INTERLEAVE}). */
    INTERLEAVE("interleave"),

    /**
     * Each page on the node of the CPU that first touches it (hwloc {@code FIRSTTOUCH};
     * {@code MPOL_LOCAL}). Takes no target: the kernel decides at the first touch.
     */
    FIRST_TOUCH("firsttouch"),

    /**
     * Pages move to the node of the next CPU that touches them (hwloc {@code NEXTTOUCH}). hwloc
     * offers it on no Linux kernel (Linux has no such policy); asking for it fails with an
     * exception that lists the policies supported here.
     */
    NEXT_TOUCH("nexttouch");

    private final String spec;

    NumaPolicy(String spec) {
        this.spec = spec;
    }

    /**
     * The policy's name in handler names ({@code numa:bind=0}).
     *
     * @return for example {@code bind}, {@code firsttouch}
     */
    public String spec() {
        return spec;
    }
}
