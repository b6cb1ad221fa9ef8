package io.datamem.impl.internal.pool;

import io.datamem.DataMemAllocator;
import io.datamem.DeviceInterchange;
import io.datamem.MemoryTraits;
import io.datamem.internal.Checks;
import io.datamem.impl.pool.PoolingAllocator;
import io.datamem.impl.snapshot.LayerSnapshot;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * The pool behind {@code pool(UPSTREAM)}: what {@link PoolingAllocator} describes, built by
 * {@link PoolProvider} from a handler name ({@link PoolOptions#parse}), or
 * by tests with {@link #of(DataMemAllocator, PoolOptions)}.
 *
 * <p>This class holds the fast path ({@code malloc} and {@code free} from the calling thread's
 * current slab) and the checks of every call; the structures behind it each have their file:
 * <ul>
 *   <li>{@link SizeClasses}, which this class extends (the class of a request is found in this
 *       object's own fields): the classes and the shape of their slabs and runs;</li>
 *   <li>{@link Slab}, {@link Run} and {@link RunMap}: blocks, the upstream allocations slabs are
 *       carved from, and the index from an address to its slab;</li>
 *   <li>{@link Heap} and {@link ThreadHeaps}: a thread's slabs, and the slow path that changes a
 *       heap's slab, collects remote frees and returns free slabs;</li>
 *   <li>{@link Depot}: what the threads share, where slabs are carved and released;</li>
 *   <li>{@link LargeBlocks}: the blocks the upstream allocated directly;</li>
 *   <li>{@link PoolDescription}: the pool's section of a snapshot.</li>
 * </ul>
 * The fast path reads the heap table and the run index through this object's own fields, not
 * through the objects that maintain them, so that it makes no more loads than before the split.
 *
 * <p>Thread-safe.
 */
public final class PoolingAllocatorImpl extends SizeClasses implements PoolingAllocator {

    private final DataMemAllocator upstream;
    private final PoolOptions options;
    private final MemoryTraits traits;
    private final boolean hostAccessible;
    private final Depot depot;
    private final ThreadHeaps heaps;
    private final LargeBlocks largeBlocks;
    // The fast path's own references to what heaps and depot maintain (see the class comment).
    private final Heap[] heapSlots;
    private final ThreadLocal<Heap> threadHeap;
    private final RunMap index;           // address -> run -> slab
    private volatile boolean closed;

    /**
     * A pool with the default options.
     *
     * @param upstream the allocator slabs come from
     * @return a new pool
     * @throws NullPointerException if {@code upstream} is null
     */
    public static PoolingAllocatorImpl of(DataMemAllocator upstream) {
        return of(upstream, PoolOptions.DEFAULTS);
    }

    /**
     * A pool.
     *
     * @param upstream the allocator slabs come from
     * @param options  sizes
     * @return a new pool
     * @throws NullPointerException if an argument is null
     */
    public static PoolingAllocatorImpl of(DataMemAllocator upstream, PoolOptions options) {
        Objects.requireNonNull(upstream, "upstream");
        Objects.requireNonNull(options, "options");
        return new PoolingAllocatorImpl(upstream, upstream.traits(), options);
    }

    private PoolingAllocatorImpl(DataMemAllocator upstream, MemoryTraits upstreamTraits, PoolOptions options) {
        super(upstreamTraits.byteAlignment(), upstreamTraits.pageSize(), options);
        this.upstream = upstream;
        this.options = options;
        this.traits = upstreamTraits.withByteAlignment(Math.min(upstreamAlignment, 16));
        this.hostAccessible = traits.hostAccessible();
        this.depot = new Depot(this, this, upstream, options);
        this.heaps = new ThreadHeaps(this, depot, options);
        this.largeBlocks = new LargeBlocks(this, upstream);
        this.heapSlots = heaps.slots;
        this.threadHeap = heaps.local;
        this.index = depot.index;
    }

    @Override
    public long byteAlignmentOf(long byteSize) {
        Checks.byteSize("byteSize", byteSize);
        return alignmentOf(byteSize);
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
    public PoolOptions options() {
        return options;
    }

    @Override
    public long[] classByteSizes() {
        return classSizes.clone();
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
            return segment(largeBlocks.counted(upstream.calloc(count, elementByteSize), size));
        }
        long address = take(c);
        if (address != 0 && size > 0) {
            MemorySegment.ofAddress(address).reinterpret(size).fill((byte) 0);
        }
        return segment(address);
    }

    /** The address of a block the upstream allocated directly, or 0. */
    private long passThroughMalloc(long byteSize) {
        return largeBlocks.counted(upstream.malloc(byteSize), byteSize);
    }

    /** The address of a block of class {@code c}, or 0. */
    private long take(int c) {
        Heap heap = heap();
        if (heap != null) {
            long address = heap.take(c);
            if (address != 0) {
                return address;
            }
        }
        return heaps.takeSlow(heap, c);
    }

    /**
     * The calling thread's heap, or null if it has none: first from a small table indexed by the
     * thread's id (a hit costs three loads and a compare), then from the thread-local.
     */
    private Heap heap() {
        Thread t = Thread.currentThread();
        Heap h = heapSlots[(int) t.threadId() & (ThreadHeaps.SLOTS - 1)];
        if (h != null && h.thread == t) {
            return h;
        }
        h = threadHeap.get();
        if (h != null) {
            heapSlots[(int) t.threadId() & (ThreadHeaps.SLOTS - 1)] = h;   // Heap.thread is final: safe to publish so
        }
        return h;
    }

    /** The slab an address lies in, or null (for tests). */
    Slab slabOf(long address) {
        return index.find(address);
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
                largeBlocks.free(address, byteSize);   // the address, not the segment: see segment(long)
                return;
            }
            if (heap != null) {
                heap.lastSlab = s;
            }
            owner = s.owner;
        }
        long bit = 1L << s.check(address, byteSize, "free", this);
        if (owner == heap) {
            // The owner's free: plain reads, one release store, no counter (frees are counted as
            // allocations less the blocks live, see statistics()).
            long f = s.free;
            if (((f | s.remote) & bit) != 0) {
                throw doubleFree(address, byteSize);
            }
            long after = f | bit;
            Slab.FREE.setRelease(s, after);
            if ((f == 0 || after == s.mask) && s != heap.current[s.classIndex] && !s.spare) {
                heaps.settle(heap, s);
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
        if ((((long) Slab.FREE.getAcquire(s)) & bit) != 0) {
            throw doubleFree(address, byteSize);
        }
        long previous = (long) Slab.REMOTE.getAndBitwiseOr(s, bit);
        if ((previous & bit) != 0) {
            throw doubleFree(address, byteSize);
        }
        if (previous == 0) {
            Heap.push(s.owner, s);
        }
    }

    private IllegalArgumentException doubleFree(long address, long byteSize) {
        return new IllegalArgumentException(this + ": free(0x" + Long.toHexString(address) + ", " + byteSize
                + "): double free, the block is already free (expected: a live block)");
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
     * {@link PoolOptions#maxPooledByteSize()}, else by moving it.
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
            largeBlocks.checkLive(address, oldByteSize, newByteSize);
            if (classOf(oldByteSize) < 0 && classOf(newByteSize) < 0) {   // large stays large: the upstream resizes it
                checkOpen();
                return largeBlocks.realloc(ptr, oldByteSize, newByteSize);
            }
            return move(ptr, oldByteSize, newByteSize);
        }
        int block = slab.check(address, oldByteSize, "realloc", this);
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

    @Override
    public void trim() {
        heaps.trim(heap());
    }

    @Override
    public void close() {
        closed = true;
        heaps.close();
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
        long allocations = heaps.allocations();
        // Frees are not counted on the fast path: every block handed out is live or was freed, so
        // the blocks freed are these allocations less the blocks the classes say are in use.
        PoolDescription.Counters counters = new PoolDescription.Counters(allocations, largeBlocks.allocations.sum(),
                heaps.failures.sum() + largeBlocks.failures.sum(), depot.slabAllocations.sum(),
                depot.slabReleases.sum(), heaps.trims.sum(), depot.racingDoubleFrees.sum());
        return depot.underAllLocks(() -> PoolDescription.describe(counters, this, depot, heaps, largeBlocks));
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
}
