package io.datamem.impl.internal.pool;

import io.datamem.DataMemAllocator;
import io.datamem.DeviceInterchange;
import io.datamem.MemoryTraits;
import io.datamem.internal.Checks;
import io.datamem.impl.pool.PoolingAllocator;
import io.datamem.impl.snapshot.LayerSnapshot;
import io.datamem.internal.Messages;
import io.datamem.spi.ProviderTerm;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The pool behind {@code pool(UPSTREAM)}: what {@link PoolingAllocator} describes, built by
 * {@code io.datamem.impl.provider.PoolProvider} from a handler name ({@link Options#parse}), or by
 * tests with {@link #of(DataMemAllocator, Options)}.
 *
 * <p>Thread-safe.
 */
public final class PoolingAllocatorImpl implements PoolingAllocator {

    /** Most blocks in one slab: one bit each in a 64-bit occupancy word. */
    static final int MAX_BLOCKS_PER_SLAB = 64;
    /** Most slabs carved from one upstream allocation. */
    static final int MAX_SLABS_PER_RUN = 1 << 16;
    /** The bytes of wholly free slabs a heap keeps per class (at least one slab, at most 4). */
    private static final long SPARE_BYTES_PER_CLASS = 64 << 10;
    private static final int MAX_SPARES = 4;
    /** Sizes up to this many bytes find their class in a table (a load instead of arithmetic). */
    private static final int SMALL_TABLE_BYTES = 1024;
    /**
     * The bytes of wholly free slabs the depot keeps per class (at least one slab, at most 64);
     * older ones go back to the upstream, where other sizes can use the memory.
     */
    private static final long DEPOT_BYTES_PER_CLASS = 128 << 10;
    private static final int MAX_DEPOT_SLABS = 64;
    /** How many slab growths pass between two collections of the heaps of ended threads. */
    private static final int REAP_EVERY_GROWTHS = 16;
    /** The size of the table that finds a thread's heap by its id before the thread-local does. */
    private static final int HEAP_SLOTS = 64;
    private static final System.Logger LOG = System.getLogger(PoolingAllocator.class.getName());

    /**
     * How a pool is sized.
     *
     * @param maxPooledByteSize   the largest request served from the pool; larger ones go to the
     *                            upstream
     * @param slabByteSize        the bytes of a slab (rounded to whole blocks, at most 64 and at
     *                            least one block per slab); slabs are carved from runs of at
     *                            least this size, the upstream's alignment and its page size
     * @param maxRetainedByteSize the free bytes the depot may keep before returning whole free slabs
     *                            to the upstream
     */
    public record Options(long maxPooledByteSize, long slabByteSize, long maxRetainedByteSize) {

        /** The defaults: pool up to 16 MiB, 64 KiB slabs, keep up to 1 GiB free. */
        public static final Options DEFAULTS = new Options(16L << 20, 64L << 10, 1L << 30);

        /**
         * Validates the options.
         *
         * @throws IllegalArgumentException if a size is not positive, {@code maxPooledByteSize} or
         *                                  {@code slabByteSize} exceeds 2^40, or
         *                                  {@code maxRetainedByteSize} is negative
         */
        public Options {
            if (maxPooledByteSize < 1 || maxPooledByteSize > (1L << 40)) {
                throw new IllegalArgumentException("maxPooledByteSize: " + maxPooledByteSize
                        + " (expected: 1 to 2^40)");
            }
            if (slabByteSize < 1 || slabByteSize > (1L << 40)) {
                throw new IllegalArgumentException("slabByteSize: " + slabByteSize + " (expected: 1 to 2^40)");
            }
            if (maxRetainedByteSize < 0) {
                throw new IllegalArgumentException("maxRetainedByteSize: " + maxRetainedByteSize
                        + " (expected: >= 0)");
            }
        }

        /**
         * These options with another pooling limit.
         *
         * @param bytes the largest pooled request
         * @return a copy
         * @throws IllegalArgumentException if {@code bytes} is out of range
         */
        public Options withMaxPooledByteSize(long bytes) {
            return new Options(bytes, slabByteSize, maxRetainedByteSize);
        }

        /**
         * These options with another slab size.
         *
         * @param bytes the slab size
         * @return a copy
         * @throws IllegalArgumentException if {@code bytes} is out of range
         */
        public Options withSlabByteSize(long bytes) {
            return new Options(maxPooledByteSize, bytes, maxRetainedByteSize);
        }

        /**
         * These options with another retention cap.
         *
         * @param bytes the free bytes the depot may keep
         * @return a copy
         * @throws IllegalArgumentException if {@code bytes} is negative
         */
        public Options withMaxRetainedByteSize(long bytes) {
            return new Options(maxPooledByteSize, slabByteSize, bytes);
        }

        /**
         * Reads the options of a {@code pool(UPSTREAM)} term of a handler name
         * ({@code pool(aligned64):max=1m,slab=128k}): {@code max}, {@code slab} and {@code retain},
         * each a byte size ({@code 64k}, {@code 1g}); the rest keep their defaults. The upstream
         * name inside the parentheses is not read: the caller resolves it. {@link #spec()} writes
         * the options back.
         *
         * @param term        the term, family {@code pool}
         * @param handlerName the handler's name, for messages
         * @return the options
         * @throws NullPointerException     if an argument is null
         * @throws IllegalArgumentException if the term is not {@code pool(UPSTREAM)} with a non-empty
         *                                  upstream, an option is unknown or empty, or a size is
         *                                  malformed or out of range; the message quotes the handler
         *                                  name
         */
        public static Options parse(ProviderTerm term, String handlerName) {
            Objects.requireNonNull(term, "term");
            Objects.requireNonNull(handlerName, "handlerName");
            String nested = term.nested();
            if (nested == null || nested.isEmpty() || !term.text().startsWith("pool(")) {
                throw new IllegalArgumentException("handler name " + Messages.quote(handlerName) + ": "
                        + Messages.quote(term.text()) + " (expected: pool(UPSTREAM), for example pool(aligned64))");
            }
            Options options = DEFAULTS;
            List<ProviderTerm.Option> items;
            try {
                items = term.options("pool");
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("handler name " + Messages.quote(handlerName) + ": "
                        + e.getMessage(), e);
            }
            for (ProviderTerm.Option o : items) {
                String value = o.value();
                options = switch (o.key()) {
                    case "max" -> options.withMaxPooledByteSize(ProviderTerm.byteSize("max", value, 1L << 40));
                    case "slab" -> options.withSlabByteSize(ProviderTerm.byteSize("slab", value, 1L << 40));
                    case "retain" -> options.withMaxRetainedByteSize(ProviderTerm.byteSize("retain", value, 1L << 40));
                    default -> throw new IllegalArgumentException("handler name " + Messages.quote(handlerName)
                            + ": pool option " + Messages.quote(o.toString())
                            + " (expected: max=SIZE, slab=SIZE or retain=SIZE)");
                };
            }
            return options;
        }

        /**
         * The options as a handler name writes them after {@code pool(UPSTREAM)}, which
         * {@link #parse} reads back: empty for the defaults, else {@code :} and the options that
         * differ from them, in bytes ({@code :max=1048576}).
         *
         * @return the text to append to {@code pool(UPSTREAM)}
         */
        public String spec() {
            List<String> parts = new ArrayList<>();
            if (maxPooledByteSize != DEFAULTS.maxPooledByteSize) {
                parts.add("max=" + maxPooledByteSize);
            }
            if (slabByteSize != DEFAULTS.slabByteSize) {
                parts.add("slab=" + slabByteSize);
            }
            if (maxRetainedByteSize != DEFAULTS.maxRetainedByteSize) {
                parts.add("retain=" + maxRetainedByteSize);
            }
            return parts.isEmpty() ? "" : ":" + String.join(",", parts);
        }
    }

    private final DataMemAllocator upstream;
    private final Options options;
    private final MemoryTraits traits;
    private final boolean hostAccessible;
    private final long upstreamAlignment;
    private final long[] classSizes;
    private final int gridShift;          // log2 of the first class at or above the upstream's alignment
    private final int smallClasses;       // the power-of-two classes below it: 16, 32, ... 2^(gridShift-1)
    private final long largestClass;
    private final byte[] smallClassTable; // the class of every size up to SMALL_TABLE_BYTES, by 16 bytes
    private final int[] blocksPerSlab;
    private final int[] slabsPerRun;
    private final long[] slabByteSizes;
    private final long[] slabMasks;
    private final int[] spareCapacity;    // wholly free slabs a heap keeps per class
    private final int[] depotCapacity;    // wholly free slabs the depot keeps per class
    private final Depot[] depots;
    private final ThreadLocal<Heap> heaps = new ThreadLocal<>();
    private final Heap[] heapSlots = new Heap[HEAP_SLOTS];
    private final Set<Heap> allHeaps = ConcurrentHashMap.newKeySet();
    private final Heap shared;            // virtual threads' heap, used under its own lock
    private final Heap depotOwner;        // the owner of slabs in the depot: never allocates
    private final Object indexLock = new Object();
    private final Object trimLock = new Object();
    private final RunMap index;           // address -> run -> slab
    private volatile int flushEpoch;
    private volatile boolean closed;
    // Every live block the upstream allocated directly (requests above maxPooledByteSize, and calloc
    // of memory the host cannot zero): address -> size. A free or realloc outside the slabs must
    // name one of them, with its size, before it reaches the upstream.
    private final ConcurrentHashMap<Long, Long> passThroughBlocks = new ConcurrentHashMap<>();

    private final LongAdder slabAllocations = new LongAdder();
    private final LongAdder slabReleases = new LongAdder();
    private final LongAdder passThrough = new LongAdder();
    private final LongAdder failures = new LongAdder();
    private final LongAdder trims = new LongAdder();
    private final LongAdder racingDoubleFrees = new LongAdder();
    private final AtomicLong upstreamBytes = new AtomicLong();
    private final AtomicLong depotBytes = new AtomicLong();           // wholly free slabs in the depot
    private final LongAdder endedHeapAllocations = new LongAdder();
    private final java.util.concurrent.atomic.AtomicInteger growths = new java.util.concurrent.atomic.AtomicInteger();

    /**
     * A pool with the default options.
     *
     * @param upstream the allocator slabs come from
     * @return a new pool
     * @throws NullPointerException if {@code upstream} is null
     */
    public static PoolingAllocatorImpl of(DataMemAllocator upstream) {
        return new PoolingAllocatorImpl(upstream, Options.DEFAULTS);
    }

    /**
     * A pool.
     *
     * @param upstream the allocator slabs come from
     * @param options  sizes
     * @return a new pool
     * @throws NullPointerException if an argument is null
     */
    public static PoolingAllocatorImpl of(DataMemAllocator upstream, Options options) {
        return new PoolingAllocatorImpl(upstream, options);
    }

    private PoolingAllocatorImpl(DataMemAllocator upstream, Options options) {
        this.upstream = Objects.requireNonNull(upstream, "upstream");
        this.options = Objects.requireNonNull(options, "options");
        MemoryTraits upstreamTraits = upstream.traits();
        this.upstreamAlignment = upstreamTraits.byteAlignment();
        this.traits = upstreamTraits.withByteAlignment(Math.min(upstreamAlignment, 16));
        this.hostAccessible = traits.hostAccessible();
        long grid = Math.max(16, upstreamAlignment);
        this.classSizes = classSizes(upstreamAlignment, options.maxPooledByteSize());
        this.gridShift = Long.numberOfTrailingZeros(grid);
        this.smallClasses = gridShift - 4;
        this.largestClass = classSizes[classSizes.length - 1];
        this.smallClassTable = new byte[SMALL_TABLE_BYTES / 16 + 1];
        for (int i = 0; i < smallClassTable.length; i++) {
            smallClassTable[i] = (byte) searchClass(i * 16L);   // -1 above the largest class
        }
        long runTarget = Math.max(options.slabByteSize(), Math.max(upstreamAlignment, upstreamTraits.pageSize()));
        // Every run is longer than half the run target (or a slab alone, longer still): the index's
        // granule is at most that, so that a granule meets at most two runs.
        this.index = new RunMap(Long.numberOfTrailingZeros(Math.min(64L << 10, Long.highestOneBit(runTarget) / 2)));
        int n = classSizes.length;
        this.blocksPerSlab = new int[n];
        this.slabsPerRun = new int[n];
        this.slabByteSizes = new long[n];
        this.slabMasks = new long[n];
        this.spareCapacity = new int[n];
        this.depotCapacity = new int[n];
        this.depots = new Depot[n];
        for (int c = 0; c < n; c++) {
            long size = classSizes[c];
            blocksPerSlab[c] = Math.clamp(options.slabByteSize() / size, 1, MAX_BLOCKS_PER_SLAB);
            slabsPerRun[c] = Math.clamp(runTarget / (size * blocksPerSlab[c]), 1, MAX_SLABS_PER_RUN);
            slabByteSizes[c] = size * blocksPerSlab[c];
            slabMasks[c] = blocksPerSlab[c] == 64 ? -1L : (1L << blocksPerSlab[c]) - 1;
            spareCapacity[c] = Math.clamp(SPARE_BYTES_PER_CLASS / slabByteSizes[c], 1, MAX_SPARES);
            depotCapacity[c] = Math.clamp(DEPOT_BYTES_PER_CLASS / slabByteSizes[c], 1, MAX_DEPOT_SLABS);
            depots[c] = new Depot();
        }
        this.shared = new Heap(null, n, 0);
        this.depotOwner = new Heap(null, n, 0);
    }

    /**
     * The size classes of a pool over an upstream of the given alignment: powers of two from 16
     * below it, then multiples of it up to four times it, then four per power of two, up to the
     * first class of at least {@code maxPooled}.
     */
    static long[] classSizes(long upstreamAlignment, long maxPooled) {
        long alignment = Math.max(16, upstreamAlignment);
        List<Long> sizes = new ArrayList<>();
        for (long s = 16; s < alignment; s <<= 1) {
            sizes.add(s);
            if (s >= maxPooled) {
                return sizes.stream().mapToLong(Long::longValue).toArray();
            }
        }
        long s = alignment;
        while (true) {
            sizes.add(s);
            if (s >= maxPooled) {
                break;
            }
            long step = s < 4 * alignment ? alignment : Long.highestOneBit(s) / 4;
            s = Checks.alignUp(s + step, alignment);
        }
        return sizes.stream().mapToLong(Long::longValue).toArray();
    }

    @Override
    public long byteAlignmentOf(long byteSize) {
        Checks.byteSize("byteSize", byteSize);
        if (byteSize >= upstreamAlignment) {
            return upstreamAlignment;
        }
        return Math.min(upstreamAlignment, Long.highestOneBit(Math.max(16, byteSize) * 2 - 1));
    }

    @Override
    public DataMemAllocator upstream() {
        return upstream;
    }

    /**
     * The options the pool was made with.
     *
     * @return the options
     */
    public Options options() {
        return options;
    }

    @Override
    public long[] classByteSizes() {
        return classSizes.clone();
    }

    /**
     * The size class of a request, or -1 if it is not pooled. The classes are a fixed grid (see
     * {@link #classSizes}), so the class is computed: below the grid step {@code a} they are powers
     * of two from 16; up to four times {@code a} the multiples of {@code a}; above, four per power of
     * two, {@code 2^k + j * 2^(k-2)} for {@code j} from 1 to 4.
     */
    int classOf(long byteSize) {
        if (byteSize <= SMALL_TABLE_BYTES) {
            return smallClassTable[(int) (byteSize + 15) >>> 4];   // classes are multiples of 16
        }
        if (byteSize > largestClass) {
            return -1;
        }
        int c;
        if (smallClasses > 0 && byteSize <= 1L << (gridShift - 1)) {
            c = byteSize <= 16 ? 0 : 60 - Long.numberOfLeadingZeros(byteSize - 1);   // log2 rounded up, - 4
        } else if (byteSize <= 4L << gridShift) {
            c = smallClasses + (byteSize == 0 ? 0 : (int) ((byteSize - 1) >>> gridShift));
        } else {
            int k = 63 - Long.numberOfLeadingZeros(byteSize - 1);           // 2^k < byteSize <= 2^(k+1)
            int j = (int) ((byteSize - 1 - (1L << k)) >>> (k - 2)) + 1;      // 1 to 4
            c = smallClasses + 3 + 4 * (k - gridShift - 2) + j;
        }
        if (classSizes[c] < byteSize) {
            return searchClass(byteSize);   // not expected: the grid and the formula are tested to agree
        }
        return c;
    }

    /** The size class of a request by binary search, or -1 if it is not pooled. */
    int searchClass(long byteSize) {
        if (byteSize > largestClass) {
            return -1;
        }
        int lo = 0;
        int hi = classSizes.length - 1;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (classSizes[mid] >= byteSize) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return lo;
    }

    // ---------------------------------------------------------------------------------------------
    // Allocation

    @Override
    public MemorySegment malloc(long byteSize) {
        Checks.byteSize("byteSize", byteSize);
        checkOpen();
        int c = classOf(byteSize);
        return segment(c < 0 ? passThroughMalloc(byteSize) : take(c));
    }

    /**
     * The one place {@code malloc} and {@code calloc} make the segment they return, from the address
     * whichever path found. Were a path to return a segment of its own (the slow path's, the
     * upstream's), the caller's would merge with it, and the compiler, which can then no longer
     * prove that the segment never escapes, allocates it on the Java heap on every call: on 2 and
     * 4 threads some JVMs compiled it so (the slow path had run while the method was being
     * profiled), and every pair of such a JVM cost 130–140 ns instead of 6–8. {@code free}
     * likewise passes only the address to its out-of-line paths (see docs/decisions.md).
     */
    private static MemorySegment segment(long address) {
        return address == 0 ? MemorySegment.NULL : MemorySegment.ofAddress(address);
    }

    @Override
    public MemorySegment calloc(long count, long elementByteSize) {
        long size = Checks.callocByteSize(count, elementByteSize);
        if (size < 0) {
            return MemorySegment.NULL;
        }
        checkOpen();
        int c = classOf(size);
        if (c < 0 || !hostAccessible) {
            // Too large to pool, or the host cannot zero a pooled block: the upstream allocates
            // (and zeroes) this one.
            return segment(counted(upstream.calloc(count, elementByteSize), size));
        }
        long address = take(c);
        if (address != 0 && size > 0) {
            MemorySegment.ofAddress(address).reinterpret(size).fill((byte) 0);
        }
        return segment(address);
    }

    /** The address of a block the upstream allocated directly, or 0. */
    private long passThroughMalloc(long byteSize) {
        return counted(upstream.malloc(byteSize), byteSize);
    }

    /**
     * Counts a block the upstream allocated directly, records it as live, and returns its address
     * (0 for NULL): the caller makes the segment (see {@link #segment(long)}).
     */
    private long counted(MemorySegment p, long byteSize) {
        long address = p.address();
        if (address == 0) {
            failures.increment();
        } else {
            passThrough.increment();
            passThroughBlocks.put(address, byteSize);
        }
        return address;
    }

    /** The address of a block of class {@code c}, or 0. */
    private long take(int c) {
        Heap heap = heap();
        if (heap != null) {
            long address = takeFromCurrent(heap, c);
            if (address != 0) {
                return address;
            }
        }
        return takeSlow(heap, c);
    }

    /**
     * The fast path: the lowest free block of the heap's current slab of the class, by plain reads
     * and a release store of the slab's free bitmap (only the owner writes it); 0 if it has none.
     * Blocks set in the remote bitmap too (a free from another thread racing with the owner's own
     * free of the same block) are left for the collection to sort out.
     */
    private static long takeFromCurrent(Heap heap, int c) {
        Slab s = heap.current[c];
        if (s == null) {
            return 0;
        }
        long f = s.free;
        long available = f & ~s.remote;
        if (available == 0) {
            return 0;
        }
        long bit = available & -available;
        FREE.setRelease(s, f ^ bit);
        heap.allocations++;
        return s.base + Long.numberOfTrailingZeros(bit) * s.blockSize;
    }

    /** The address of a block of class {@code c} (0 if none) after a change of slab, or for a thread without a heap yet. */
    private long takeSlow(Heap heap, int c) {
        if (heap == null) {
            heap = newHeap();
            if (heap == null) {
                synchronized (shared) {
                    return takeFrom(shared, c);
                }
            }
        }
        return takeFrom(heap, c);
    }

    private long takeFrom(Heap heap, int c) {
        while (true) {
            long address = takeFromCurrent(heap, c);
            if (address != 0) {
                return address;
            }
            if (nextSlab(heap, c) == null) {
                failures.increment();
                return 0;
            }
        }
    }

    /**
     * The calling thread's heap, or null if it has none: first from a small table indexed by the
     * thread's id (a hit costs three loads and a compare), then from the thread-local.
     */
    private Heap heap() {
        Thread t = Thread.currentThread();
        Heap h = heapSlots[(int) t.threadId() & (HEAP_SLOTS - 1)];
        if (h != null && h.thread == t) {
            return h;
        }
        h = heaps.get();
        if (h != null) {
            heapSlots[(int) t.threadId() & (HEAP_SLOTS - 1)] = h;   // Heap.thread is final: safe to publish so
        }
        return h;
    }

    /** This platform thread's new heap, or null on a virtual thread. */
    private Heap newHeap() {
        Thread t = Thread.currentThread();
        if (t.isVirtual()) {
            return null;
        }
        Heap heap = new Heap(t, classSizes.length, flushEpoch);
        heaps.set(heap);
        heapSlots[(int) t.threadId() & (HEAP_SLOTS - 1)] = heap;
        allHeaps.add(heap);
        return heap;
    }

    /**
     * Makes a slab with a free block the heap's current slab of the class: its current one after
     * collecting the frees other threads made, else one of its own with free blocks, a spare, one
     * from the depot, or a new one. Returns null if the upstream has no memory.
     */
    private Slab nextSlab(Heap heap, int c) {
        if (heap.epoch != flushEpoch) {
            giveBackFreeSlabs(heap, false);
        }
        collectRemote(heap);
        Slab current = heap.current[c];
        if (current != null && (current.free & ~current.remote) != 0) {
            return current;
        }
        Slab next = heap.available[c];
        while (next != null && (next.free & ~next.remote) == 0) {
            next = next.nextAvailable;   // only racing double frees leave such a slab listed
        }
        if (next != null) {
            heap.unlink(next);
        } else if (heap.spareCount[c] > 0) {
            next = heap.popSpare(c);
        } else {
            next = fromDepot(heap, c);
            if (next == null) {
                return null;
            }
            heap.ownedSlabs++;
        }
        heap.current[c] = next;
        if (current != null) {
            settle(heap, current);
        }
        return next;
    }

    /**
     * Puts a slab its heap owns, other than a current one, where it belongs: wholly free ones to
     * the spares or the depot, others with free blocks on the heap's list of them, full ones nowhere
     * (a free brings them back). Called by the owner.
     */
    private void settle(Heap heap, Slab s) {
        long f = s.free;
        int c = s.classIndex;
        if (f == s.mask && s.remote == 0) {
            heap.unlink(s);
            if (heap.spareCount[c] < spareCapacity[c] && heap.thread != null && !closed
                    && options.maxRetainedByteSize() >= slabByteSizes[c]) {
                heap.pushSpare(s);
            } else {
                heap.ownedSlabs--;
                toDepot(s);
            }
        } else if (f != 0 && !s.listed) {
            heap.link(s);
        }
    }

    /**
     * Collects the blocks other threads freed in the heap's slabs: pops its remote stack, and for
     * each slab takes its remote bitmap into its free one. A slab its heap no longer owns (given to
     * the depot after a remote free had read the old owner) is passed on to its owner's stack.
     * Called by the owner (for ended threads' heaps and the shared heap: under the trim or the
     * shared lock).
     */
    private void collectRemote(Heap heap) {
        if (heap.remoteHead == null) {
            return;   // the common case: no lambda made
        }
        forEachRemote(heap, s -> {
            Heap owner = s.owner;
            if (owner != heap) {
                push(owner, s);
            } else {
                long r = (long) REMOTE.getAndSet(s, 0L);
                long f = s.free;
                long racing = r & f;
                if (racing != 0) {
                    reportRacingDoubleFrees(s, racing);
                }
                FREE.setRelease(s, f | r);
                if (s != heap.current[s.classIndex] && !isSpare(heap, s)) {
                    settle(heap, s);
                }
            }
        });
    }

    private static boolean isSpare(Heap heap, Slab s) {
        return s.spare;
    }

    private void reportRacingDoubleFrees(Slab s, long racing) {
        racingDoubleFrees.add(Long.bitCount(racing));
        StringBuilder where = new StringBuilder();
        for (long r = racing; r != 0; r &= r - 1) {
            where.append(where.isEmpty() ? "" : ", ").append("0x")
                    .append(Long.toHexString(s.base + Long.numberOfTrailingZeros(r) * s.blockSize));
        }
        LOG.log(System.Logger.Level.ERROR, this + ": double free of " + where + " (" + s.blockSize + "-byte class):"
                + " two frees of the same block raced, from different threads; the second was ignored");
    }

    /** Pushes a slab whose remote bitmap just stopped being empty on its owner's remote stack. */
    static void push(Heap owner, Slab s) {
        Slab head;
        do {
            head = owner.remoteHead;
            s.nextRemote = head;
        } while (!REMOTE_HEAD.compareAndSet(owner, head, s));
    }

    /** Hands a wholly free slab to the depot, releasing free slabs beyond the retention cap. */
    private void toDepot(Slab s) {
        int c = s.classIndex;
        Depot d = depots[c];
        boolean over;
        boolean full;
        synchronized (d) {
            s.owner = depotOwner;
            d.push(s);
            full = d.count > depotCapacity[c];
        }
        over = depotBytes.addAndGet(slabByteSizes[c]) > options.maxRetainedByteSize();
        if (over) {
            releaseFreeSlabs(c);
        } else if (full) {
            releaseFreeSlabs(c, depotCapacity[c]);   // the oldest go back: other sizes can use the memory
        }
    }

    /** A wholly free slab of the class from the depot, or a new one; now owned by {@code heap}. */
    private Slab fromDepot(Heap heap, int c) {
        collectDepot();
        Depot d = depots[c];
        synchronized (d) {
            Slab s = d.popFree();
            if (s != null) {
                depotBytes.addAndGet(-slabByteSizes[c]);
                s.owner = heap;
                return s;
            }
        }
        if (growths.incrementAndGet() % REAP_EVERY_GROWTHS == 0) {
            reapEndedThreads();
            synchronized (d) {
                Slab s = d.popFree();
                if (s != null) {
                    depotBytes.addAndGet(-slabByteSizes[c]);
                    s.owner = heap;
                    return s;
                }
            }
        }
        synchronized (d) {
            Slab s = grow(c);
            if (s != null) {
                s.owner = heap;
            }
            return s;
        }
    }

    /**
     * Collects remote frees of slabs in the depot (frees that raced with their slab's move to the
     * depot): every one is a double free, since a slab goes there only when all its blocks are free.
     */
    private void collectDepot() {
        if (depotOwner.remoteHead == null) {
            return;
        }
        forEachRemote(depotOwner, s -> {
            Depot d = depots[s.classIndex];
            synchronized (d) {
                Heap owner = s.owner;
                if (owner != depotOwner) {
                    push(owner, s);
                } else {
                    long r = (long) REMOTE.getAndSet(s, 0L);
                    if (r != 0) {
                        reportRacingDoubleFrees(s, r);
                    }
                }
            }
        });
    }

    /**
     * Takes a heap's whole remote stack with one swap and hands each slab on it to {@code action},
     * its link cleared first (so the action may push it on another stack).
     */
    private static void forEachRemote(Heap heap, java.util.function.Consumer<Slab> action) {
        Slab s = (Slab) REMOTE_HEAD.getAndSet(heap, (Slab) null);
        while (s != null) {
            Slab next = s.nextRemote;
            s.nextRemote = null;
            action.accept(s);
            s = next;
        }
    }

    /** The slab an address lies in, or null (for tests). */
    Slab slabOf(long address) {
        return index.find(address);
    }

    /**
     * Carves a new slab of the class from a run with a free slot, or from a new run, and enters it
     * in the index; wholly free. Caller holds the depot's lock. Null if the upstream has no memory.
     */
    private Slab grow(int c) {
        long size = classSizes[c];
        int blocks = blocksPerSlab[c];
        long slabBytes = slabByteSizes[c];
        Depot d = depots[c];
        Run run = d.partialRuns.isEmpty() ? null : d.partialRuns.getLast();
        if (run == null) {
            int slots = slabsPerRun[c];
            MemorySegment base = upstream.malloc(slabBytes * slots);
            int fewest = (int) Math.min(slots, (index.granule() + slabBytes - 1) / slabBytes);
            if (base.address() == 0 && fewest < slots) {
                // No room for a whole run: the fewest slabs that still cover a granule of the index.
                slots = fewest;
                base = upstream.malloc(slabBytes * slots);
            }
            if (base.address() == 0) {
                return null;
            }
            run = new Run(base.address(), slabBytes, slots, c, runTraits(base, classSizes[c]));
            upstreamBytes.addAndGet(run.byteSize());
            d.partialRuns.add(run);
            synchronized (indexLock) {
                index.add(run);
            }
        }
        int slot = run.take();
        if (run.full()) {
            d.partialRuns.remove(run);
        }
        Slab slab = new Slab(run.base + slot * slabBytes, size, blocks, c, c == 0 ? 0 : classSizes[c - 1] + 1);
        slab.run = run;
        slab.slot = slot;
        run.slabs[slot] = slab;   // reaches other threads with the blocks it hands out
        slabAllocations.increment();
        return slab;
    }

    // ---------------------------------------------------------------------------------------------
    // Free

    /**
     * Gives a block back to the pool, or to the upstream if the upstream allocated it directly.
     *
     * @param ptr      a block this pool returned, or {@code NULL} (a no-op)
     * @param byteSize the size it was allocated (or last reallocated) with
     * @throws IllegalArgumentException if {@code byteSize} is negative; if {@code ptr} is not a live
     *                                  block of this pool (never handed out here, an interior pointer,
     *                                  or already freed); or if {@code byteSize} is not the size it
     *                                  was allocated with (for a pooled block: of another size
     *                                  class). Nothing is freed and the pool is unchanged.
     */
    @Override
    public void free(MemorySegment ptr, long byteSize) {
        Checks.notNegative("byteSize", byteSize);
        long address = ptr.address();
        if (address == 0) {
            return;
        }
        Heap heap = heap();
        Slab s = heap == null ? null : heap.lastSlab;
        Heap owner;
        if (s == null || address < s.base || address >= s.end || (owner = s.owner) != heap) {
            // Not the slab this thread last freed into, or no longer its (a slab of the heap is
            // never released, so the owner check also rules out a stale one).
            s = index.find(address);
            if (s == null) {
                freeUnpooled(address, byteSize);   // the address, not the segment: see segment(long)
                return;
            }
            if (heap != null) {
                heap.lastSlab = s;
            }
            owner = s.owner;
        }
        long bit = 1L << check(s, address, byteSize, "free");
        if (owner == heap) {
            // The owner's free: plain reads, one release store, no counter (frees are counted as
            // allocations less the blocks live, see statistics()).
            long f = s.free;
            if (((f | s.remote) & bit) != 0) {
                throw doubleFree(address, byteSize);
            }
            long after = f | bit;
            FREE.setRelease(s, after);
            if ((f == 0 || after == s.mask) && s != heap.current[s.classIndex] && !isSpare(heap, s)) {
                settle(heap, s);
            }
            return;
        }
        freeRemote(heap, s, bit, address, byteSize);
    }

    /**
     * A free of a block another heap owns (or by a thread without a heap): set in the slab's remote
     * bitmap, atomically, and the slab pushed on its owner's stack when that bitmap was empty.
     */
    private void freeRemote(Heap heap, Slab s, long bit, long address, long byteSize) {
        if ((((long) FREE.getAcquire(s)) & bit) != 0) {
            throw doubleFree(address, byteSize);
        }
        long previous = (long) REMOTE.getAndBitwiseOr(s, bit);
        if ((previous & bit) != 0) {
            throw doubleFree(address, byteSize);
        }
        if (previous == 0) {
            push(s.owner, s);
        }
    }

    private IllegalArgumentException doubleFree(long address, long byteSize) {
        return new IllegalArgumentException(this + ": free(0x" + Long.toHexString(address) + ", " + byteSize
                + "): double free, the block is already free (expected: a live block)");
    }

    private void freeUnpooled(long address, long byteSize) {
        Long allocated = passThroughBlocks.get(address);
        if (allocated == null) {
            throw notOurs(address, "free(0x" + Long.toHexString(address) + ", " + byteSize + ")");
        }
        if (allocated != byteSize) {
            throw wrongSize(address, allocated, byteSize, "free");
        }
        if (!passThroughBlocks.remove(address, allocated)) {   // freed by another thread meanwhile
            throw notOurs(address, "free(0x" + Long.toHexString(address) + ", " + byteSize + ")");
        }
        try {
            upstream.free(MemorySegment.ofAddress(address), byteSize);
        } catch (RuntimeException | Error e) {
            passThroughBlocks.put(address, allocated);   // the upstream kept it
            throw e;
        }
    }

    private IllegalArgumentException notOurs(long address, String call) {
        return new IllegalArgumentException(this + ": " + call + ": not a block of this pool, nor a live block"
                + " it passed to the upstream (never allocated here, an interior pointer, or already freed)"
                + " (expected: a pointer this pool's malloc, calloc or realloc returned, with its size)");
    }

    /** Checks a pointer and size against the slab it lies in, and returns its block index. */
    private int check(Slab slab, long address, long byteSize, String op) {
        if (byteSize > slab.blockSize || byteSize < slab.smallestSize) {
            throw new IllegalArgumentException(this + ": " + op + "(0x" + Long.toHexString(address) + ", " + byteSize
                    + "): the block belongs to the " + slab.blockSize + "-byte class (requests of "
                    + slab.smallestSize + " to " + slab.blockSize
                    + " bytes) (expected: the size it was allocated with)");
        }
        long offset = address - slab.base;
        int block;
        long into;
        if (slab.odd == 1) {   // a power of two: no multiplication
            block = (int) (offset >>> slab.shift);
            into = offset & (slab.blockSize - 1);
        } else {
            block = slab.index(address);
            into = offset - block * slab.blockSize;
        }
        if (into != 0) {
            throw new IllegalArgumentException(this + ": " + op + "(0x" + Long.toHexString(address) + ", " + byteSize
                    + "): an interior pointer, " + into + " bytes into a block (expected: the block's start)");
        }
        return block;
    }

    private IllegalArgumentException wrongSize(long address, long allocated, long given, String op) {
        return new IllegalArgumentException(this + ": " + op + "(0x" + Long.toHexString(address) + ", " + given
                + "): the block was allocated with " + allocated + " bytes (expected: that size)");
    }

    /**
     * Gives every wholly free slab a heap holds (its spares, and current slabs with no block out) to
     * the depot, after collecting its remote frees. Called by the owner, or under the trim lock for
     * an ended thread's heap, or under the shared heap's lock.
     */
    private void giveBackFreeSlabs(Heap heap, boolean all) {
        heap.epoch = flushEpoch;
        collectRemote(heap);
        for (int c = 0; c < classSizes.length; c++) {
            while (heap.spareCount[c] > 0) {
                heap.ownedSlabs--;
                toDepot(heap.popSpare(c));
            }
            Slab current = heap.current[c];
            if (current != null && current.free == current.mask && current.remote == 0) {
                heap.current[c] = null;
                heap.ownedSlabs--;
                toDepot(current);
            }
            if (all) {
                for (Slab s = heap.available[c]; s != null; ) {
                    Slab next = s.nextAvailable;
                    if (s.free == s.mask && s.remote == 0) {
                        heap.unlink(s);
                        heap.ownedSlabs--;
                        toDepot(s);
                    }
                    s = next;
                }
            }
        }
    }

    /**
     * Releases every slab of a class in the depot to its run, and returns to the upstream every run
     * left with no slab.
     */
    private void releaseFreeSlabs(int c) {
        releaseFreeSlabs(c, 0);
    }

    /** Releases the oldest free slabs of a class in the depot, keeping the newest {@code keepSlabs}. */
    private void releaseFreeSlabs(int c, int keepSlabs) {
        Depot d = depots[c];
        List<Slab> released = new ArrayList<>();
        List<Run> emptied = new ArrayList<>();
        synchronized (d) {
            int eligible = 0;
            for (int i = 0; i < d.count; i++) {
                Slab s = d.slabs[i];
                if (s.remote == 0 && s.free == s.mask) {
                    eligible++;
                }
            }
            int release = eligible - keepSlabs;
            int keep = 0;
            for (int i = 0; i < d.count; i++) {
                Slab s = d.slabs[i];
                if (release > 0 && s.remote == 0 && s.free == s.mask) {
                    release--;
                    s.released = true;
                    released.add(s);
                } else {
                    d.slabs[keep++] = s;   // a racing double free not yet collected: next time
                }
            }
            Arrays.fill(d.slabs, keep, d.count, null);
            d.count = keep;
            if (released.isEmpty()) {
                return;
            }
            for (Slab s : released) {
                Run run = s.run;
                boolean wasFull = run.full();
                run.slabs[s.slot] = null;   // out of the index before the slot can be carved again
                run.release(s.slot);
                if (run.empty()) {
                    d.partialRuns.remove(run);
                    emptied.add(run);
                } else if (wasFull) {
                    d.partialRuns.add(run);
                }
            }
            if (!emptied.isEmpty()) {
                synchronized (indexLock) {
                    for (Run r : emptied) {
                        index.remove(r);
                    }
                }
            }
        }
        depotBytes.addAndGet(-released.size() * slabByteSizes[c]);
        slabReleases.add(released.size());
        for (Run run : emptied) {
            upstreamBytes.addAndGet(-run.byteSize());
            upstream.free(MemorySegment.ofAddress(run.base), run.byteSize());
        }
    }

    private Slab find(long address, Heap heap) {
        if (heap != null) {
            Slab last = heap.lastSlab;
            if (last != null && address >= last.base && address < last.end && !last.released) {
                return last;
            }
        }
        Slab s = index.find(address);
        if (heap != null && s != null) {
            heap.lastSlab = s;
        }
        return s;
    }

    // ---------------------------------------------------------------------------------------------
    // Realloc

    /**
     * Resizes a block: in place within its size class, by the upstream when it stays above
     * {@link Options#maxPooledByteSize()}, else by moving it.
     *
     * @param ptr         a block this pool returned, or {@code NULL} (then a {@code malloc})
     * @param oldByteSize the size it was allocated with
     * @param newByteSize the size wanted
     * @return the resized block, or {@code NULL} if no memory could be had (the old block is then
     *         untouched and still the caller's)
     * @throws IllegalArgumentException      if a size is negative, or {@code ptr} is not a live block
     *                                       of this pool with {@code oldByteSize} (as for
     *                                       {@link #free}); nothing is changed
     * @throws IllegalStateException         if the pool is closed and the block must move or grow
     * @throws UnsupportedOperationException if memory the host cannot access must move across size
     *                                       classes and the upstream's traits carry no device copy
     */
    @Override
    public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        Checks.byteSize("oldByteSize", oldByteSize);
        Checks.byteSize("newByteSize", newByteSize);
        long address = ptr.address();
        if (address == 0) {
            return malloc(newByteSize);
        }
        Slab slab = find(address, heap());
        if (slab == null) {
            Long allocated = passThroughBlocks.get(address);
            if (allocated == null) {
                throw notOurs(address, "realloc(0x" + Long.toHexString(address) + ", " + oldByteSize + ", "
                        + newByteSize + ")");
            }
            if (allocated != oldByteSize) {
                throw wrongSize(address, allocated, oldByteSize, "realloc");
            }
            if (classOf(oldByteSize) < 0 && classOf(newByteSize) < 0) {   // large stays large: the upstream resizes it
                checkOpen();
                MemorySegment p = upstream.realloc(ptr, oldByteSize, newByteSize);
                if (p.address() != 0) {
                    passThroughBlocks.remove(address, allocated);
                    passThroughBlocks.put(p.address(), newByteSize);
                }
                return p;
            }
            return move(ptr, oldByteSize, newByteSize);
        }
        int block = check(slab, address, oldByteSize, "realloc");
        if (!slab.isLive(block)) {
            throw new IllegalArgumentException("pool: realloc(0x" + Long.toHexString(address) + ", " + oldByteSize
                    + ", " + newByteSize + "): the block is free (expected: a live block)");
        }
        if (classOf(newByteSize) == slab.classIndex) {
            return ptr;
        }
        return move(ptr, oldByteSize, newByteSize);
    }

    private MemorySegment move(MemorySegment ptr, long oldByteSize, long newByteSize) {
        DeviceInterchange interchange = traits.interchange();
        if (!hostAccessible && interchange == null) {
            throw new UnsupportedOperationException("pool: realloc of " + traits.kind() + " memory on "
                    + traits.device() + " across size classes needs a device copy, and the upstream's traits carry"
                    + " no DeviceInterchange to make it; allocate a new block and copy with the backend's copy"
                    + " operation instead");
        }
        MemorySegment moved = malloc(newByteSize);
        if (moved.address() == 0) {
            return MemorySegment.NULL;
        }
        long keep = Math.min(oldByteSize, newByteSize);
        if (keep > 0) {
            if (hostAccessible) {
                MemorySegment.copy(ptr.reinterpret(keep), 0, moved.reinterpret(keep), 0, keep);
            } else {
                try {
                    interchange.copyWithinDevice(ptr, 0, moved, 0, keep);
                } catch (UnsupportedOperationException e) {
                    free(moved, newByteSize);
                    throw new UnsupportedOperationException("pool: realloc of " + traits.kind() + " memory on "
                            + traits.device() + " across size classes needs a device copy, which the backend does"
                            + " not make (" + e.getMessage() + "); allocate a new block and copy with the backend's"
                            + " copy operation instead", e);
                } catch (RuntimeException | Error e) {
                    free(moved, newByteSize);
                    throw e;
                }
            }
        }
        free(ptr, oldByteSize);
        return moved;
    }

    // ---------------------------------------------------------------------------------------------
    // Traits, trim, close, statistics

    @Override
    public MemoryTraits traits() {
        return traits;
    }

    @Override
    public MemoryTraits traitsOf(MemorySegment ptr) {
        Slab s = find(ptr.address(), heap());
        if (s == null) {
            return upstream.traitsOf(ptr);
        }
        return s.run.traits;
    }

    /**
     * The traits of every block of a new run: the upstream's for the run, with the alignment its
     * blocks keep (their class's, at most the upstream's). Asked once per run, since they do not
     * change while the run lives: an array asks for its block's traits on creation.
     */
    private MemoryTraits runTraits(MemorySegment runBase, long classByteSize) {
        MemoryTraits run = upstream.traitsOf(runBase);
        long classAlignment = byteAlignmentOf(classByteSize);
        return run.byteAlignment() <= classAlignment ? run : run.withByteAlignment(classAlignment);
    }

    @Override
    public void trim() {
        synchronized (trimLock) {
            trims.increment();
            flushEpoch++;
            Heap own = heap();
            if (own != null) {
                giveBackFreeSlabs(own, true);
            }
            synchronized (shared) {
                giveBackFreeSlabs(shared, true);
            }
            reap();
            collectDepot();
            for (int c = 0; c < classSizes.length; c++) {
                releaseFreeSlabs(c);
            }
        }
    }

    private void reapEndedThreads() {
        synchronized (trimLock) {
            reap();
        }
    }

    /**
     * Collects the heaps of threads that have ended: their wholly free slabs go to the depot, and a
     * heap with no slab left is forgotten (its counts kept). Caller holds the trim lock, which makes
     * it the owner of those heaps.
     */
    private void reap() {
        for (Heap h : allHeaps) {
            if (!h.thread.isAlive()) {
                giveBackFreeSlabs(h, true);
                if (h.ownedSlabs == 0 && allHeaps.remove(h)) {
                    int slot = (int) h.thread.threadId() & (HEAP_SLOTS - 1);
                    if (heapSlots[slot] == h) {
                        heapSlots[slot] = null;
                    }
                    endedHeapAllocations.add(h.allocations);
                }
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        trim();
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("pool over " + upstream + " is closed");
        }
    }

    /**
     * The pool's counters, then its size classes, runs, slabs (with their free blocks) and large
     * blocks, as {@link #snapshot()} describes them.
     *
     * <p>The counters are read first and without a lock (the virtual threads' heap under its own
     * lock, which is taken before a depot lock elsewhere, never after). Then the pool is read under
     * the locks of all its classes' depots at once, the locks its slow path takes to carve slabs and
     * runs and to release them, so the runs and slabs listed are those it held at one instant, and
     * the large blocks listed were live within that instant's window: none overlaps another. Threads
     * whose current slab has a free block go on allocating and freeing meanwhile (the fast path takes
     * no lock); a thread that needs a new slab waits for the pass. A slab's free blocks come from one
     * read of its remote bitmap and then one of its free bitmap: a block its owner is moving from the
     * first to the second at that moment may be counted as used.
     *
     * @return the pool's figures
     */
    @Override
    public LayerSnapshot.Pool statistics() {
        long allocations = endedHeapAllocations.sum();
        for (Heap h : allHeaps) {
            allocations += h.allocations;
        }
        synchronized (shared) {
            allocations += shared.allocations;
        }
        // Frees are not counted on the fast path: every block handed out is live or was freed, so
        // the blocks freed are these allocations less the blocks the classes say are in use.
        Counters counters = new Counters(allocations, passThrough.sum(), failures.sum(), slabAllocations.sum(),
                slabReleases.sum(), trims.sum(), racingDoubleFrees.sum());
        return underDepotLocks(0, counters);
    }

    /**
     * Describes the pool for a {@link io.datamem.impl.snapshot.MemorySnapshot}: its
     * {@link #statistics()}.
     *
     * @return the pool's section of a snapshot
     */
    @Override
    public LayerSnapshot snapshot() {
        return statistics();
    }

    /** The pool's counters, read before its depot locks are taken. */
    private record Counters(long allocations, long passThroughAllocations, long failures, long slabAllocations,
                            long slabReleases, long trims, long racingDoubleFrees) {
    }

    /** Takes the depot locks of classes {@code c} and above, in order, then describes the pool. */
    private LayerSnapshot.Pool underDepotLocks(int c, Counters counters) {
        if (c == depots.length) {
            return describe(counters);
        }
        synchronized (depots[c]) {
            return underDepotLocks(c + 1, counters);
        }
    }

    /** The pool's section; the caller holds every depot lock, under which runs come and go. */
    private LayerSnapshot.Pool describe(Counters n) {
        List<List<Run>> byClass = new ArrayList<>(classSizes.length);
        for (int c = 0; c < classSizes.length; c++) {
            byClass.add(new ArrayList<>());
        }
        for (Run r : index.runs) {
            byClass.get(r.classIndex).add(r);
        }
        List<LayerSnapshot.SizeClass> classes = new ArrayList<>();
        List<LayerSnapshot.Run> runs = new ArrayList<>();
        List<LayerSnapshot.Slab> slabs = new ArrayList<>();
        for (int c = 0; c < classSizes.length; c++) {
            if (!byClass.get(c).isEmpty()) {
                classes.add(describeClass(c, byClass.get(c), runs, slabs));
            }
        }
        runs.sort(java.util.Comparator.comparingLong(LayerSnapshot.Run::address));
        slabs.sort(java.util.Comparator.comparingLong(LayerSnapshot.Slab::address));
        List<java.util.Map.Entry<Long, Long>> read = new ArrayList<>(passThroughBlocks.entrySet());
        List<LayerSnapshot.LargeBlock> large = new ArrayList<>(read.size());
        for (java.util.Map.Entry<Long, Long> e : read) {
            if (passThroughBlocks.get(e.getKey()) == e.getValue()) {   // the same record: live all along
                large.add(new LayerSnapshot.LargeBlock(e.getKey(), e.getValue()));
            }
        }
        large.sort(java.util.Comparator.comparingLong(LayerSnapshot.LargeBlock::address));
        return new LayerSnapshot.Pool("PoolingAllocator", n.allocations(), n.passThroughAllocations(), n.failures(),
                n.slabAllocations(), n.slabReleases(), n.trims(), n.racingDoubleFrees(), classes, runs, slabs, large);
    }

    /** One class, its runs and slabs added to the lists; caller holds the class's depot lock. */
    private LayerSnapshot.SizeClass describeClass(int c, List<Run> mine, List<LayerSnapshot.Run> runs,
                                                  List<LayerSnapshot.Slab> slabs) {
        long size = classSizes[c];
        int slabCount = 0;
        int whollyFree = 0;
        long usedBlocks = 0;
        long freeBlocks = 0;
        long uncarved = 0;
        long runBytes = 0;
        long largestInClass = 0;
        for (Run r : mine) {
            long runFree = 0;
            long largest = 0;
            long stretch = 0;   // free bytes just before the next block
            int carved = 0;
            for (int slot = 0; slot < r.slots; slot++) {
                Slab s = r.slabs[slot];
                if (s == null) {
                    uncarved += r.slabBytes;
                    runFree += r.slabBytes;
                    stretch += r.slabBytes;
                    continue;
                }
                carved++;
                long remote = s.remote;
                long free = (((long) FREE.getAcquire(s)) | remote) & s.mask;
                int freeCount = Long.bitCount(free);
                freeBlocks += freeCount;
                usedBlocks += s.blockCount - freeCount;
                runFree += freeCount * s.blockSize;
                if (free == s.mask) {
                    whollyFree++;
                    stretch += r.slabBytes;
                } else {
                    for (int i = 0; i < s.blockCount; i++) {
                        if ((free & (1L << i)) != 0) {
                            stretch += s.blockSize;
                        } else {
                            largest = Math.max(largest, stretch);
                            stretch = 0;
                        }
                    }
                }
                slabs.add(new LayerSnapshot.Slab(s.base, s.blockSize, s.blockCount, free, ownerName(s.owner)));
            }
            largest = Math.max(largest, stretch);
            slabCount += carved;
            runBytes += r.byteSize();
            largestInClass = Math.max(largestInClass, largest);
            runs.add(new LayerSnapshot.Run(r.base, r.byteSize(), size, r.slots, carved, runFree, largest));
        }
        return new LayerSnapshot.SizeClass(size, slabByteSizes[c], blocksPerSlab[c], mine.size(), runBytes, slabCount,
                whollyFree, depots[c].count, usedBlocks, freeBlocks, uncarved, largestInClass);
    }

    private String ownerName(Heap h) {
        if (h == depotOwner) {
            return "depot";
        }
        if (h == shared) {
            return "virtual threads";
        }
        if (h == null || h.thread == null) {
            return "none";
        }
        return h.thread.isAlive() ? h.thread.getName() : h.thread.getName() + " (ended)";
    }

    /**
     * The upstream, which a snapshot describes after the pool.
     *
     * @return {@link #upstream()}
     */
    @Override
    public DataMemAllocator snapshotUpstream() {
        return upstream;
    }

    @Override
    public String toString() {
        return "PoolingAllocator[" + upstream + "]";
    }

    // ---------------------------------------------------------------------------------------------

    private static final VarHandle FREE;
    private static final VarHandle REMOTE;
    private static final VarHandle REMOTE_HEAD;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            FREE = lookup.findVarHandle(Slab.class, "free", long.class);
            REMOTE = lookup.findVarHandle(Slab.class, "remote", long.class);
            REMOTE_HEAD = lookup.findVarHandle(Heap.class, "remoteHead", Slab.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * Up to 64 blocks of one class, with two bitmaps: {@code free}, the blocks free in its owner's
     * hands (written only by the owner, with release stores), and {@code remote}, the blocks other
     * threads freed and the owner has not collected (set atomically). A block is live when it is in
     * neither. The slab is on its owner's remote stack exactly while {@code remote} is not empty
     * (from the free that set the first bit until the owner collects).
     */
    static final class Slab {
        final long base;
        final long end;
        final long blockSize;
        final int blockCount;
        final int classIndex;
        final long mask;                            // one bit per block
        final long smallestSize;                    // the smallest request of the class
        // Block index = ((address - base) >>> shift) * reciprocal >>> 32: blockSize is odd * 2^shift,
        // and for quotients below 64 * odd < 2^32 / odd the rounded-up reciprocal of odd is exact.
        private final int shift;
        private final long odd;
        private final long reciprocal;              // 0: divide (an odd part too large to be exact)
        long free;                                  // FREE: written by the owner only
        volatile long remote;                       // REMOTE: set by other threads, cleared by the owner
        volatile Heap owner;                        // changes only while every block is free
        volatile boolean released;                  // back in its run: no longer in the index
        Slab nextRemote;                            // on the owner's remote stack
        Slab prevAvailable;                         // on the owner's list of slabs with free blocks
        Slab nextAvailable;
        boolean listed;
        boolean spare;                              // one of its owner's spares
        Run run;                                    // set before the slab is published
        int slot;

        Slab(long base, long blockSize, int blockCount, int classIndex) {
            this(base, blockSize, blockCount, classIndex, 0);
        }

        Slab(long base, long blockSize, int blockCount, int classIndex, long smallestSize) {
            this.smallestSize = smallestSize;
            this.base = base;
            this.blockSize = blockSize;
            this.blockCount = blockCount;
            this.classIndex = classIndex;
            this.end = base + blockSize * blockCount;
            this.mask = blockCount == 64 ? -1L : (1L << blockCount) - 1;
            this.free = mask;
            this.shift = Long.numberOfTrailingZeros(blockSize);
            this.odd = blockSize >>> shift;
            this.reciprocal = odd < (1 << 13) ? ((1L << 32) + odd - 1) / odd : 0;
        }

        /** The index of the block an address lies in ({@code base <= address < end}). */
        int index(long address) {
            long x = (address - base) >>> shift;
            return (int) (reciprocal != 0 ? (x * reciprocal) >>> 32 : x / odd);
        }

        /** Whether a block is handed out (as far as any thread can tell now). */
        boolean isLive(int block) {
            return ((((long) FREE.getAcquire(this)) | remote) & (1L << block)) == 0;
        }
    }

    /**
     * One upstream allocation carved into slots of one class's slab size. Guarded by the class's
     * depot lock.
     */
    static final class Run {
        final long base;
        final long slabBytes;
        final int slots;
        private final java.util.BitSet used;
        private int usedCount;

        final long end;
        final Slab[] slabs;                         // by slot; null where none is carved
        final int classIndex;                       // the class of every slab carved from it
        final MemoryTraits traits;                  // of every block carved from it (traitsOf)

        Run(long base, long slabBytes, int slots, int classIndex, MemoryTraits traits) {
            this.classIndex = classIndex;
            this.traits = traits;
            this.base = base;
            this.slabBytes = slabBytes;
            this.slots = slots;
            this.end = base + slabBytes * slots;
            this.slabs = new Slab[slots];
            this.used = new java.util.BitSet(slots);
        }

        /** The slab an address of this run lies in, or null if its slot holds none. */
        Slab find(long address) {
            return slabs[(int) ((address - base) / slabBytes)];
        }

        long byteSize() {
            return slabBytes * slots;
        }

        int take() {
            int slot = used.nextClearBit(0);
            used.set(slot);
            usedCount++;
            return slot;
        }

        void release(int slot) {
            used.clear(slot);
            usedCount--;
        }

        boolean full() {
            return usedCount == slots;
        }

        boolean empty() {
            return usedCount == 0;
        }
    }

    /** Wholly free slabs of one class shared by all threads, and its runs with free slots. */
    static final class Depot {
        final List<Run> partialRuns = new ArrayList<>();
        Slab[] slabs = new Slab[16];
        int count;

        void push(Slab slab) {
            if (count == slabs.length) {
                slabs = Arrays.copyOf(slabs, count * 2);
            }
            slabs[count++] = slab;
        }

        /** The last slab pushed with no uncollected remote free, or null. */
        Slab popFree() {
            for (int i = count - 1; i >= 0; i--) {
                Slab s = slabs[i];
                if (s.remote == 0) {
                    System.arraycopy(slabs, i + 1, slabs, i, count - i - 1);
                    slabs[--count] = null;
                    return s;
                }
            }
            return null;
        }
    }

    /**
     * A thread's slabs: one current slab per class (the fast path allocates from it), a list per
     * class of other slabs with free blocks, a few spare wholly free slabs per class, and a stack of
     * slabs in which other threads freed blocks. Full slabs are on no list. Touched only by its
     * thread, except the remote stack; the heaps of ended threads and the virtual threads' heap are
     * touched under a lock that stands for the owner.
     */
    static final class Heap {
        final Thread thread;                        // null: the shared heap or the depot's
        final Slab[] current;
        final Slab[] available;
        final Slab[][] spares;                      // per class, made on first use
        final int[] spareCount;
        volatile Slab remoteHead;                   // REMOTE_HEAD
        int epoch;
        int ownedSlabs;
        Slab lastSlab;
        long allocations;

        Heap(Thread thread, int classes, int epoch) {
            this.thread = thread;
            this.current = new Slab[classes];
            this.available = new Slab[classes];
            this.spares = new Slab[classes][];
            this.spareCount = new int[classes];
            this.epoch = epoch;
        }

        void pushSpare(Slab s) {
            int c = s.classIndex;
            Slab[] stack = spares[c];
            if (stack == null || spareCount[c] == stack.length) {
                stack = Arrays.copyOf(stack == null ? new Slab[0] : stack, Math.max(1, spareCount[c] * 2));
                spares[c] = stack;
            }
            stack[spareCount[c]++] = s;
            s.spare = true;
        }

        Slab popSpare(int c) {
            Slab s = spares[c][--spareCount[c]];
            spares[c][spareCount[c]] = null;
            s.spare = false;
            return s;
        }

        void link(Slab s) {
            int c = s.classIndex;
            s.prevAvailable = null;
            s.nextAvailable = available[c];
            if (available[c] != null) {
                available[c].prevAvailable = s;
            }
            available[c] = s;
            s.listed = true;
        }

        void unlink(Slab s) {
            if (!s.listed) {
                return;
            }
            if (s.prevAvailable != null) {
                s.prevAvailable.nextAvailable = s.nextAvailable;
            } else {
                available[s.classIndex] = s.nextAvailable;
            }
            if (s.nextAvailable != null) {
                s.nextAvailable.prevAvailable = s.prevAvailable;
            }
            s.prevAvailable = null;
            s.nextAvailable = null;
            s.listed = false;
        }
    }

    /**
     * Finds the run, and so the slab, an address lies in, without a lock: a two-level table of
     * granules (a power of two no longer than any run), each granule holding the run that covers
     * its first byte and the run that starts inside it (runs are at least a granule long, so there
     * is at most one of each). Adding or removing a run writes its granules' entries under the
     * pool's index lock: no copy of the whole index, so runs can come and go often.
     */
    static final class RunMap {
        private static final int LEAF_BITS = 14;
        private static final int LEAF_MASK = (1 << LEAF_BITS) - 1;

        /** One leaf: {@code 2^LEAF_BITS} consecutive granules. */
        private static final class Leaf {
            final long key;
            final Run[] covering = new Run[1 << LEAF_BITS];
            final Run[] starting = new Run[1 << LEAF_BITS];

            Leaf(long key) {
                this.key = key;
            }
        }

        private final int shift;
        private volatile Leaf[] leaves = new Leaf[0];   // sorted by key; replaced when one is added
        private final Set<Run> runs = ConcurrentHashMap.newKeySet();

        RunMap(int shift) {
            this.shift = shift;
        }

        long granule() {
            return 1L << shift;
        }

        Slab find(long address) {
            long g = address >>> shift;
            Leaf leaf = leaf(g >>> LEAF_BITS);
            if (leaf == null) {
                return null;
            }
            int i = (int) g & LEAF_MASK;
            Run r = leaf.covering[i];
            if (r == null || address < r.base || address >= r.end) {
                r = leaf.starting[i];
                if (r == null || address < r.base || address >= r.end) {
                    return null;
                }
            }
            return r.find(address);
        }

        private Leaf leaf(long key) {
            Leaf[] l = leaves;
            int lo = 0;
            int hi = l.length - 1;
            while (lo <= hi) {
                int mid = (lo + hi) >>> 1;
                long k = l[mid].key;
                if (k < key) {
                    lo = mid + 1;
                } else if (k > key) {
                    hi = mid - 1;
                } else {
                    return l[mid];
                }
            }
            return null;
        }

        /** Enters a run. Caller holds the index lock. */
        void add(Run r) {
            runs.add(r);
            set(r, r);
        }

        /** Takes a run out. Caller holds the index lock. */
        void remove(Run r) {
            set(r, null);
            runs.remove(r);
        }

        private void set(Run r, Run value) {
            long first = r.base >>> shift;
            long last = (r.end - 1) >>> shift;
            for (long g = first; g <= last; g++) {
                Leaf leaf = leaf(g >>> LEAF_BITS);
                if (leaf == null) {
                    leaf = addLeaf(g >>> LEAF_BITS);
                }
                int i = (int) g & LEAF_MASK;
                if (g == first && (r.base & ((1L << shift) - 1)) != 0) {
                    if (value != null || leaf.starting[i] == r) {
                        leaf.starting[i] = value;
                    }
                } else if (value != null || leaf.covering[i] == r) {
                    leaf.covering[i] = value;
                }
            }
        }

        private Leaf addLeaf(long key) {
            Leaf[] l = leaves;
            Leaf leaf = new Leaf(key);
            Leaf[] next = Arrays.copyOf(l, l.length + 1);
            int i = l.length;
            while (i > 0 && next[i - 1].key > key) {
                next[i] = next[i - 1];
                i--;
            }
            next[i] = leaf;
            leaves = next;
            return leaf;
        }

        /** The slabs carved now (a snapshot per run). */
        List<Slab> slabs() {
            List<Slab> all = new ArrayList<>();
            for (Run r : runs) {
                for (Slab s : r.slabs) {
                    if (s != null) {
                        all.add(s);
                    }
                }
            }
            return all;
        }
    }
}
