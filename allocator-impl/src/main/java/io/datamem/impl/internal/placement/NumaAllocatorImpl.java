package io.datamem.impl.internal.placement;

import io.datamem.BackendException;
import io.datamem.DataMemAllocator;
import io.datamem.MemoryTraits;
import io.datamem.impl.os.HwlocBinding;
import io.datamem.impl.os.LinuxMemory;
import io.datamem.impl.os.LiveBlocks;
import io.datamem.impl.os.NodeMemory;
import io.datamem.impl.os.Spellings;
import io.datamem.impl.placement.HugePageAllocator;
import io.datamem.impl.placement.NumaAllocator;
import io.datamem.impl.placement.NumaPlacement;
import io.datamem.impl.placement.NumaPolicy;
import io.datamem.impl.placement.NumaTopology;
import io.datamem.impl.snapshot.LayerSnapshot;
import io.datamem.internal.Checks;
import io.datamem.internal.Libc;
import io.datamem.spi.ProviderTerm;
import io.datamem.spi.ProviderTerm.Option;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Collectors;

/**
 * The NUMA allocator behind {@code numa:...}: what {@link NumaAllocator} describes, built by
 * {@code io.datamem.impl.provider.NumaProvider} from a handler name ({@link #parse}), or by tests
 * with {@link #builder()}, {@link #bind} and {@link #local()}. The policy, the
 * target, the strict and populate flags and the upstream are the builder's; over a
 * {@link HugePageAllocatorImpl} upstream, a hooked copy of it maps the large blocks.
 *
 * <p>Thread-safe. Linux only.
 */
public final class NumaAllocatorImpl implements NumaAllocator {

    private static final String TERM_EXPECTED = "numa:local, numa:POLICY=TARGET[,strict][,populate][(UPSTREAM)] with POLICY "
            + "bind, preferred, interleave, firsttouch (no target) or nexttouch, and TARGET node ids (0,2 or 0-3), "
            + "local, all or pci:DOMAIN:BUS:DEVICE.FUNCTION";


    private static final ThreadLocal<List<Integer>> PENDING_NODES = new ThreadLocal<>();

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
    private final int hwlocPolicy;
    private final int hwlocFlags;
    private final long pageSize = Libc.pageSize();
    private final MemoryTraits traits;
    private final LiveBlocks<Block> blocks = LiveBlocks.of(Block::byteSize, new Refusals());
    private final LongAdder mismatches = new LongAdder();
    private final LongAdder verified = new LongAdder();

    private NumaAllocatorImpl(Builder b, NumaTopology topology, List<Integer> staticNodes) {
        this.policy = b.policy;
        this.target = b.effectiveTarget();
        this.strict = b.strict;
        this.populate = b.populate;
        this.topology = topology;
        this.staticNodes = staticNodes;
        this.name = b.name != null ? b.name : b.spec();
        this.givenUpstream = b.upstream;
        if (b.upstream instanceof HugePageAllocatorImpl hp) {
            this.hugePages = hp.withHook(new Placement(), name);
            this.upstream = null;
        } else {
            this.hugePages = null;
            this.upstream = b.upstream;
        }
        int maxCpu = topology.nodes().stream().flatMap(n -> n.cpus().stream()).mapToInt(Integer::intValue).max()
                .orElse(0);
        this.localNodesByCpu = new AtomicReferenceArray<>(maxCpu + 1);
        this.hwlocPolicy = switch (policy) {
            case BIND, PREFERRED -> HwlocBinding.MEMBIND_BIND;
            case INTERLEAVE -> HwlocBinding.MEMBIND_INTERLEAVE;
            case FIRST_TOUCH -> HwlocBinding.MEMBIND_FIRSTTOUCH;
            case NEXT_TOUCH -> HwlocBinding.MEMBIND_NEXTTOUCH;
        };
        this.hwlocFlags = policy == NumaPolicy.BIND || strict ? HwlocBinding.MEMBIND_STRICT : 0;
        if (upstream != null) {
            this.traits = upstream.traits();
        } else {
            this.traits = MemoryTraits.host(pageSize).withPageSize(pageSize);
        }
    }

