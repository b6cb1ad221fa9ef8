package io.datamem.impl.internal.placement;

import io.datamem.DataMemAllocator;
import io.datamem.MemoryTraits;
import io.datamem.impl.os.LinuxMemory;
import io.datamem.impl.placement.HugePageAllocator;
import io.datamem.impl.placement.NumaAllocator;
import io.datamem.impl.placement.NumaPolicy;
import io.datamem.impl.placement.NumaTopology;
import io.datamem.internal.Libc;
import io.datamem.spi.ProviderTerm;
import io.datamem.spi.ProviderTerm.Option;

import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * The settings of a {@link NumaAllocatorImpl} (policy, target, strict and populate flags, upstream,
 * name) and their handler-name grammar: {@link #parse} reads a {@code numa:...} term into a builder,
 * {@link #spec()} writes it back, {@link #build()} checks the settings against this machine and
 * builds. Made by {@link NumaAllocatorImpl#builder()}. Not thread-safe.
 */
public final class NumaBuilder {

    private static final String TERM_EXPECTED = "numa:local, numa:POLICY=TARGET[,strict][,populate][(UPSTREAM)] with POLICY "
            + "bind, preferred, interleave, firsttouch (no target) or nexttouch, and TARGET node ids (0,2 or 0-3), "
            + "local, all or pci:DOMAIN:BUS:DEVICE.FUNCTION";

    NumaPolicy policy = NumaPolicy.BIND;
    NumaTarget target = NumaTarget.local();
    boolean targetGiven;
    boolean strict;
    boolean populate;
    DataMemAllocator upstream;
    String name;

    NumaBuilder() {
    }

    /**
     * The policy.
     *
     * @param p the policy
     * @return this builder
     * @throws NullPointerException if {@code p} is null
     */
    public NumaBuilder policy(NumaPolicy p) {
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
    public NumaBuilder target(NumaTarget t) {
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
    public NumaBuilder strict(boolean on) {
        this.strict = on;
        return this;
    }

    /**
     * Whether to fault every page in at allocation and verify its placement.
     *
     * @param on true to populate
     * @return this builder
     */
    public NumaBuilder populate(boolean on) {
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
    public NumaBuilder upstream(DataMemAllocator allocator) {
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
    public NumaBuilder name(String handlerName) {
        this.name = Objects.requireNonNull(handlerName, "handlerName");
        return this;
    }

    NumaTarget effectiveTarget() {
        return policy == NumaPolicy.FIRST_TOUCH && !targetGiven ? NumaTarget.allNodes() : target;
    }

    /**
     * The handler-name term these settings are written as, which {@link #parse}
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

    /**
     * Reads a {@code numa} term of a handler name ({@code numa:bind=0,strict}) into a builder,
     * without building and without touching the machine: the handler-name grammar of NUMA
     * placement, which {@link #spec()} writes back. The nested upstream name, if any, is
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
    public static NumaBuilder parse(ProviderTerm term, String handlerName) {
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
        NumaBuilder b = new NumaBuilder().name(handlerName);
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
}
