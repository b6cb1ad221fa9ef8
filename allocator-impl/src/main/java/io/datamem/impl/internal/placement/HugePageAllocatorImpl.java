package io.datamem.impl.internal.placement;

import io.datamem.BackendException;
import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.MemoryTraits;
import io.datamem.impl.os.LinuxMemory;
import io.datamem.impl.os.LiveBlocks;
import io.datamem.impl.os.Spellings;
import io.datamem.impl.placement.HugePageAllocator;
import io.datamem.impl.placement.HugePages;
import io.datamem.impl.placement.NumaAllocator;
import io.datamem.impl.snapshot.LayerSnapshot;
import io.datamem.internal.Checks;
import io.datamem.internal.Messages;
import io.datamem.spi.ProviderTerm;
import io.datamem.spi.ProviderTerm.Option;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;

/**
 * The huge-page allocator behind {@code hugepages...}: what {@link HugePageAllocator} describes,
 * built by {@link HugePagesProvider} from a handler name ({@link #parse}),
 * by the NUMA allocator with a placement hook ({@link #withHook}), or by tests with
 * {@link #builder()}.
 *
 * <p>Thread-safe. Linux only.
 */
public final class HugePageAllocatorImpl implements HugePageAllocator {

    private static final String TERM_EXPECTED = "hugepages[:thp|2m|1g][,fallback=fail|thp|normal][,threshold=BYTES][(UPSTREAM)]";


    /** The default threshold: 4 MiB, below which requests go upstream. */
    public static final long DEFAULT_THRESHOLD = 4L << 20;

    /** What to do when the pages asked for cannot be had. */
    public enum Fallback {
        /** Return {@code NULL}. */
        FAIL,
        /** Try transparent huge pages next (for explicit page requests), else return {@code NULL}. */
        TRANSPARENT,
        /** Use normal pages next. */
        NORMAL
    }

    private final PageKind pages;
    private final Fallback fallback;
    private final long threshold;
    private final DataMemAllocator upstream;
    private final String name;
    private final List<PageKind> chain;
    private final MappingHook hook;
    private final MemoryTraits traits;
    private final Map<PageKind, MemoryTraits> mappedTraits = new EnumMap<>(PageKind.class);
    private final LiveBlocks<Mapping> mappings = LiveBlocks.of(Mapping::byteSize, new Refusals());
    private final LongAdder fallbacks = new LongAdder();
    private final LongAdder[] mappingCounts = new LongAdder[PageKind.values().length];

    private HugePageAllocatorImpl(Builder b, MappingHook hook) {
        this.pages = b.pages;
        this.fallback = b.fallback;
        this.threshold = b.threshold;
        this.upstream = b.upstream;
        this.hook = hook;
        List<PageKind> wanted = new ArrayList<>();
        wanted.add(pages);
        if (fallback == Fallback.TRANSPARENT) {
            wanted.add(PageKind.TRANSPARENT);
        } else if (fallback == Fallback.NORMAL) {
            wanted.add(PageKind.NORMAL);
        }
        List<PageKind> usable = new ArrayList<>();
        StringBuilder why = new StringBuilder();
        for (PageKind k : wanted) {
            String reason = unusableReason(k);
            if (reason == null) {
                usable.add(k);
            } else {
                why.append(why.isEmpty() ? "" : "; ").append(reason);
            }
        }
        this.name = b.name != null ? b.name : spec(pages, fallback, threshold);
        if (usable.isEmpty()) {
            throw new IllegalStateException("handler '" + name + "': no page kind it may use works on this machine: "
                    + why + (fallback == Fallback.NORMAL ? "" : "; fallback=normal would use normal pages instead"));
        }
        this.chain = List.copyOf(usable);
        long alignment = Long.MAX_VALUE;
        long pageSize = Long.MAX_VALUE;
        if (threshold > 0) {
            alignment = upstream.traits().byteAlignment();
            pageSize = upstream.traits().pageSize();
        }
        for (PageKind k : chain) {
            alignment = Math.min(alignment, k.pageSize());
            pageSize = Math.min(pageSize, k.pageSize());
            mappedTraits.put(k, MemoryTraits.host(k.pageSize()).withPageSize(k.pageSize()));
        }
        this.traits = MemoryTraits.host(alignment).withPageSize(pageSize);
        for (int i = 0; i < mappingCounts.length; i++) {
            mappingCounts[i] = new LongAdder();
        }
    }