    /**
     * Reads a {@code numa} term of a handler name ({@code numa:bind=0,strict}) into a builder,
     * without building and without touching the machine: the handler-name grammar of NUMA
     * placement, which {@link Builder#spec()} writes back. The nested upstream name, if any, is
     * not read: the caller resolves it.
     *
     * @param term        the term, family {@code numa}
     * @param handlerName the handler's name: the builder's name, and for messages
     * @return a builder set as the term says
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if the term is malformed: no policy, an unknown policy or
     *                                  flag, a policy without the target it needs, empty
     *                                  parentheses; the message quotes the handler name and the
     *                                  term and says what is expected
     */
    public static Builder parse(ProviderTerm term, String handlerName) {
        Objects.requireNonNull(term, "term");
        Objects.requireNonNull(handlerName, "handlerName");
        List<Option> items;
        try {
            items = term.options("numa");
        } catch (IllegalArgumentException e) {
            throw bad(handlerName, term, e.getMessage());
        }
        if (items.isEmpty()) {
            throw bad(handlerName, term, "no policy");
        }
        Builder b = builder().name(handlerName);
        Option first = items.getFirst();
        String policyName = first.key().toLowerCase(Locale.ROOT);
        StringBuilder target = new StringBuilder(first.value());
        if (policyName.equals("local")) {
            if (first.hasValue()) {
                throw bad(handlerName, term, "'local' takes no value");
            }
            b.policy(NumaPolicy.BIND).target(NumaTarget.local());
        } else {
            try {
                b.policy(policyOfSpec(policyName));
            } catch (IllegalArgumentException e) {
                throw bad(handlerName, term, e.getMessage());
            }
        }
        for (Option option : items.subList(1, items.size())) {
            String item = option.toString();
            String flag = item.toLowerCase(Locale.ROOT);
            switch (flag) {
                case "strict" -> b.strict(true);
                case "populate" -> b.populate(true);
                default -> {
                    if (!target.isEmpty() && !target.toString().startsWith("pci:") && flag.matches("\\d+(-\\d+)?")) {
                        target.append(',').append(flag); // more node ids: interleave=0,1
                    } else {
                        throw bad(handlerName, term, "unknown flag '" + item + "' (expected: strict or populate)");
                    }
                }
            }
        }
        if (!target.isEmpty()) {
            try {
                b.target(NumaTarget.parse(target.toString()));
            } catch (IllegalArgumentException e) {
                throw bad(handlerName, term, e.getMessage());
            }
        } else if (!policyName.equals("local") && !policyName.equals("firsttouch")
                && !policyName.equals("first-touch")) {
            throw bad(handlerName, term, "policy " + policyName + " needs a target, as in numa:" + policyName + "=0");
        }
        String nested = term.nested();
        if (nested != null && nested.isEmpty()) {
            throw bad(handlerName, term, "empty parentheses (expected: an upstream handler name inside)");
        }
        return b;
    }

    /**
     * The policy with a handler-name spelling.
     *
     * @param spec for example {@code interleave}, {@code first-touch}, {@code firsttouch}
     * @return the policy
     * @throws IllegalArgumentException if no policy has that name; the message lists them
     */
    public static NumaPolicy policyOfSpec(String spec) {
        String s = spec.strip().toLowerCase(Locale.ROOT).replace("-", "").replace("_", "");
        for (NumaPolicy p : NumaPolicy.values()) {
            if (p.spec().equals(s)) {
                return p;
            }
        }
        throw new IllegalArgumentException("NUMA policy: '" + spec
                + "' (expected: bind, preferred, interleave, firsttouch or nexttouch)");
    }

    private static IllegalArgumentException bad(String handlerName, ProviderTerm term, String what) {
        return term.refused(handlerName, what, TERM_EXPECTED);
    }

    /**
     * A builder, set to {@link NumaPolicy#BIND bind} to the {@linkplain NumaTarget#local() local
     * node}, not strict, not populated, every block on normal pages.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
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
    public Builder toBuilder() {
        Builder b = new Builder();
        b.policy = policy;
        b.target = target;
        b.targetGiven = true;
        b.strict = strict;
        b.populate = populate;
        b.upstream = givenUpstream;
        b.name = name;
        return b;
    }

    /** Builds {@link NumaAllocatorImpl}s. Not thread-safe. */
    public static final class Builder {

        private NumaPolicy policy = NumaPolicy.BIND;
        private NumaTarget target = NumaTarget.local();
        private boolean targetGiven;
        private boolean strict;
        private boolean populate;
        private DataMemAllocator upstream;
        private String name;

        private Builder() {
        }

