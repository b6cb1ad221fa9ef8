package io.datamem.impl;

import io.datamem.DataMemAllocator;
import io.datamem.MemoryTraits;
import io.datamem.internal.Checks;
import io.datamem.spi.DeviceInterchange;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * A pool in front of any allocator: blocks of a size class are carved from <em>slabs</em> the
 * upstream allocates, kept in per-thread caches and a shared depot when freed, and handed out again
 * without calling the upstream. It pays most where the upstream is slow: page-aligned, huge-page or
 * pinned memory, where one upstream allocation can take microseconds to milliseconds.
 *
 * <h2>Size classes and alignment</h2>
 * Requests up to {@link Options#maxPooledByteSize()} are rounded up to a size class. Classes start
 * at 16 bytes whatever the upstream's alignment {@code A}: below {@code A} they are the powers of
 * two (16, 32, ... {@code A/2}), each block aligned to its class size; from {@code A} up they are
 * multiples of {@code A} up to four times it, then four classes per power of two (at most 25%
 * rounding waste), each a multiple of {@code A}. So a block of {@code n} bytes is aligned to
 * {@code min(A, n rounded up to a power of two, at least 16)} ({@link #byteAlignmentOf(long)}), and
 * the pool's {@link #traits() traits} state what every block gets: {@code min(A, 16)}. Larger
 * requests go straight to the upstream, with its alignment. Memory kind and device are the
 * upstream's.
 *
 * <h2>Slabs and runs</h2>
 * A slab holds up to 64 blocks of one class ({@link Options#slabByteSize()} divided by the class
 * size). Slabs of a class are carved from <em>runs</em>: one upstream allocation of at least the
 * slab size option, the upstream's alignment and its page size, so that small blocks share one
 * upstream allocation even when each upstream allocation takes a whole huge page. A run goes back
 * to the upstream when all its slabs are free and released.
 *
 * <h2>Safety</h2>
 * Every {@code free} and {@code realloc} is checked against the pool's own records, not against
 * bytes in the block: a pointer the pool did not hand out, a size of another class than the block
 * was allocated with, an interior pointer, and a second free of the same block each throw
 * {@link IllegalArgumentException} naming the pool, the address and the sizes, and leave the pool
 * unchanged. Blocks the upstream allocated directly (above {@link Options#maxPooledByteSize()}) are
 * recorded in a table of live blocks too, so a foreign pointer, a double free or a wrong size of
 * one is refused the same way and never reaches the upstream. A block is never handed out twice.
 *
 * <h2>Threads</h2>
 * Platform threads get a cache per size class; a block freed by any thread goes to that thread's
 * cache. Virtual threads use the depot directly (a cache per virtual thread would strand memory).
 * {@link #trim()} returns to the upstream every slab whose blocks are all free and in the depot,
 * after flushing the calling thread's cache and the caches of threads that have ended; other
 * threads flush their caches at their next operation. Freed blocks held beyond
 * {@link Options#maxRetainedByteSize()} are returned as soon as whole slabs are free.
 * {@link #close()} trims and refuses further allocations.
 *
 * <p>Thread-safe.
 */
public final class PoolingAllocator implements DataMemAllocator, AutoCloseable {

    /** Most blocks in one slab: one bit each in a 64-bit occupancy word. */
    static final int MAX_BLOCKS_PER_SLAB = 64;
    /** Most slabs carved from one upstream allocation. */
    static final int MAX_SLABS_PER_RUN = 1 << 16;
    private static final long CACHE_BYTES_PER_CLASS = 1 << 20;
    private static final int MAX_CACHE_BLOCKS = 64;

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
    }

    /**
     * A snapshot of the pool's figures. Counts kept by thread caches are exact once the threads
     * that used the pool are quiescent.
     *
     * @param allocations            blocks handed out from the pool
     * @param frees                  blocks given back to the pool
     * @param slabAllocations        slabs requested from the upstream
     * @param slabReleases           slabs returned to the upstream
     * @param passThroughAllocations requests sent straight to the upstream (too large to pool)
     * @param failures               requests the upstream answered with NULL
     * @param upstreamByteSize       bytes held from the upstream in runs of slabs now
     * @param inUseByteSize          bytes of blocks handed out now (class sizes)
     * @param retainedByteSize       bytes of free blocks in the depot now
     * @param trims                  calls to {@link #trim()}
     */
    public record Statistics(long allocations, long frees, long slabAllocations, long slabReleases,
                             long passThroughAllocations, long failures, long upstreamByteSize,
                             long inUseByteSize, long retainedByteSize, long trims) {
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
    private final int[] blocksPerSlab;
    private final int[] slabsPerRun;
    private final int[] cacheCapacity;
    private final Depot[] depots;
    private final ThreadLocal<Cache> caches = new ThreadLocal<>();
    private final Set<Cache> allCaches = ConcurrentHashMap.newKeySet();
    private final Object indexLock = new Object();
    private final Object trimLock = new Object();
    private volatile SlabIndex index = SlabIndex.EMPTY;
    private volatile int flushEpoch;
    private volatile boolean closed;
    // Every live block the upstream allocated directly (requests above maxPooledByteSize, and calloc
    // of memory the host cannot zero): address -> size. A free or realloc outside the slabs must
    // name one of them, with its size, before it reaches the upstream.
    private final ConcurrentHashMap<Long, Long> passThroughBlocks = new ConcurrentHashMap<>();

    private final LongAdder directAllocations = new LongAdder();   // virtual threads, no cache
    private final LongAdder directFrees = new LongAdder();
    private final LongAdder slabAllocations = new LongAdder();
    private final LongAdder slabReleases = new LongAdder();
    private final LongAdder passThrough = new LongAdder();
    private final LongAdder failures = new LongAdder();
    private final LongAdder trims = new LongAdder();
    private final AtomicLong upstreamBytes = new AtomicLong();
    private final AtomicLong retainedBytes = new AtomicLong();
    private final LongAdder retiredCacheAllocations = new LongAdder();
    private final LongAdder retiredCacheFrees = new LongAdder();

    /**
     * A pool with the default options.
     *
     * @param upstream the allocator slabs come from
     * @throws NullPointerException if {@code upstream} is null
     */
    public PoolingAllocator(DataMemAllocator upstream) {
        this(upstream, Options.DEFAULTS);
    }

    /**
     * A pool.
     *
     * @param upstream the allocator slabs come from
     * @param options  sizes
     * @throws NullPointerException if an argument is null
     */
    public PoolingAllocator(DataMemAllocator upstream, Options options) {
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
        long runTarget = Math.max(options.slabByteSize(), Math.max(upstreamAlignment, upstreamTraits.pageSize()));
        int n = classSizes.length;
        this.blocksPerSlab = new int[n];
        this.slabsPerRun = new int[n];
        this.cacheCapacity = new int[n];
        this.depots = new Depot[n];
        for (int c = 0; c < n; c++) {
            long size = classSizes[c];
            blocksPerSlab[c] = Math.clamp(options.slabByteSize() / size, 1, MAX_BLOCKS_PER_SLAB);
            slabsPerRun[c] = Math.clamp(runTarget / (size * blocksPerSlab[c]), 1, MAX_SLABS_PER_RUN);
            cacheCapacity[c] = Math.clamp(CACHE_BYTES_PER_CLASS / size, 1, MAX_CACHE_BLOCKS);
            depots[c] = new Depot();
        }
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

    /**
     * The alignment every block of a request of this size has: the upstream's alignment, or less
     * for requests below it, {@code min(A, byteSize rounded up to a power of two, at least 16)}.
     * Never less than {@link #traits() traits()}{@code .byteAlignment()}.
     *
     * @param byteSize the size of a request
     * @return the alignment in bytes
     * @throws IllegalArgumentException if {@code byteSize} is negative or above
     *                                  {@link #MAX_BYTE_SIZE}
     */
    public long byteAlignmentOf(long byteSize) {
        Checks.byteSize("byteSize", byteSize);
        if (byteSize >= upstreamAlignment) {
            return upstreamAlignment;
        }
        return Math.min(upstreamAlignment, Long.highestOneBit(Math.max(16, byteSize) * 2 - 1));
    }

    /**
     * The allocator slabs come from.
     *
     * @return the upstream
     */
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

    /**
     * The size classes, ascending.
     *
     * @return a copy of the class sizes in bytes
     */
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
        if (c >= classSizes.length || classSizes[c] < byteSize || (c > 0 && classSizes[c - 1] >= byteSize)) {
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
        if (c < 0) {
            return passThroughMalloc(byteSize);
        }
        return take(c);
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
            return counted(upstream.calloc(count, elementByteSize), size);
        }
        MemorySegment p = take(c);
        if (p.address() != 0 && size > 0) {
            p.reinterpret(size).fill((byte) 0);
        }
        return p;
    }

    private MemorySegment passThroughMalloc(long byteSize) {
        return counted(upstream.malloc(byteSize), byteSize);
    }

    /** Counts a block the upstream allocated directly and records it as live. */
    private MemorySegment counted(MemorySegment p, long byteSize) {
        if (p.address() == 0) {
            failures.increment();
        } else {
            passThrough.increment();
            passThroughBlocks.put(p.address(), byteSize);
        }
        return p;
    }

    private MemorySegment take(int c) {
        Cache cache = cache();
        long address;
        Slab slab;
        if (cache != null) {
            if (cache.epoch != flushEpoch) {
                flush(cache);
            }
            int n = cache.count[c];
            if (n == 0) {
                n = refill(cache, c);
                if (n == 0) {
                    failures.increment();
                    return MemorySegment.NULL;
                }
            }
            n--;
            address = cache.addresses[c][n];
            slab = cache.slabs[c][n];
            cache.slabs[c][n] = null;
            cache.count[c] = n;
            cache.allocations++;
        } else {
            Depot d = depots[c];
            synchronized (d) {
                if (d.count == 0 && !grow(c)) {
                    failures.increment();
                    return MemorySegment.NULL;
                }
                int n = --d.count;
                address = d.addresses[n];
                slab = d.slabs[n];
                d.slabs[n] = null;
                slab.inDepot--;
            }
            retainedBytes.addAndGet(-classSizes[c]);
            directAllocations.increment();
        }
        slab.markUsed(address);
        return MemorySegment.ofAddress(address);
    }

    private Cache cache() {
        Cache cache = caches.get();
        if (cache == null) {
            Thread t = Thread.currentThread();
            if (t.isVirtual()) {
                return null;
            }
            cache = new Cache(t, classSizes.length, flushEpoch);
            caches.set(cache);
            allCaches.add(cache);
        }
        return cache;
    }

    /** Moves a batch from the depot (growing it from the upstream if empty) into a cache. */
    private int refill(Cache cache, int c) {
        Depot d = depots[c];
        int want = Math.max(1, cacheCapacity[c] / 2);
        long[] addresses = cache.addresses(c, cacheCapacity[c]);
        Slab[] slabs = cache.slabs[c];
        int moved;
        synchronized (d) {
            if (d.count == 0) {
                if (!grow(c)) {
                    return 0;
                }
                // A fresh slab goes to this cache whole when it fits: threads then flip the bits of
                // occupancy words of their own instead of fighting over one slab's cache line.
                want = Math.max(want, Math.min(blocksPerSlab[c], cacheCapacity[c]));
            }
            moved = Math.min(want, d.count);
            for (int i = 0; i < moved; i++) {
                int k = --d.count;
                addresses[i] = d.addresses[k];
                slabs[i] = d.slabs[k];
                d.slabs[k] = null;
                slabs[i].inDepot--;
            }
        }
        retainedBytes.addAndGet(-moved * classSizes[c]);
        cache.count[c] = moved;
        return moved;
    }

    /** The slab an address lies in, or null (for tests). */
    Slab slabOf(long address) {
        return index.find(address);
    }

    /**
     * Adds a new slab's blocks to the depot, carving it from a run of the class with a free slot,
     * or from a new run. Caller holds the depot's lock.
     */
    private boolean grow(int c) {
        long size = classSizes[c];
        int blocks = blocksPerSlab[c];
        long slabBytes = size * blocks;
        Depot d = depots[c];
        Run run = d.partialRuns.isEmpty() ? null : d.partialRuns.getLast();
        if (run == null) {
            int slots = slabsPerRun[c];
            MemorySegment base = upstream.malloc(slabBytes * slots);
            if (base.address() == 0 && slots > 1) {
                slots = 1;   // no room for a whole run: one slab alone
                base = upstream.malloc(slabBytes);
            }
            if (base.address() == 0) {
                return false;
            }
            run = new Run(base.address(), slabBytes, slots);
            upstreamBytes.addAndGet(run.byteSize());
            d.partialRuns.add(run);
        }
        int slot = run.take();
        if (run.full()) {
            d.partialRuns.remove(run);
        }
        Slab slab = new Slab(run.base + slot * slabBytes, size, blocks, c);
        slab.run = run;
        slab.slot = slot;
        synchronized (indexLock) {
            index = index.with(slab);
        }
        slabAllocations.increment();
        d.ensure(d.count + blocks);
        // Highest address first, so that blocks come out of the stack in address order.
        for (int i = blocks - 1; i >= 0; i--) {
            d.addresses[d.count] = slab.base + i * size;
            d.slabs[d.count++] = slab;
        }
        slab.inDepot = blocks;
        retainedBytes.addAndGet(slabBytes);
        return true;
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
        Cache cache = caches.get();
        Slab slab = find(address, cache);
        if (slab == null) {
            freeUnpooled(ptr, byteSize);
            return;
        }
        int block = check(slab, address, byteSize, "free");
        slab.markFree(block, address, byteSize);
        give(cache, slab, address);
    }

    private void freeUnpooled(MemorySegment ptr, long byteSize) {
        long address = ptr.address();
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
            upstream.free(ptr, byteSize);
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
        int c = classOf(byteSize);
        if (c != slab.classIndex) {
            throw new IllegalArgumentException("pool: " + op + "(0x" + Long.toHexString(address) + ", " + byteSize
                    + "): the block belongs to the " + slab.blockSize + "-byte class (requests of "
                    + (slab.classIndex == 0 ? 0 : classSizes[slab.classIndex - 1] + 1) + " to " + slab.blockSize
                    + " bytes) (expected: the size it was allocated with)");
        }
        int block = slab.index(address);
        long into = address - slab.base - block * slab.blockSize;
        if (into != 0) {
            throw new IllegalArgumentException("pool: " + op + "(0x" + Long.toHexString(address) + ", " + byteSize
                    + "): an interior pointer, " + into + " bytes into a block (expected: the block's start)");
        }
        return block;
    }

    private IllegalArgumentException wrongSize(long address, long allocated, long given, String op) {
        return new IllegalArgumentException(this + ": " + op + "(0x" + Long.toHexString(address) + ", " + given
                + "): the block was allocated with " + allocated + " bytes (expected: that size)");
    }

    private void give(Cache cache, Slab slab, long address) {
        int c = slab.classIndex;
        if (cache != null && !closed) {
            if (cache.epoch != flushEpoch) {
                flush(cache);
            }
            int n = cache.count[c];
            int capacity = cacheCapacity[c];
            if (n == capacity) {
                spill(cache, c, capacity / 2 + (capacity == 1 ? 1 : 0));
                n = cache.count[c];
            }
            cache.addresses(c, capacity)[n] = address;
            cache.slabs[c][n] = slab;
            cache.count[c] = n + 1;
            cache.frees++;
            return;
        }
        Depot d = depots[c];
        synchronized (d) {
            d.push(address, slab);
        }
        retainedBytes.addAndGet(classSizes[c]);
        directFrees.increment();
        releaseIfOverCap(c);
    }

    /** Moves the oldest {@code n} blocks of a class from a cache to the depot. */
    private void spill(Cache cache, int c, int n) {
        Depot d = depots[c];
        long[] addresses = cache.addresses[c];
        Slab[] slabs = cache.slabs[c];
        synchronized (d) {
            for (int i = 0; i < n; i++) {
                d.push(addresses[i], slabs[i]);
            }
        }
        int left = cache.count[c] - n;
        System.arraycopy(addresses, n, addresses, 0, left);
        System.arraycopy(slabs, n, slabs, 0, left);
        Arrays.fill(slabs, left, left + n, null);
        cache.count[c] = left;
        retainedBytes.addAndGet(n * classSizes[c]);
        releaseIfOverCap(c);
    }

    private void flush(Cache cache) {
        cache.epoch = flushEpoch;
        for (int c = 0; c < classSizes.length; c++) {
            if (cache.count[c] > 0) {
                spill(cache, c, cache.count[c]);
            }
        }
    }

    private void releaseIfOverCap(int c) {
        if (retainedBytes.get() > options.maxRetainedByteSize()) {
            releaseFreeSlabs(c);
        }
    }

    /**
     * Releases every slab of a class whose blocks are all in the depot to its run, and returns to
     * the upstream every run left with no slab.
     */
    private void releaseFreeSlabs(int c) {
        Depot d = depots[c];
        List<Slab> released = new ArrayList<>();
        List<Run> emptied = new ArrayList<>();
        synchronized (d) {
            int keep = 0;
            for (int i = 0; i < d.count; i++) {
                Slab s = d.slabs[i];
                if (s.inDepot == s.blockCount && s.used == 0) {
                    if (!s.released) {
                        s.released = true;
                        released.add(s);
                    }
                } else {
                    d.addresses[keep] = d.addresses[i];
                    d.slabs[keep++] = s;
                }
            }
            Arrays.fill(d.slabs, keep, d.count, null);
            d.count = keep;
            if (released.isEmpty()) {
                return;
            }
            // Out of the index before a slot can be carved again (under this lock, by grow).
            synchronized (indexLock) {
                index = index.without(released);
            }
            for (Slab s : released) {
                Run run = s.run;
                boolean wasFull = run.full();
                run.release(s.slot);
                if (run.empty()) {
                    d.partialRuns.remove(run);
                    emptied.add(run);
                } else if (wasFull) {
                    d.partialRuns.add(run);
                }
            }
        }
        for (Slab s : released) {
            retainedBytes.addAndGet(-s.blockSize * s.blockCount);
            slabReleases.increment();
        }
        for (Run run : emptied) {
            upstreamBytes.addAndGet(-run.byteSize());
            upstream.free(MemorySegment.ofAddress(run.base), run.byteSize());
        }
    }

    private Slab find(long address, Cache cache) {
        if (cache != null) {
            Slab last = cache.lastSlab;
            if (last != null && address >= last.base && address < last.end && !last.released) {
                return last;
            }
        }
        Slab s = index.find(address);
        if (cache != null && s != null) {
            cache.lastSlab = s;
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
        Slab slab = find(address, caches.get());
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
        if (!slab.isUsed(block)) {
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
        Slab s = index.find(ptr.address());
        if (s == null) {
            return upstream.traitsOf(ptr);
        }
        // The run's traits, with the alignment its blocks keep (their class's, at most the upstream's).
        MemoryTraits run = upstream.traitsOf(MemorySegment.ofAddress(s.run.base));
        long classAlignment = byteAlignmentOf(s.blockSize);
        return run.byteAlignment() <= classAlignment ? run : run.withByteAlignment(classAlignment);
    }

    /**
     * Returns to the upstream every slab whose blocks are all free, after flushing the calling
     * thread's cache and the caches of threads that have ended. Other threads flush their caches at
     * their next allocation or free; a later trim then returns what they held.
     */
    public void trim() {
        synchronized (trimLock) {
            trimNow();
        }
    }

    private void trimNow() {
        trims.increment();
        flushEpoch++;
        Cache own = caches.get();
        if (own != null) {
            flush(own);
        }
        for (Cache c : allCaches) {
            if (!c.owner.isAlive() && allCaches.remove(c)) {   // claim it: flushed exactly once
                flush(c);
                retiredCacheAllocations.add(c.allocations);
                retiredCacheFrees.add(c.frees);
            }
        }
        for (int c = 0; c < classSizes.length; c++) {
            releaseFreeSlabs(c);
        }
    }

    /**
     * Trims and refuses further allocations (they throw {@link IllegalStateException}). Blocks still
     * allocated stay valid and may be freed; their slabs return to the upstream at the next
     * {@link #trim()} once free.
     */
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
     * The pool's figures now.
     *
     * @return a snapshot
     */
    public Statistics statistics() {
        long allocations = directAllocations.sum() + retiredCacheAllocations.sum();
        long frees = directFrees.sum() + retiredCacheFrees.sum();
        for (Cache c : allCaches) {
            allocations += c.allocations;
            frees += c.frees;
        }
        return new Statistics(allocations, frees, slabAllocations.sum(), slabReleases.sum(), passThrough.sum(),
                failures.sum(), upstreamBytes.get(), index.inUseBytes(), retainedBytes.get(), trims.sum());
    }

    @Override
    public String toString() {
        return "PoolingAllocator[" + upstream + "]";
    }

    // ---------------------------------------------------------------------------------------------

    /** One upstream allocation carved into blocks of a class. */
    static final class Slab {
        private static final java.lang.invoke.VarHandle USED;

        static {
            try {
                USED = java.lang.invoke.MethodHandles.lookup().findVarHandle(Slab.class, "used", long.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        final long base;
        final long end;
        final long blockSize;
        final int blockCount;
        final int classIndex;
        // Block index = ((address - base) >>> shift) * reciprocal >>> 32: blockSize is odd * 2^shift,
        // and for quotients below 64 * odd < 2^32 / odd the rounded-up reciprocal of odd is exact.
        private final int shift;
        private final long odd;
        private final long reciprocal;              // 0: divide (an odd part too large to be exact)
        volatile long used;                         // bit i: block i is handed out (USED)
        int inDepot;                                // guarded by the class's depot
        volatile boolean released;                  // written under the class's depot lock
        Run run;                                    // set before the slab is published
        int slot;

        Slab(long base, long blockSize, int blockCount, int classIndex) {
            this.base = base;
            this.blockSize = blockSize;
            this.blockCount = blockCount;
            this.classIndex = classIndex;
            this.end = base + blockSize * blockCount;
            this.shift = Long.numberOfTrailingZeros(blockSize);
            this.odd = blockSize >>> shift;
            this.reciprocal = odd < (1 << 13) ? ((1L << 32) + odd - 1) / odd : 0;
        }

        /** The index of the block an address lies in ({@code base <= address < end}). */
        int index(long address) {
            long x = (address - base) >>> shift;
            return (int) (reciprocal != 0 ? (x * reciprocal) >>> 32 : x / odd);
        }

        void markUsed(long address) {
            long bit = 1L << index(address);
            long previous = (long) USED.getAndBitwiseOr(this, bit);
            if ((previous & bit) != 0) {
                throw new IllegalStateException("pool corrupted: block 0x" + Long.toHexString(address)
                        + " handed out while in use");
            }
        }

        void markFree(int block, long address, long byteSize) {
            long bit = 1L << block;
            long previous = (long) USED.getAndBitwiseAnd(this, ~bit);
            if ((previous & bit) == 0) {
                throw new IllegalArgumentException("pool: free(0x" + Long.toHexString(address) + ", " + byteSize
                        + "): double free, the block is already free (expected: a live block)");
            }
        }

        boolean isUsed(int block) {
            return (used & (1L << block)) != 0;
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

        Run(long base, long slabBytes, int slots) {
            this.base = base;
            this.slabBytes = slabBytes;
            this.slots = slots;
            this.used = new java.util.BitSet(slots);
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

    /** Free blocks of one class shared by all threads, and its runs with free slots. */
    static final class Depot {
        final List<Run> partialRuns = new ArrayList<>();
        long[] addresses = new long[16];
        Slab[] slabs = new Slab[16];
        int count;

        void ensure(int capacity) {
            if (capacity > addresses.length) {
                int n = Math.max(capacity, addresses.length * 2);
                addresses = Arrays.copyOf(addresses, n);
                slabs = Arrays.copyOf(slabs, n);
            }
        }

        void push(long address, Slab slab) {
            ensure(count + 1);
            addresses[count] = address;
            slabs[count++] = slab;
            slab.inDepot++;
        }
    }

    /** A platform thread's free blocks, per class. Touched only by its thread (or after it ended). */
    static final class Cache {
        final Thread owner;
        final long[][] addresses;
        final Slab[][] slabs;
        final int[] count;
        int epoch;
        Slab lastSlab;
        long allocations;
        long frees;

        Cache(Thread owner, int classes, int epoch) {
            this.owner = owner;
            this.addresses = new long[classes][];
            this.slabs = new Slab[classes][];
            this.count = new int[classes];
            this.epoch = epoch;
        }

        long[] addresses(int c, int capacity) {
            long[] a = addresses[c];
            if (a == null) {
                a = new long[capacity];
                addresses[c] = a;
                slabs[c] = new Slab[capacity];
            }
            return a;
        }
    }

    /** Slabs sorted by base address, replaced as a whole when slabs come and go. */
    static final class SlabIndex {
        static final SlabIndex EMPTY = new SlabIndex(new long[0], new Slab[0]);

        final long[] bases;
        final Slab[] slabs;

        SlabIndex(long[] bases, Slab[] slabs) {
            this.bases = bases;
            this.slabs = slabs;
        }

        Slab find(long address) {
            int i = Arrays.binarySearch(bases, address);
            if (i < 0) {
                i = -i - 2;
            }
            if (i < 0) {
                return null;
            }
            Slab s = slabs[i];
            return address < s.end ? s : null;
        }

        SlabIndex with(Slab slab) {
            int i = -Arrays.binarySearch(bases, slab.base) - 1;
            long[] b = new long[bases.length + 1];
            Slab[] s = new Slab[slabs.length + 1];
            System.arraycopy(bases, 0, b, 0, i);
            System.arraycopy(slabs, 0, s, 0, i);
            b[i] = slab.base;
            s[i] = slab;
            System.arraycopy(bases, i, b, i + 1, bases.length - i);
            System.arraycopy(slabs, i, s, i + 1, slabs.length - i);
            return new SlabIndex(b, s);
        }

        SlabIndex without(List<Slab> gone) {
            Set<Slab> g = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
            g.addAll(gone);
            int n = 0;
            long[] b = new long[bases.length];
            Slab[] s = new Slab[slabs.length];
            for (int i = 0; i < slabs.length; i++) {
                if (!g.contains(slabs[i])) {
                    b[n] = bases[i];
                    s[n++] = slabs[i];
                }
            }
            return new SlabIndex(Arrays.copyOf(b, n), Arrays.copyOf(s, n));
        }

        long inUseBytes() {
            long bytes = 0;
            for (Slab s : slabs) {
                bytes += Long.bitCount(s.used) * s.blockSize;
            }
            return bytes;
        }
    }
}