    /** Why a kind of page cannot be used here, or null if it can. */
    private static String unusableReason(PageKind k) {
        if (!LinuxMemory.supported()) {
            return "huge pages need Linux; this is " + System.getProperty("os.name");
        }
        return switch (k) {
            case HUGETLB_1G, HUGETLB_2M -> HugePages.pool(k.pageSize()).isPresent() ? null
                    : Spellings.sizeName(k.pageSize()) + " explicit huge pages are not offered by this kernel (no "
                    + "/sys/kernel/mm/hugepages/hugepages-" + (k.pageSize() >> 10) + "kB)";
            case TRANSPARENT -> {
                HugePages.TransparentMode mode = HugePages.transparentMode();
                yield mode.usable() ? null : mode == HugePages.TransparentMode.NEVER
                        ? "transparent huge pages are switched off (/sys/kernel/mm/transparent_hugepage/enabled is "
                        + "never; enable them with: echo madvise > /sys/kernel/mm/transparent_hugepage/enabled)"
                        : "this kernel has no transparent huge pages";
            }
            case NORMAL -> null;
        };
    }

    /**
     * A builder, set to transparent huge pages, no fallback, the 4 MiB threshold and the built-in
     * libc allocator ({@code DataMem.builtinDefault().allocator()}) upstream.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Reads a {@code hugepages} term of a handler name ({@code hugepages:2m,fallback=thp}) into a
     * builder, without building and without touching the machine: the handler-name grammar of
     * huge pages, which {@link Builder#spec()} writes back. The nested upstream name, if any, is
     * not read: the caller resolves it.
     *
     * @param term        the term, family {@code hugepages}
     * @param handlerName the handler's name: the builder's name, and for messages
     * @return a builder set as the term says
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if the term is malformed: an unknown option, a page size
     *                                  after other options, a bad fallback or threshold,
     *                                  transparent pages falling back to transparent pages, empty
     *                                  parentheses; the message quotes the handler name and the
     *                                  term and says what is expected
     */
    public static Builder parse(ProviderTerm term, String handlerName) {
        Objects.requireNonNull(term, "term");
        Objects.requireNonNull(handlerName, "handlerName");
        Builder b = builder().name(handlerName);
        List<Option> items;
        try {
            items = term.options("hugepages");
        } catch (IllegalArgumentException e) {
            throw bad(handlerName, term, e.getMessage());
        }
        PageKind pages = PageKind.TRANSPARENT;
        Fallback fallback = Fallback.FAIL;
        for (int i = 0; i < items.size(); i++) {
            Option item = items.get(i);
            String value = item.value();
            switch (item.key()) {
                case "thp", "transparent" -> pages = PageKind.TRANSPARENT;
                case "2m", "2M" -> pages = PageKind.HUGETLB_2M;
                case "1g", "1G" -> pages = PageKind.HUGETLB_1G;
                case "fallback" -> fallback = switch (value) {
                    case "fail", "none" -> Fallback.FAIL;
                    case "thp", "transparent" -> Fallback.TRANSPARENT;
                    case "normal" -> Fallback.NORMAL;
                    default -> throw bad(handlerName, term, "fallback=" + value + " (expected: fail, thp or normal)");
                };
                case "threshold" -> {
                    try {
                        b.thresholdByteSize(ProviderTerm.byteSize("threshold", value, DataMemAllocator.MAX_BYTE_SIZE));
                    } catch (IllegalArgumentException e) {
                        throw bad(handlerName, term, e.getMessage());
                    }
                }
                default -> throw bad(handlerName, term, "unknown option " + Messages.quote(item.toString()));
            }
            if (!item.hasValue() && i > 0) {
                throw bad(handlerName, term, "the page size " + Messages.quote(item.toString()) + " must come first");
            }
        }
        if (pages == PageKind.TRANSPARENT && fallback == Fallback.TRANSPARENT) {
            throw bad(handlerName, term, "fallback: TRANSPARENT for transparent pages (expected: fail or normal)");
        }
        String nested = term.nested();
        if (nested != null && nested.isEmpty()) {
            throw bad(handlerName, term, "empty parentheses (expected: an upstream handler name inside)");
        }
        return b.pages(pages).fallback(fallback);
    }