        /**
         * The policy.
         *
         * @param p the policy
         * @return this builder
         * @throws NullPointerException if {@code p} is null
         */
        public Builder policy(NumaPolicy p) {
            this.policy = Objects.requireNonNull(p, "policy");
            return this;
        }

        /**
         * The nodes to place on.
         *
         * @param t the target
         * @return this builder
         * @throws NullPointerException if {@code t} is null
         */
        public Builder target(NumaTarget t) {
            this.target = Objects.requireNonNull(t, "target");
            this.targetGiven = true;
            return this;
        }

        /**
         * Whether to fail rather than accept another placement.
         *
         * @param on true for strict
         * @return this builder
         */
        public Builder strict(boolean on) {
            this.strict = on;
            return this;
        }

        /**
         * Whether to fault every page in at allocation and verify its placement.
         *
         * @param on true to populate
         * @return this builder
         */
        public Builder populate(boolean on) {
            this.populate = on;
            return this;
        }

        /**
         * Where the memory comes from: a {@link HugePageAllocator} (its blocks of at least its
         * threshold become bound huge-page mappings; smaller blocks are normal-page mappings of this
         * allocator), or an allocator guaranteeing page-aligned host blocks. Without one, every
         * block is a normal-page mapping of this allocator.
         *
         * @param allocator the upstream, or null for none
         * @return this builder
         * @throws IllegalArgumentException if {@code allocator} is a {@link NumaAllocator}, not
         *                                  host-accessible, or not a huge-page allocator and
         *                                  aligned to less than the page size
         */
        public Builder upstream(DataMemAllocator allocator) {
            if (allocator instanceof NumaAllocator) {
                throw new IllegalArgumentException("upstream: a NumaAllocator (expected: a huge-page allocator or a "
                        + "page-aligned allocator; one NUMA policy per block)");
            }
            if (allocator != null && !(allocator instanceof HugePageAllocatorImpl)) {
                MemoryTraits t = allocator.traits();
                if (!t.hostAccessible()) {
                    throw new IllegalArgumentException("upstream: " + allocator + " allocates " + t.kind()
                            + " memory (expected: host memory)");
                }
                if (t.byteAlignment() < Libc.pageSize()) {
                    throw new IllegalArgumentException("upstream: " + allocator + " guarantees " + t.byteAlignment()
                            + "-byte alignment (expected: page-aligned blocks, at least " + Libc.pageSize()
                            + " bytes, since binding applies to whole pages; nest hugepages directly, or use a "
                            + "page-aligned allocator such as aligned:" + Libc.pageSize() + ")");
                }
            }
            this.upstream = allocator;
            return this;
        }

        /**
         * The name used in messages (the handler name, when a provider builds it).
         *
         * @param handlerName a name
         * @return this builder
         * @throws NullPointerException if {@code handlerName} is null
         */
        public Builder name(String handlerName) {
            this.name = Objects.requireNonNull(handlerName, "handlerName");
            return this;
        }

        private NumaTarget effectiveTarget() {
            return policy == NumaPolicy.FIRST_TOUCH && !targetGiven ? NumaTarget.allNodes() : target;
        }

        /**
         * The handler-name term these settings are written as, which {@link NumaAllocatorImpl#parse}
         * reads back to the same settings: {@code numa:bind=0,strict}, {@code numa:local}. The
         * builder's name and upstream are not part of it.
         *
         * @return the term
         */
        public String spec() {
            NumaTarget t = effectiveTarget();
            StringBuilder b = new StringBuilder("numa:");
            if (policy == NumaPolicy.BIND && t instanceof NumaTarget.Local) {
                b.append("local");
            } else {
                b.append(policy.spec());
                if (!(policy == NumaPolicy.FIRST_TOUCH && t instanceof NumaTarget.AllNodes)) {
                    b.append('=').append(t.spec());
                }
            }
            if (strict) {
                b.append(",strict");
            }
            if (populate) {
                b.append(",populate");
            }
            return b.toString();
        }

