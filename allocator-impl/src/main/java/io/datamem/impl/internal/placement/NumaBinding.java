package io.datamem.impl.internal.placement;

import io.datamem.BackendException;
import io.datamem.impl.os.HwlocBinding;
import io.datamem.impl.os.LinuxMemory;
import io.datamem.impl.os.NodeMemory;
import io.datamem.impl.os.Spellings;
import io.datamem.impl.placement.HugePageAllocator;
import io.datamem.impl.placement.NumaPlacement;
import io.datamem.impl.placement.NumaPolicy;
import io.datamem.impl.placement.NumaTopology;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * The calls that place a {@link NumaAllocatorImpl}'s pages and check where they went: binding a
 * range to its nodes with hwloc (and giving upstream memory back its default policy), faulting it
 * in and verifying its location when asked to, asking the kernel where each page of a block lies,
 * unmapping, and the hook that binds the mappings of a composed huge-page allocator; with the
 * counts of verified blocks and of misplaced ones. Errors become {@link BackendException}s naming
 * the handler.
 *
 * <p>Thread-safe.
 */
final class NumaBinding {

    /** The nodes of the block a huge-page allocator call is mapping, for {@link Placement}. */
    private static final ThreadLocal<List<Integer>> PENDING_NODES = new ThreadLocal<>();

    private final String name;
    private final NumaPolicy policy;
    private final boolean strict;
    private final boolean populate;
    private final NumaTopology topology;
    private final long pageSize;
    private final int hwlocPolicy;
    private final int hwlocFlags;
    private final LongAdder mismatches = new LongAdder();
    private final LongAdder verified = new LongAdder();

    NumaBinding(String name, NumaPolicy policy, boolean strict, boolean populate, NumaTopology topology,
                long pageSize) {
        this.name = name;
        this.policy = policy;
        this.strict = strict;
        this.populate = populate;
        this.topology = topology;
        this.pageSize = pageSize;
        this.hwlocPolicy = switch (policy) {
            case BIND, PREFERRED -> HwlocBinding.MEMBIND_BIND;
            case INTERLEAVE -> HwlocBinding.MEMBIND_INTERLEAVE;
            case FIRST_TOUCH -> HwlocBinding.MEMBIND_FIRSTTOUCH;
            case NEXT_TOUCH -> HwlocBinding.MEMBIND_NEXTTOUCH;
        };
        this.hwlocFlags = policy == NumaPolicy.BIND || strict ? HwlocBinding.MEMBIND_STRICT : 0;
    }

    /** Blocks found on other nodes than their policy's when verified. */
    long mismatches() {
        return mismatches.sum();
    }

    /** Blocks whose placement was verified. */
    long verified() {
        return verified.sum();
    }

    /**
     * Where the pages of a block lie now: hwloc's answer for the whole range, and the kernel's node
     * of each page of {@code stride} bytes.
     *
     * @throws UnsupportedOperationException if this platform cannot tell where pages are
     * @throws BackendException              if a query fails
     */
    NumaPlacement placement(long address, long byteSize, long span, long stride, List<Integer> targets) {
        if (!topology.locationQuerySupported()) {
            throw new UnsupportedOperationException("this platform cannot tell where pages are (hwloc reports no "
                    + "get_area_memlocation support)");
        }
        List<Integer> where = new ArrayList<>();
        int r = HwlocBinding.areaMemlocation(address, span, where);
        if (r < 0) {
            throw backend("hwloc_get_area_memlocation", -r, span, "hwloc", null);
        }
        long total = span / stride;
        Map<Integer, Long> perNode = new TreeMap<>();
        final int chunk = 1 << 16;
        for (long first = 0; first < total; first += chunk) {
            int[] status = new int[(int) Math.min(chunk, total - first)];
            int q = LinuxMemory.pageNodes(address + first * stride, status.length * stride, stride, status);
            if (q < 0) {
                throw backend("move_pages", -q, span, "Linux", null);
            }
            for (int s : status) {
                if (s >= 0) {
                    perNode.merge(s, 1L, Long::sum);
                }
            }
        }
        return new NumaPlacement(address, byteSize, policy, targets, where, perNode, stride, total);
    }

    /** Binds a range; false when the kernel is out of memory for it. */
    boolean bind(long address, long byteSize, List<Integer> nodes, int extraFlags) {
        long set = policy == NumaPolicy.FIRST_TOUCH ? HwlocBinding.completeNodeset() : HwlocBinding.nodeset(nodes);
        int r = HwlocBinding.setAreaMembind(address, byteSize, set, hwlocPolicy, hwlocFlags | extraFlags);
        if (r == -LinuxMemory.ENOMEM) {
            return false;
        }
        if (r < 0) {
            throw backend("hwloc_set_area_membind", -r, byteSize, "hwloc", policy.spec() + " on "
                    + Spellings.nodeNames(nodes));
        }
        return true;
    }

    /** Gives a range of upstream memory back its default policy before the upstream reuses it. */
    void unbind(long address, long byteSize) {
        int r = HwlocBinding.setAreaMembind(address, byteSize, HwlocBinding.completeNodeset(), HwlocBinding.MEMBIND_DEFAULT, 0);
        if (r < 0) {
            throw backend("hwloc_set_area_membind", -r, byteSize, "hwloc", "resetting the policy to default");
        }
    }

