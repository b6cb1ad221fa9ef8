package io.datamem.impl.internal.placement;

import io.datamem.DataMemAllocator;
import io.datamem.MemoryTraits;
import io.datamem.impl.os.HwlocBinding;
import io.datamem.impl.os.LinuxMemory;
import io.datamem.impl.os.LiveBlocks;
import io.datamem.impl.placement.NumaAllocator;
import io.datamem.impl.placement.NumaPlacement;
import io.datamem.impl.placement.NumaPolicy;
import io.datamem.impl.placement.NumaTopology;
import io.datamem.impl.snapshot.LayerSnapshot;
import io.datamem.internal.Checks;
import io.datamem.internal.Libc;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The NUMA allocator behind {@code numa:...}: what {@link NumaAllocator} describes, built by
 * {@link NumaProvider} from a handler name ({@link NumaBuilder#parse}), or
 * by tests with {@link #builder()}, {@link #bind} and {@link #local()}. The policy, the target, the
 * strict and populate flags and the upstream are the {@link NumaBuilder}'s; over a
 * {@link HugePageAllocatorImpl} upstream, a hooked copy of it maps the large blocks.
 *
 * <p>This class keeps the table of live blocks and decides where each block comes from (its own
 * mappings, the huge-page allocator's, or the upstream's); {@link NumaBinding} makes the calls that
 * bind, populate, verify and locate their pages.
 *
 * <p>Thread-safe. Linux only.
 */
public final class NumaAllocatorImpl implements NumaAllocator {

    private enum Origin { OWN, HUGE_PAGES, UPSTREAM }

    private record Block(long address, long byteSize, long span, Origin origin, List<Integer> nodes) {
    }

    private final NumaPolicy policy;
    private final NumaTarget target;
    private final boolean strict;
    private final boolean populate;
    private final DataMemAllocator givenUpstream;
    private final HugePageAllocatorImpl hugePages; // hooked copy of a HugePageAllocator upstream
    private final DataMemAllocator upstream;   // any other upstream
    private final String name;
    private final NumaTopology topology;
    private final List<Integer> staticNodes;   // null for the local target
    private final AtomicReferenceArray<List<Integer>> localNodesByCpu;
    private final long pageSize = Libc.pageSize();
    private final NumaBinding binding;
    private final MemoryTraits traits;
    private final LiveBlocks<Block> blocks = LiveBlocks.of(Block::byteSize, new Refusals());

    /** The allocator {@link NumaBuilder#build()} checked the settings of, on this topology. */
    NumaAllocatorImpl(NumaBuilder b, NumaTopology topology, List<Integer> staticNodes) {
        this.policy = b.policy;
        this.target = b.effectiveTarget();
        this.strict = b.strict;
        this.populate = b.populate;
        this.topology = topology;
        this.staticNodes = staticNodes;
        this.name = b.name != null ? b.name : b.spec();
        this.givenUpstream = b.upstream;
        this.binding = new NumaBinding(name, policy, strict, populate, topology, pageSize);
        if (b.upstream instanceof HugePageAllocatorImpl hp) {
            this.hugePages = hp.withHook(binding.hook(this::nodesForThisThread), name);
            this.upstream = null;
        } else {
            this.hugePages = null;
            this.upstream = b.upstream;
        }
        int maxCpu = topology.nodes().stream().flatMap(n -> n.cpus().stream()).mapToInt(Integer::intValue).max()
                .orElse(0);
        this.localNodesByCpu = new AtomicReferenceArray<>(maxCpu + 1);
        if (upstream != null) {
            this.traits = upstream.traits();
        } else {
            this.traits = MemoryTraits.host(pageSize).withPageSize(pageSize);
        }
    }

    /**
     * A builder, set to {@link NumaPolicy#BIND bind} to the {@linkplain NumaTarget#local() local
     * node}, not strict, not populated, every block on normal pages.
     *
     * @return a new builder
     */
    public static NumaBuilder builder() {
        return new NumaBuilder();
    }

    /**
     * Binds strictly to explicit nodes.
     *
     * @param nodes node ids
     * @return a new allocator
     * @throws IllegalArgumentException      if a node does not exist (the message lists the nodes)
     * @throws UnsupportedOperationException if memory cannot be bound on this platform
     * @throws IllegalStateException         if hwloc cannot be loaded here
     */
    public static NumaAllocatorImpl bind(int... nodes) {
        return builder().policy(NumaPolicy.BIND).target(NumaTarget.nodes(nodes)).build();
    }

    /**
     * Binds each block to the node local to the thread that allocates it.
     *
     * @return a new allocator
     * @throws UnsupportedOperationException if memory cannot be bound on this platform
     * @throws IllegalStateException         if hwloc cannot be loaded here
     */
    public static NumaAllocatorImpl local() {
        return builder().build();
    }


    /**
     * A builder holding this allocator's configuration (policy, target, flags, upstream, name).
     *
     * @return a new builder
     */
    public NumaBuilder toBuilder() {
        NumaBuilder b = new NumaBuilder();
        b.policy = policy;
        b.target = target;
        b.targetGiven = true;
        b.strict = strict;
        b.populate = populate;
        b.upstream = givenUpstream;
        b.name = name;
        return b;
    }


    /**
     * The policy.
     *
     * @return the policy
     */
    public NumaPolicy policy() {
        return policy;
    }

    /**
     * The target.
     *
     * @return the target (all nodes for first-touch)
     */
    public NumaTarget target() {
        return target;
    }

    /**
     * Whether placement is strict.
     *
     * @return true if strict
     */
    public boolean strict() {
        return strict;
    }

    /**
     * Whether blocks are populated and verified at allocation.
     *
     * @return true if populated
     */
    public boolean populate() {
        return populate;
    }

    /**
     * The upstream the memory comes from, if any.
     *
     * @return the allocator given to {@link NumaBuilder#upstream}, or empty for normal-page mappings of
     *         this allocator
     */
    public Optional<DataMemAllocator> upstream() {
        return Optional.ofNullable(givenUpstream);
    }

    /**
     * The huge-page allocator whose mappings this allocator binds, if the upstream is one.
     *
     * @return the bound huge-page allocator (its
     *         {@link io.datamem.impl.placement.HugePageAllocator#mapping mappings} and
     *         {@link io.datamem.impl.placement.HugePageAllocator#fallbacks fallbacks} describe this
     *         allocator's large blocks), or empty
     */
    public Optional<HugePageAllocatorImpl> hugePages() {
        return Optional.ofNullable(hugePages);
    }

    @Override
    public NumaTopology topology() {
        return topology;
    }

    @Override
    public List<Integer> nodes() {
        return nodesForThisThread();
    }

    @Override
    public long placementMismatches() {
        return binding.mismatches();
    }

    @Override
    public long verifiedBlocks() {
        return binding.verified();
    }

    @Override
    public NumaPlacement placement(MemorySegment ptr) {
        Objects.requireNonNull(ptr, "ptr");
        Block b = blocks.get(ptr.address());
        if (b == null) {
            throw new IllegalArgumentException("ptr: 0x" + Long.toHexString(ptr.address())
                    + " is not a live block of '" + name + "'");
        }
        long stride = b.origin() == Origin.HUGE_PAGES
                ? Optional.ofNullable(hugePages.mapped(ptr.address())).map(HugePageAllocatorImpl.Mapping::pageSize)
                        .orElse(pageSize) : pageSize;
        List<Integer> targets = policy == NumaPolicy.FIRST_TOUCH
                ? topology.nodes().stream().map(NumaTopology.Node::id).toList() : b.nodes();
        return binding.placement(b.address(), b.byteSize(), b.span(), stride, targets);
    }

    /**
     * The blocks of this allocator with their pages, policy and target nodes, for a memory snapshot.
     * The nodes are those the policy names for each block (every node for first-touch: none named);
     * where the pages are now is {@link #placement}'s to say, a query per page too costly for a
     * snapshot.
     *
     * @return a {@link LayerSnapshot.Placement}, its mappings by address
     */
    @Override
    public LayerSnapshot snapshot() {
        List<LayerSnapshot.Mapping> all = new ArrayList<>();
        for (Block b : blocks.records()) {
            long pages = pageSize;
            String kind = "normal";
            if (b.origin() == Origin.HUGE_PAGES) {
                HugePageAllocatorImpl.Mapping m = hugePages.mapped(b.address());
                pages = m == null ? 0 : m.pageSize();
                kind = m == null ? "hugepages" : m.pages();
            } else if (b.origin() == Origin.UPSTREAM) {
                pages = upstream.traits().pageSize();
                kind = "upstream";
            }
            all.add(new LayerSnapshot.Mapping(b.address(), b.byteSize(), b.span(), pages, kind, policy.spec(),
                    policy == NumaPolicy.FIRST_TOUCH ? List.of() : b.nodes()));
        }
        all.sort(java.util.Comparator.comparingLong(LayerSnapshot.Mapping::address));
        return new LayerSnapshot.Placement("NumaAllocator", all);
    }

    // ------------------------------------------------------------------------------------------------

    @Override
    public MemorySegment malloc(long byteSize) {
        Checks.byteSize("byteSize", byteSize);
        return allocate(byteSize, nodesForThisThread(), false);
    }

    @Override
    public MemorySegment calloc(long count, long elementByteSize) {
        long size = Checks.callocByteSize(count, elementByteSize);
        if (size < 0) {
            return MemorySegment.NULL;
        }
        return allocate(size, nodesForThisThread(), true);
    }

    @Override
    public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        Checks.byteSize("oldByteSize", oldByteSize);
        Checks.byteSize("newByteSize", newByteSize);
        if (ptr.address() == 0) {
            return malloc(newByteSize);
        }
        Block b = live(ptr, oldByteSize);
        Origin to = originFor(newByteSize);
        if (b.origin() == Origin.HUGE_PAGES && to == Origin.HUGE_PAGES) {
            MemorySegment q = NumaBinding.onNodes(b.nodes(), () -> hugePages.realloc(ptr, oldByteSize, newByteSize));
            if (q.address() == 0) {
                return q;
            }
            long span = hugePages.mapped(q.address()).mappedByteSize();
            blocks.replace(b.address(), b, q.address(),
                    new Block(q.address(), newByteSize, span, Origin.HUGE_PAGES, b.nodes()));
            return q;
        }
        if (b.origin() == Origin.OWN && to == Origin.OWN) {
            long moved = remapOwn(b, newByteSize);
            if (moved != 0) {
                return MemorySegment.ofAddress(moved);
            }
        }
        MemorySegment q = allocate(newByteSize, b.nodes(), false);
        if (q.address() == 0) {
            return q;
        }
        long keep = Math.min(oldByteSize, newByteSize);
        if (keep > 0) {
            MemorySegment.copy(ptr.reinterpret(keep), 0, q.reinterpret(keep), 0, keep);
        }
        release(b, ptr);
        return q;
    }

    @Override
    public void free(MemorySegment ptr, long byteSize) {
        Checks.notNegative("byteSize", byteSize);
        if (ptr.address() == 0) {
            return;
        }
        release(live(ptr, byteSize), ptr);
    }

    @Override
    public MemoryTraits traits() {
        return traits;
    }

    @Override
    public MemoryTraits traitsOf(MemorySegment ptr) {
        Block b = blocks.get(ptr.address());
        if (b == null) {
            return traits;
        }
        return switch (b.origin()) {
            case HUGE_PAGES -> hugePages.traitsOf(ptr);
            case UPSTREAM -> upstream.traitsOf(ptr);
            case OWN -> traits;
        };
    }

    @Override
    public String toString() {
        return "NumaAllocator[" + name + (givenUpstream == null ? "" : ", upstream " + givenUpstream) + "]";
    }

    // ------------------------------------------------------------------------------------------------

    private List<Integer> nodesForThisThread() {
        if (staticNodes != null) {
            return staticNodes;
        }
        int cpu = LinuxMemory.currentCpu();
        if (cpu < 0) {
            throw new IllegalStateException("handler '" + name + "': cannot tell which CPU this thread runs on "
                    + "(sched_getcpu failed), so its local node is unknown");
        }
        if (cpu >= localNodesByCpu.length()) {
            return topology.nodesOfCpu(cpu);
        }
        List<Integer> nodes = localNodesByCpu.get(cpu);
        if (nodes == null) {
            nodes = topology.nodesOfCpu(cpu);
            localNodesByCpu.set(cpu, nodes);
        }
        return nodes;
    }

    private Origin originFor(long byteSize) {
        if (hugePages != null) {
            return byteSize >= hugePages.thresholdByteSize() ? Origin.HUGE_PAGES : Origin.OWN;
        }
        return upstream != null ? Origin.UPSTREAM : Origin.OWN;
    }

    private Block live(MemorySegment ptr, long byteSize) {
        return blocks.check(ptr.address(), byteSize, "free");
    }

    /** How this allocator words what its table of blocks refuses. */
    private final class Refusals implements LiveBlocks.Refusals {

        @Override
        public IllegalArgumentException notLive(long address, long byteSize, String op) {
            return new IllegalArgumentException("ptr: 0x" + Long.toHexString(address) + " is not a live block of '"
                    + name + "' (freed already, or allocated elsewhere)");
        }

        @Override
        public IllegalArgumentException wrongSize(long address, long liveByteSize, long byteSize, String op) {
            return new IllegalArgumentException("byteSize: " + byteSize + " (expected: " + liveByteSize
                    + ", the size of the block at 0x" + Long.toHexString(address) + ")");
        }

        @Override
        public IllegalArgumentException freedConcurrently(long address, long byteSize, String op) {
            return new IllegalArgumentException("ptr: 0x" + Long.toHexString(address) + " was freed concurrently");
        }
    }

    private MemorySegment allocate(long byteSize, List<Integer> nodes, boolean zero) {
        return switch (originFor(byteSize)) {
            case HUGE_PAGES -> {
                MemorySegment p = NumaBinding.onNodes(nodes,
                        () -> zero ? hugePages.calloc(byteSize, 1) : hugePages.malloc(byteSize));
                if (p.address() != 0) {
                    long span = hugePages.mapped(p.address()).mappedByteSize();
                    blocks.add(p.address(), new Block(p.address(), byteSize, span, Origin.HUGE_PAGES, nodes));
                }
                yield p;
            }
            case UPSTREAM -> allocateUpstream(byteSize, nodes, zero);
            case OWN -> allocateOwn(byteSize, nodes);
        };
    }

    private MemorySegment allocateOwn(long byteSize, List<Integer> nodes) {
        long span = Checks.alignUp(Math.max(byteSize, 1), pageSize);
        long address = LinuxMemory.mmap(0, span, LinuxMemory.PROT_READ_WRITE,
                LinuxMemory.MAP_PRIVATE | LinuxMemory.MAP_ANONYMOUS);
        if (address < 0) {
            int errno = (int) -address;
            if (errno == LinuxMemory.ENOMEM || errno == LinuxMemory.EAGAIN) {
                return MemorySegment.NULL;
            }
            throw binding.backend("mmap", errno, span, "Linux", null);
        }
        boolean ok;
        try {
            ok = binding.bind(address, span, nodes, 0) && binding.populateAndVerify(address, span, nodes, false);
        } catch (RuntimeException | Error e) {
            binding.unmap(address, span, e);
            throw e;
        }
        if (!ok) {
            binding.unmap(address, span, null);
            return MemorySegment.NULL;
        }
        blocks.add(address, new Block(address, byteSize, span, Origin.OWN, nodes));
        return MemorySegment.ofAddress(address);
    }

    private MemorySegment allocateUpstream(long byteSize, List<Integer> nodes, boolean zero) {
        long span = Checks.alignUp(Math.max(byteSize, 1), pageSize);
        MemorySegment p = zero ? upstream.calloc(span, 1) : upstream.malloc(span);
        if (p.address() == 0) {
            return p;
        }
        boolean ok;
        try {
            ok = binding.bind(p.address(), span, nodes, HwlocBinding.MEMBIND_MIGRATE)
                    && binding.populateAndVerify(p.address(), span, nodes, false);
        } catch (RuntimeException | Error e) {
            try {
                binding.unbind(p.address(), span);
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            upstream.free(p, span);
            throw e;
        }
        if (!ok) {
            binding.unbind(p.address(), span);
            upstream.free(p, span);
            return MemorySegment.NULL;
        }
        blocks.add(p.address(), new Block(p.address(), byteSize, span, Origin.UPSTREAM, nodes));
        return p;
    }

    /** Resizes an own mapping with mremap; returns the (new) address, or 0 to copy instead. */
    private long remapOwn(Block b, long newByteSize) {
        long span = Checks.alignUp(Math.max(newByteSize, 1), pageSize);
        if (span <= b.span()) {
            if (span < b.span()) {
                binding.unmap(b.address() + span, b.span() - span, null);
            }
            blocks.replace(b.address(), b, b.address(),
                    new Block(b.address(), newByteSize, span, Origin.OWN, b.nodes()));
            return b.address();
        }
        long address = LinuxMemory.mremap(b.address(), b.span(), span, 0, 0);
        if (address >= 0) {
            boolean ok;
            try {
                ok = binding.populateAndVerify(address + b.span(), span - b.span(), b.nodes(), false);
            } catch (RuntimeException | Error e) {
                binding.unmap(address + b.span(), span - b.span(), e);
                throw e;
            }
            if (!ok) {
                binding.unmap(address + b.span(), span - b.span(), null);
                return 0;
            }
        } else if (!populate) {
            // the kernel moves the mapping with its policy; nothing to populate
            address = LinuxMemory.mremap(b.address(), b.span(), span, LinuxMemory.MREMAP_MAYMOVE, 0);
            if (address < 0) {
                return 0;
            }
        } else {
            return 0;
        }
        blocks.replace(b.address(), b, address, new Block(address, newByteSize, span, Origin.OWN, b.nodes()));
        return address;
    }

    private void release(Block b, MemorySegment ptr) {
        blocks.remove(b.address(), b, b.byteSize(), "free");
        switch (b.origin()) {
            case OWN -> binding.unmap(b.address(), b.span(), null);
            case HUGE_PAGES -> hugePages.free(ptr, b.byteSize());
            case UPSTREAM -> {
                try {
                    binding.unbind(b.address(), b.span());
                } finally {
                    upstream.free(ptr, b.span());
                }
            }
        }
    }
}