        /**
         * Builds the allocator on this machine's topology (loading hwloc).
         *
         * @return a new allocator
         * @throws IllegalArgumentException      if a target node or PCI device does not exist (the
         *                                       message lists those that do), first-touch is given
         *                                       a target other than all nodes, or preferred is made
         *                                       strict
         * @throws UnsupportedOperationException if this platform cannot bind memory, or does not
         *                                       support the policy (the message lists those it
         *                                       does)
         * @throws IllegalStateException         if hwloc cannot be loaded here
         */
        public NumaAllocatorImpl build() {
            NumaTarget t = effectiveTarget();
            if (policy == NumaPolicy.FIRST_TOUCH && !(t instanceof NumaTarget.AllNodes)) {
                throw new IllegalArgumentException("target: " + t.spec() + " for firsttouch (expected: none or all; "
                        + "first-touch puts each page on the node of the CPU that touches it first)");
            }
            if (policy == NumaPolicy.PREFERRED && strict) {
                throw new IllegalArgumentException("strict: true for preferred (expected: false; a strict preference "
                        + "is bind)");
            }
            if (!LinuxMemory.supported()) {
                throw new UnsupportedOperationException("NUMA binding needs Linux; this is "
                        + System.getProperty("os.name"));
            }
            NumaTopology topology = NumaTopology.current();
            String machine = "; this machine: " + topology.nodes().stream().map(NumaTopology.Node::toString)
                    .collect(Collectors.joining(", "));
            if (!topology.areaBindingSupported()) {
                throw new UnsupportedOperationException("memory binding is not supported on this platform (hwloc "
                        + topology.hwlocVersion() + " reports no area binding); nothing would be placed" + machine);
            }
            if (!topology.supportedPolicies().contains(policy)) {
                throw new UnsupportedOperationException("NUMA policy " + policy.spec() + " is not supported here"
                        + (policy == NumaPolicy.NEXT_TOUCH ? " (hwloc has no next-touch binding on Linux, whose kernel "
                        + "has no such policy)" : "") + "; supported: " + topology.supportedPolicies().stream()
                        .sorted().map(NumaPolicy::spec).collect(Collectors.joining(", ")) + machine);
            }
            List<Integer> nodes = t instanceof NumaTarget.Local ? null : NumaTarget.resolve(topology, t, -1);
            if (nodes != null) {
                for (int id : nodes) {
                    if (topology.node(id).memoryByteSize() == 0 && policy == NumaPolicy.BIND) {
                        throw new IllegalArgumentException("NUMA node " + id + " has no memory to bind to" + machine);
                    }
                }
            }
            return new NumaAllocatorImpl(this, topology, nodes);
        }
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
     * @return the allocator given to {@link Builder#upstream}, or empty for normal-page mappings of
     *         this allocator
     */
    public Optional<DataMemAllocator> upstream() {
        return Optional.ofNullable(givenUpstream);
    }

    /**
     * The huge-page allocator whose mappings this allocator binds, if the upstream is one.
     *
     * @return the bound huge-page allocator (its {@link HugePageAllocator#mapping mappings} and
     *         {@link HugePageAllocator#fallbacks fallbacks} describe this allocator's large blocks),
     *         or empty
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
        return mismatches.sum();
    }

    @Override
    public long verifiedBlocks() {
        return verified.sum();
    }

    @Override
    public NumaPlacement placement(MemorySegment ptr) {
        Objects.requireNonNull(ptr, "ptr");
        Block b = blocks.get(ptr.address());
        if (b == null) {
            throw new IllegalArgumentException("ptr: 0x" + Long.toHexString(ptr.address())
                    + " is not a live block of '" + name + "'");
        }
        if (!topology.locationQuerySupported()) {
            throw new UnsupportedOperationException("this platform cannot tell where pages are (hwloc reports no "
                    + "get_area_memlocation support)");
        }
        long stride = b.origin() == Origin.HUGE_PAGES
                ? Optional.ofNullable(hugePages.mapped(ptr.address())).map(HugePageAllocatorImpl.Mapping::pageSize)
                        .orElse(pageSize) : pageSize;
        List<Integer> where = new ArrayList<>();
        int r = HwlocBinding.areaMemlocation(b.address(), b.span(), where);
        if (r < 0) {
            throw backend("hwloc_get_area_memlocation", -r, b.span(), "hwloc", null);
        }
        long total = b.span() / stride;
        Map<Integer, Long> perNode = new TreeMap<>();
        final int chunk = 1 << 16;
        for (long first = 0; first < total; first += chunk) {
            int[] status = new int[(int) Math.min(chunk, total - first)];
            int q = LinuxMemory.pageNodes(b.address() + first * stride, status.length * stride, stride, status);
            if (q < 0) {
                throw backend("move_pages", -q, b.span(), "Linux", null);
            }
            for (int s : status) {
                if (s >= 0) {
                    perNode.merge(s, 1L, Long::sum);
                }
            }
        }
        List<Integer> targets = policy == NumaPolicy.FIRST_TOUCH
                ? topology.nodes().stream().map(NumaTopology.Node::id).toList() : b.nodes();
        return new NumaPlacement(b.address(), b.byteSize(), policy, targets, where, perNode, stride, total);
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
            MemorySegment q;
            PENDING_NODES.set(b.nodes());
            try {
                q = hugePages.realloc(ptr, oldByteSize, newByteSize);
            } finally {
                PENDING_NODES.remove();
            }
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
                MemorySegment p;
                PENDING_NODES.set(nodes);
                try {
                    p = zero ? hugePages.calloc(byteSize, 1) : hugePages.malloc(byteSize);
                } finally {
                    PENDING_NODES.remove();
                }
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
            throw backend("mmap", errno, span, "Linux", null);
        }
        boolean ok;
        try {
            ok = bind(address, span, nodes, 0) && populateAndVerify(address, span, nodes, false);
        } catch (RuntimeException | Error e) {
            unmap(address, span, e);
            throw e;
        }
        if (!ok) {
            unmap(address, span, null);
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
            ok = bind(p.address(), span, nodes, HwlocBinding.MEMBIND_MIGRATE)
                    && populateAndVerify(p.address(), span, nodes, false);
        } catch (RuntimeException | Error e) {
            try {
                unbind(p.address(), span);
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            upstream.free(p, span);
            throw e;
        }
        if (!ok) {
            unbind(p.address(), span);
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
                unmap(b.address() + span, b.span() - span, null);
            }
            blocks.replace(b.address(), b, b.address(),
                    new Block(b.address(), newByteSize, span, Origin.OWN, b.nodes()));
            return b.address();
        }
        long address = LinuxMemory.mremap(b.address(), b.span(), span, 0, 0);
        if (address >= 0) {
            boolean ok;
            try {
                ok = populateAndVerify(address + b.span(), span - b.span(), b.nodes(), false);
            } catch (RuntimeException | Error e) {
                unmap(address + b.span(), span - b.span(), e);
                throw e;
            }
            if (!ok) {
                unmap(address + b.span(), span - b.span(), null);
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
            case OWN -> unmap(b.address(), b.span(), null);
            case HUGE_PAGES -> hugePages.free(ptr, b.byteSize());
            case UPSTREAM -> {
                try {
                    unbind(b.address(), b.span());
                } finally {
                    upstream.free(ptr, b.span());
                }
            }
        }
    }

    /** Binds a range; false when the kernel is out of memory for it. */
    private boolean bind(long address, long byteSize, List<Integer> nodes, int extraFlags) {
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
    private void unbind(long address, long byteSize) {
        int r = HwlocBinding.setAreaMembind(address, byteSize, HwlocBinding.completeNodeset(), HwlocBinding.MEMBIND_DEFAULT, 0);
        if (r < 0) {
            throw backend("hwloc_set_area_membind", -r, byteSize, "hwloc", "resetting the policy to default");
        }
    }

    /**
     * Faults a bound range in when asked to (or when it is on explicit huge pages), and verifies
     * where it went. False when the memory cannot be had there (or, strict, lies elsewhere).
     */
    private boolean populateAndVerify(long address, long byteSize, List<Integer> nodes, boolean explicitHugePages) {
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
                s.set(java.lang.foreign.ValueLayout.JAVA_BYTE, off, (byte) 0); // kernels before 5.14
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

    private void unmap(long address, long byteSize, Throwable pending) {
        int r = LinuxMemory.munmap(address, byteSize);
        if (r < 0) {
            BackendException e = backend("munmap", -r, byteSize, "Linux", null);
            if (pending == null) {
                throw e;
            }
            pending.addSuppressed(e);
        }
    }

    private BackendException backend(String operation, int errno, long byteSize, String backend, String detail) {
        return new BackendException(name, byteSize, backend, operation, errno, LinuxMemory.errnoName(errno),
                LinuxMemory.errnoDescription(errno) + (detail == null ? "" : ", " + detail));
    }

    /** Binds the fresh mappings of the huge-page allocator this allocator composes with. */
    private final class Placement implements MappingHook {

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
            return nodes != null ? nodes : nodesForThisThread();
        }
    }
}