    /**
     * Faults a bound range in when asked to (or when it is on explicit huge pages), and verifies
     * where it went. False when the memory cannot be had there (or, strict, lies elsewhere).
     */
    boolean populateAndVerify(long address, long byteSize, List<Integer> nodes, boolean explicitHugePages) {
        if (!populate && !explicitHugePages) {
            return true;
        }
        if (policy == NumaPolicy.BIND && !explicitHugePages && !fitsOnBoundNodes(byteSize, nodes)) {
            return false;
        }
        int r = LinuxMemory.madvise(address, byteSize, LinuxMemory.MADV_POPULATE_WRITE);
        if (r == -LinuxMemory.ENOMEM || r == -LinuxMemory.EFAULT || r == -LinuxMemory.EAGAIN) {
            return false;
        }
        if (r == -LinuxMemory.EINVAL && !explicitHugePages) {
            MemorySegment s = MemorySegment.ofAddress(address).reinterpret(byteSize);
            for (long off = 0; off < byteSize; off += pageSize) {
                s.set(ValueLayout.JAVA_BYTE, off, (byte) 0); // kernels before 5.14
            }
        } else if (r < 0) {
            throw backend("madvise(MADV_POPULATE_WRITE)", -r, byteSize, "Linux",
                    r == -LinuxMemory.EINVAL ? "bound explicit huge pages need Linux 5.14 or later" : null);
        }
        if (!topology.locationQuerySupported()) {
            return true;
        }
        List<Integer> where = new ArrayList<>();
        int q = HwlocBinding.areaMemlocation(address, byteSize, where);
        if (q < 0) {
            throw backend("hwloc_get_area_memlocation", -q, byteSize, "hwloc", null);
        }
        verified.increment();
        if (policy != NumaPolicy.FIRST_TOUCH && !nodes.containsAll(where)) {
            mismatches.increment();
            return !strict;
        }
        return true;
    }

    /**
     * Whether a bound range can be faulted in on its nodes without the kernel's out-of-memory
     * killer: bound pages may not spill, and when their nodes are full the killer ends the process
     * with the most memory there (this one, typically) rather than failing the populate
     * ({@link NodeMemory}). Explicit huge pages come from their reserved pool and fail cleanly.
     */
    private static boolean fitsOnBoundNodes(long byteSize, List<Integer> nodes) {
        long room = 0;
        for (int node : nodes) {
            long bytes = NodeMemory.allocatableBytes(node);
            if (bytes < 0) {
                return true; // this system does not tell: leave it to the kernel
            }
            room += bytes;
        }
        return byteSize <= room;
    }

    void unmap(long address, long byteSize, Throwable pending) {
        int r = LinuxMemory.munmap(address, byteSize);
        if (r < 0) {
            BackendException e = backend("munmap", -r, byteSize, "Linux", null);
            if (pending == null) {
                throw e;
            }
            pending.addSuppressed(e);
        }
    }

    BackendException backend(String operation, int errno, long byteSize, String backend, String detail) {
        return new BackendException(name, byteSize, backend, operation, errno, LinuxMemory.errnoName(errno),
                LinuxMemory.errnoDescription(errno) + (detail == null ? "" : ", " + detail));
    }

    /**
     * Makes a call of the composed huge-page allocator whose fresh mappings are for a block of these
     * nodes: its hook ({@link #hook}) binds them there.
     */
    static MemorySegment onNodes(List<Integer> nodes, Supplier<MemorySegment> call) {
        PENDING_NODES.set(nodes);
        try {
            return call.get();
        } finally {
            PENDING_NODES.remove();
        }
    }

    /**
     * The hook that binds the fresh mappings of the huge-page allocator the NUMA allocator composes
     * with: to the nodes of the block being mapped ({@link #onNodes}), else to {@code localNodes}.
     */
    MappingHook hook(Supplier<List<Integer>> localNodes) {
        return new Placement(localNodes);
    }

    /** Binds the fresh mappings of the huge-page allocator this allocator composes with. */
    private final class Placement implements MappingHook {

        private final Supplier<List<Integer>> localNodes;

        Placement(Supplier<List<Integer>> localNodes) {
            this.localNodes = localNodes;
        }

        @Override
        public boolean prepare(long address, long byteSize, HugePageAllocator.PageKind kind, long pageSize) {
            List<Integer> nodes = pendingNodes();
            return bind(address, byteSize, nodes, 0) && populateAndVerify(address, byteSize, nodes, kind.explicit());
        }

        @Override
        public boolean grown(long address, long oldByteSize, long newByteSize, HugePageAllocator.PageKind kind,
                             long pageSize) {
            return populateAndVerify(address + oldByteSize, newByteSize - oldByteSize, pendingNodes(), kind.explicit());
        }

        private List<Integer> pendingNodes() {
            List<Integer> nodes = PENDING_NODES.get();
            return nodes != null ? nodes : localNodes.get();
        }
    }
}