    private static IllegalArgumentException bad(String handlerName, ProviderTerm term, String what) {
        return term.refused(handlerName, what, TERM_EXPECTED);
    }

    /**
     * Transparent huge pages with the defaults: no fallback, 4 MiB threshold, the built-in libc
     * allocator upstream.
     *
     * @return a new allocator
     * @throws IllegalStateException if transparent huge pages are switched off or unsupported here
     */
    public static HugePageAllocatorImpl transparent() {
        return builder().build();
    }

    /** Builds {@link HugePageAllocatorImpl}s. Not thread-safe. */
    public static final class Builder {

        private PageKind pages = PageKind.TRANSPARENT;
        private Fallback fallback = Fallback.FAIL;
        private long threshold = DEFAULT_THRESHOLD;
        private DataMemAllocator upstream = DataMem.builtinDefault().allocator();
        private String name;

        private Builder() {
        }

        /**
         * The pages to ask for.
         *
         * @param kind {@link PageKind#TRANSPARENT}, {@link PageKind#HUGETLB_2M} or
         *             {@link PageKind#HUGETLB_1G}
         * @return this builder
         * @throws NullPointerException     if {@code kind} is null
         * @throws IllegalArgumentException if {@code kind} is {@link PageKind#NORMAL}
         */
        public Builder pages(PageKind kind) {
            Objects.requireNonNull(kind, "kind");
            if (kind == PageKind.NORMAL) {
                throw new IllegalArgumentException("pages: NORMAL (expected: TRANSPARENT, HUGETLB_2M or HUGETLB_1G; "
                        + "normal pages are a fallback, Fallback.NORMAL)");
            }
            this.pages = kind;
            return this;
        }

        /**
         * What to do when those pages cannot be had.
         *
         * @param policy the fallback policy
         * @return this builder
         * @throws NullPointerException if {@code policy} is null
         */
        public Builder fallback(Fallback policy) {
            this.fallback = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /**
         * The size from which requests get a mapping of their own; smaller ones go upstream.
         *
         * @param byteSize bytes; 0 maps every request
         * @return this builder
         * @throws IllegalArgumentException if negative or above {@link DataMemAllocator#MAX_BYTE_SIZE}
         */
        public Builder thresholdByteSize(long byteSize) {
            this.threshold = Checks.byteSize("thresholdByteSize", byteSize);
            return this;
        }

        /**
         * The allocator for requests below the threshold.
         *
         * @param allocator a host-memory allocator
         * @return this builder
         * @throws NullPointerException     if {@code allocator} is null
         * @throws IllegalArgumentException if its memory is not host-accessible, or it is a
         *                                  {@link NumaAllocator} (NUMA-bound huge pages are made by
         *                                  {@link NumaBuilder#upstream} instead)
         */
        public Builder upstream(DataMemAllocator allocator) {
            Objects.requireNonNull(allocator, "allocator");
            if (allocator instanceof NumaAllocator) {
                throw new IllegalArgumentException("upstream: a NumaAllocator would bind only the blocks below the "
                        + "threshold; for NUMA-bound huge pages put the huge pages under the NUMA layer "
                        + "(handler names numa:...(hugepages...))");
            }
            if (!allocator.traits().hostAccessible()) {
                throw new IllegalArgumentException("upstream: " + allocator + " allocates " + allocator.traits().kind()
                        + " memory (expected: host-accessible memory)");
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

        /**
         * The handler-name term these settings are written as, which {@link HugePageAllocatorImpl#parse}
         * reads back to the same settings: {@code hugepages}, {@code hugepages:2m,fallback=thp}. The
         * builder's name and upstream are not part of it.
         *
         * @return the term
         */
        public String spec() {
            return HugePageAllocatorImpl.spec(pages, fallback, threshold);
        }

        /**
         * Builds the allocator.
         *
         * @return a new allocator
         * @throws IllegalArgumentException if the fallback is {@link Fallback#TRANSPARENT} for
         *                                  transparent pages (nothing to fall back to)
         * @throws IllegalStateException    if none of the page kinds the pages and fallback allow
         *                                  is offered here, or explicit pages without a fallback are
         *                                  asked for and none of that size is reserved (the pool is
         *                                  empty and may not overcommit), so that every mapping would
         *                                  fail; the message says how many pages there are and how
         *                                  to reserve them
         */
        public HugePageAllocatorImpl build() {
            if (pages == PageKind.TRANSPARENT && fallback == Fallback.TRANSPARENT) {
                throw new IllegalArgumentException("fallback: TRANSPARENT for transparent pages (expected: FAIL or "
                        + "NORMAL)");
            }
            if (pages.explicit() && fallback == Fallback.FAIL && LinuxMemory.supported()) {
                HugePages.Pool pool = HugePages.pool(pages.pageSize()).orElse(null);
                if (pool != null && pool.total() == 0 && pool.available() == 0) {
                    String size = Spellings.sizeName(pages.pageSize());
                    String handler = name != null ? name : spec();
                    throw new IllegalStateException("handler " + Messages.quote(handler) + ": no " + size
                            + " huge pages are reserved on this machine (" + pool + "), so every mapping would fail; "
                            + "reserve N pages as root: " + Spellings.howToReserve(pages.pageSize(), pages.pageSize() == HugePages.defaultPageSize())
                            + "; or allow a fallback: " + HugePageAllocatorImpl.spec(pages, Fallback.TRANSPARENT, threshold) + " or "
                            + HugePageAllocatorImpl.spec(pages, Fallback.NORMAL, threshold) + " (docs/placement.md)");
                }
            }
            return new HugePageAllocatorImpl(this, null);
        }
    }

    /** The same configuration with a placement hook (and fresh records and counters). */
    HugePageAllocatorImpl withHook(MappingHook placement, String handlerName) {
        Builder b = new Builder();
        b.pages = pages;
        b.fallback = fallback;
        b.threshold = threshold;
        b.upstream = upstream;
        b.name = handlerName;
        return new HugePageAllocatorImpl(b, placement);
    }

    static String spec(PageKind pages, Fallback fallback, long threshold) {
        StringBuilder b = new StringBuilder("hugepages");
        List<String> options = new ArrayList<>();
        switch (pages) {
            case HUGETLB_2M -> options.add("2m");
            case HUGETLB_1G -> options.add("1g");
            default -> {
            }
        }
        if (fallback != Fallback.FAIL) {
            options.add("fallback=" + (fallback == Fallback.TRANSPARENT ? "thp" : "normal"));
        }
        if (threshold != DEFAULT_THRESHOLD) {
            options.add("threshold=" + threshold);
        }
        if (!options.isEmpty()) {
            b.append(':').append(String.join(",", options));
        }
        return b.toString();
    }

    /**
     * The pages asked for.
     *
     * @return the page kind
     */
    public PageKind pages() {
        return pages;
    }

    /**
     * The fallback policy.
     *
     * @return the policy
     */
    public Fallback fallback() {
        return fallback;
    }

    @Override
    public List<PageKind> pageKinds() {
        return chain;
    }

    /**
     * The size from which requests get a mapping of their own.
     *
     * @return bytes
     */
    public long thresholdByteSize() {
        return threshold;
    }

    /**
     * The allocator of requests below the threshold.
     *
     * @return the upstream
     */
    public DataMemAllocator upstream() {
        return upstream;
    }

    @Override
    public Optional<LayerSnapshot.Mapping> mapping(MemorySegment ptr) {
        Objects.requireNonNull(ptr, "ptr");
        return Optional.ofNullable(mappings.get(ptr.address())).map(Mapping::describe);
    }

    /**
     * The live mapping at an address, as this allocator records it (for the NUMA allocator).
     *
     * @param address a block's address
     * @return its mapping, or null if none is live there
     */
    Mapping mapped(long address) {
        return mappings.get(address);
    }

    @Override
    public long fallbacks() {
        return fallbacks.sum();
    }

    @Override
    public long mappingCount(PageKind kind) {
        return mappingCounts[Objects.requireNonNull(kind, "kind").ordinal()].sum();
    }

    /**
     * The blocks this allocator mapped, with their pages, for a memory snapshot (blocks below the
     * threshold, which the upstream allocated, are not listed).
     *
     * @return a {@link LayerSnapshot.Placement}, its mappings by address
     */
    @Override
    public LayerSnapshot.Placement snapshot() {
        List<LayerSnapshot.Mapping> all = new ArrayList<>();
        for (Mapping m : mappings.records()) {
            all.add(m.describe());
        }
        all.sort(java.util.Comparator.comparingLong(LayerSnapshot.Mapping::address));
        return new LayerSnapshot.Placement("HugePageAllocator", all);
    }

    @Override
    public MemorySegment malloc(long byteSize) {
        Checks.byteSize("byteSize", byteSize);
        if (byteSize < threshold) {
            return upstream.malloc(byteSize);
        }
        Mapping m = map(byteSize);
        return m == null ? MemorySegment.NULL : MemorySegment.ofAddress(m.address());
    }

    @Override
    public MemorySegment calloc(long count, long elementByteSize) {
        long size = Checks.callocByteSize(count, elementByteSize);
        if (size < 0) {
            return MemorySegment.NULL;
        }
        if (size < threshold) {
            return upstream.calloc(count, elementByteSize);
        }
        Mapping m = map(size); // fresh anonymous mappings are zero
        return m == null ? MemorySegment.NULL : MemorySegment.ofAddress(m.address());
    }

    @Override
    public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        Checks.byteSize("oldByteSize", oldByteSize);
        Checks.byteSize("newByteSize", newByteSize);
        if (ptr.address() == 0) {
            return malloc(newByteSize);
        }
        boolean oldMapped = oldByteSize >= threshold;
        boolean newMapped = newByteSize >= threshold;
        if (!oldMapped) {
            checkNotMapped(ptr, oldByteSize);
            if (!newMapped) {
                return upstream.realloc(ptr, oldByteSize, newByteSize);
            }
            Mapping n = map(newByteSize);
            if (n == null) {
                return MemorySegment.NULL;
            }
            copy(ptr.address(), n.address(), oldByteSize);
            upstream.free(ptr, oldByteSize);
            return MemorySegment.ofAddress(n.address());
        }
        Mapping m = live(ptr, oldByteSize);
        if (!newMapped) {
            MemorySegment q = upstream.malloc(newByteSize);
            if (q.address() == 0) {
                return q;
            }
            copy(m.address(), q.address(), newByteSize);
            release(m);
            return q;
        }
        return MemorySegment.ofAddress(remap(m, newByteSize));
    }

    @Override
    public void free(MemorySegment ptr, long byteSize) {
        Checks.notNegative("byteSize", byteSize);
        if (ptr.address() == 0) {
            return;
        }
        if (byteSize < threshold) {
            checkNotMapped(ptr, byteSize);
            upstream.free(ptr, byteSize);
            return;
        }
        release(live(ptr, byteSize));
    }

    @Override
    public MemoryTraits traits() {
        return traits;
    }

    @Override
    public MemoryTraits traitsOf(MemorySegment ptr) {
        Mapping m = mappings.get(ptr.address());
        return m == null ? upstream.traitsOf(ptr) : mappedTraits.get(m.kind());
    }

    // ------------------------------------------------------------------------------------------------

    private void checkNotMapped(MemorySegment ptr, long byteSize) {
        if (!mappings.isEmpty()) {
            Mapping m = mappings.get(ptr.address());
            if (m != null) {
                throw new IllegalArgumentException("byteSize: " + byteSize + " (expected: " + m.byteSize()
                        + ", the size of the mapped block at 0x" + Long.toHexString(ptr.address()) + ")");
            }
        }
    }

    private Mapping live(MemorySegment ptr, long byteSize) {
        return mappings.check(ptr.address(), byteSize, "free");
    }

    /**
     * One block this allocator mapped, with the pages it actually got: the entry of its table of
     * live mappings.
     *
     * @param address        the block
     * @param byteSize       the size the caller asked for (and frees with)
     * @param mappedByteSize the length of the mapping: {@code byteSize} rounded up to whole pages
     * @param kind           the pages behind it
     * @param pageSize       their size
     * @param fallback       whether these are not the pages asked for
     */
    record Mapping(long address, long byteSize, long mappedByteSize, PageKind kind, long pageSize,
                   boolean fallback) {

        Mapping {
            Objects.requireNonNull(kind, "kind");
            if (byteSize < 0 || mappedByteSize < Math.max(byteSize, 1) || pageSize <= 0
                    || mappedByteSize % pageSize != 0) {
                throw new IllegalArgumentException("mapping of " + byteSize + " bytes in " + mappedByteSize
                        + " on pages of " + pageSize + " (expected: whole pages covering the block)");
            }
        }

        /** The kind of pages as a snapshot names them: {@code transparent}, {@code hugetlb_2m, fallback}, ... */
        String pages() {
            return kind.name().toLowerCase(Locale.ROOT) + (fallback ? ", fallback" : "");
        }

        /** The mapping as {@code mapping(ptr)} and a snapshot describe it. */
        LayerSnapshot.Mapping describe() {
            return new LayerSnapshot.Mapping(address, byteSize, mappedByteSize, pageSize, pages(), "", List.of());
        }
    }

    /** How this allocator words what its table of mappings refuses. */
    private final class Refusals implements LiveBlocks.Refusals {

        @Override
        public IllegalArgumentException notLive(long address, long byteSize, String op) {
            return new IllegalArgumentException("ptr: 0x" + Long.toHexString(address) + " with byteSize " + byteSize
                    + " is not a live mapped block of '" + name + "' (freed already, allocated elsewhere, or allocated"
                    + " with a size below the " + threshold + "-byte threshold)");
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

    /** Maps a block through the page kinds in order; null when every kind is exhausted. */
    private Mapping map(long byteSize) {
        for (PageKind kind : chain) {
            Mapping m = mapKind(kind, byteSize);
            if (m != null) {
                mappings.add(m.address(), m);
                mappingCounts[kind.ordinal()].increment();
                if (m.fallback()) {
                    fallbacks.increment();
                }
                return m;
            }
        }
        return null;
    }

    private Mapping mapKind(PageKind kind, long byteSize) {
        long pageSize = kind.pageSize();
        long length = Checks.alignUp(Math.max(byteSize, 1), pageSize);
        long address;
        switch (kind) {
            case HUGETLB_1G, HUGETLB_2M -> {
                int flags = LinuxMemory.MAP_PRIVATE | LinuxMemory.MAP_ANONYMOUS | LinuxMemory.MAP_HUGETLB
                        | Long.numberOfTrailingZeros(pageSize) << LinuxMemory.MAP_HUGE_SHIFT;
                address = LinuxMemory.mmap(0, length, LinuxMemory.PROT_READ_WRITE, flags);
                if (address < 0) {
                    return exhaustedOrThrow((int) -address, "mmap", length, kind);
                }
            }
            case TRANSPARENT -> {
                address = LinuxMemory.mapAligned(length, pageSize, LinuxMemory.PROT_READ_WRITE, 0);
                if (address < 0) {
                    return exhaustedOrThrow((int) -address, "mmap", length, kind);
                }
                int r = LinuxMemory.madvise(address, length, LinuxMemory.MADV_HUGEPAGE);
                if (r < 0) {
                    unmap(address, length, null);
                    if (r == -LinuxMemory.EINVAL) {
                        return null; // no transparent huge pages in this kernel after all
                    }
                    throw backend("madvise(MADV_HUGEPAGE)", -r, length, null);
                }
            }
            default -> {
                address = LinuxMemory.mmap(0, length, LinuxMemory.PROT_READ_WRITE,
                        LinuxMemory.MAP_PRIVATE | LinuxMemory.MAP_ANONYMOUS);
                if (address < 0) {
                    return exhaustedOrThrow((int) -address, "mmap", length, kind);
                }
            }
        }
        if (hook != null) {
            boolean ok;
            try {
                ok = hook.prepare(address, length, kind, pageSize);
            } catch (RuntimeException | Error e) {
                unmap(address, length, e);
                throw e;
            }
            if (!ok) {
                unmap(address, length, null);
                return null;
            }
        }
        return new Mapping(address, byteSize, length, kind, pageSize, kind != pages);
    }

    private Mapping exhaustedOrThrow(int errno, String operation, long length, PageKind kind) {
        if (errno == LinuxMemory.ENOMEM || errno == LinuxMemory.EAGAIN) {
            return null;
        }
        throw backend(operation, errno, length, kind.name().toLowerCase(Locale.ROOT) + " pages");
    }

    private BackendException backend(String operation, int errno, long byteSize, String detail) {
        return new BackendException(name, byteSize, "Linux", operation, errno, LinuxMemory.errnoName(errno),
                LinuxMemory.errnoDescription(errno) + (detail == null ? "" : ", " + detail));
    }

    private void unmap(long address, long length, Throwable pending) {
        int r = LinuxMemory.munmap(address, length);
        if (r < 0) {
            BackendException e = backend("munmap", -r, length, "0x" + Long.toHexString(address));
            if (pending != null) {
                pending.addSuppressed(e);
                return;
            }
            throw e;
        }
    }

    private void release(Mapping m) {
        mappings.remove(m.address(), m, m.byteSize(), "free");
        unmap(m.address(), m.mappedByteSize(), null);
    }

    private void replace(Mapping old, Mapping now) {
        mappings.replace(old.address(), old, now.address(), now);
        if (old.address() != now.address()) {
            mappingCounts[now.kind().ordinal()].increment();
        }
    }

    private static void copy(long from, long to, long byteSize) {
        if (byteSize > 0) {
            MemorySegment.copy(MemorySegment.ofAddress(from).reinterpret(byteSize), 0,
                    MemorySegment.ofAddress(to).reinterpret(byteSize), 0, byteSize);
        }
    }

    /** Resizes a mapped block to a size that stays mapped; returns the new address or 0. */
    private long remap(Mapping m, long newByteSize) {
        long length = Checks.alignUp(Math.max(newByteSize, 1), m.pageSize());
        Mapping resized = new Mapping(m.address(), newByteSize, length, m.kind(), m.pageSize(), m.fallback());
        if (length == m.mappedByteSize()) {
            replace(m, resized);
            return m.address();
        }
        if (length < m.mappedByteSize()) {
            unmap(m.address() + length, m.mappedByteSize() - length, null);
            replace(m, resized);
            return m.address();
        }
        if (!m.kind().explicit()) {
            long moved = grow(m, length);
            if (moved != 0) {
                replace(m, new Mapping(moved, newByteSize, length, m.kind(), m.pageSize(), m.fallback()));
                return moved;
            }
        }
        // explicit huge pages (whose reservation mremap does not extend), or mremap could not: move
        Mapping n = map(newByteSize);
        if (n == null) {
            return 0;
        }
        copy(m.address(), n.address(), m.byteSize());
        release(m);
        return n.address();
    }

    /**
     * Grows a transparent or normal mapping with {@code mremap}: in place if the addresses after
     * it are free, else (without a placement hook) moved, to a huge-page-aligned address for
     * transparent pages. Returns the new address, or 0 if it could not (the mapping is then as it
     * was, at its old address).
     */
    private long grow(Mapping m, long length) {
        long address = LinuxMemory.mremap(m.address(), m.mappedByteSize(), length, 0, 0);
        if (address >= 0 && hook != null) {
            boolean ok;
            try {
                ok = hook.grown(address, m.mappedByteSize(), length, m.kind(), m.pageSize());
            } catch (RuntimeException | Error e) {
                unmap(address + m.mappedByteSize(), length - m.mappedByteSize(), e);
                throw e;
            }
            if (!ok) {
                unmap(address + m.mappedByteSize(), length - m.mappedByteSize(), null);
                return 0;
            }
            return address;
        }
        if (address >= 0 || hook != null) {
            return Math.max(address, 0); // a placed block that cannot grow in place is copied instead
        }
        if (m.kind() == PageKind.NORMAL) {
            address = LinuxMemory.mremap(m.address(), m.mappedByteSize(), length, LinuxMemory.MREMAP_MAYMOVE, 0);
            return Math.max(address, 0);
        }
        long target = LinuxMemory.mapAligned(length, m.pageSize(), LinuxMemory.PROT_NONE, LinuxMemory.MAP_NORESERVE);
        if (target < 0) {
            return 0;
        }
        address = LinuxMemory.mremap(m.address(), m.mappedByteSize(), length,
                LinuxMemory.MREMAP_MAYMOVE | LinuxMemory.MREMAP_FIXED, target);
        if (address < 0) {
            unmap(target, length, null);
            return 0;
        }
        return address;
    }

    @Override
    public String toString() {
        return "HugePageAllocator[" + name + ", pages " + chain + ", threshold " + threshold + ", upstream " + upstream
                + "]";
    }
}
