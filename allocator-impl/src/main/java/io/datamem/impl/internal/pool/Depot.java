package io.datamem.impl.internal.pool;

import io.datamem.DataMemAllocator;
import io.datamem.MemoryTraits;
import io.datamem.impl.pool.PoolingAllocator;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * What the threads of a pool share: per class, the wholly free slabs no heap owns and the runs
 * with uncarved slots ({@link Bin}, under its own lock), and the index of every run. Slabs are
 * carved here from runs the upstream allocates, come back here when a heap lets them go, and are
 * released to their runs, and runs to the upstream, when the depot keeps more than it may.
 *
 * <p>A slab in the depot is owned by {@link #owner}, a heap that never allocates: a free that
 * raced with the slab's move here lands on that heap's remote stack and {@link #collect()} reports
 * it.
 */
final class Depot {

    private static final System.Logger LOG = System.getLogger(PoolingAllocator.class.getName());

    /** Wholly free slabs of one class shared by all threads, and its runs with free slots. */
    static final class Bin {
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

    private final Object pool;            // for messages
    private final SizeClasses classes;
    private final DataMemAllocator upstream;
    private final long maxRetainedByteSize;
    final Bin[] bins;
    /** The owner of slabs in the depot: never allocates. */
    final Heap owner;
    /** Address -> run -> slab. */
    final RunMap index;
    private final Object indexLock = new Object();

    final LongAdder slabAllocations = new LongAdder();
    final LongAdder slabReleases = new LongAdder();
    final LongAdder racingDoubleFrees = new LongAdder();
    private final AtomicLong upstreamBytes = new AtomicLong();
    private final AtomicLong depotBytes = new AtomicLong();           // wholly free slabs in the depot

    /**
     * The depot of a pool.
     *
     * @param pool     the pool, named in messages
     * @param classes  its classes
     * @param upstream where runs come from
     * @param options  its options
     */
    Depot(Object pool, SizeClasses classes, DataMemAllocator upstream, PoolOptions options) {
        this.pool = pool;
        this.classes = classes;
        this.upstream = upstream;
        this.maxRetainedByteSize = options.maxRetainedByteSize();
        // Every run is longer than half the run target (or a slab alone, longer still): the index's
        // granule is at most that, so that a granule meets at most two runs.
        this.index = new RunMap(Long.numberOfTrailingZeros(Math.min(64L << 10,
                Long.highestOneBit(classes.runTarget) / 2)));
        int n = classes.classCount();
        this.bins = new Bin[n];
        for (int c = 0; c < n; c++) {
            bins[c] = new Bin();
        }
        this.owner = new Heap(null, n, 0);
    }

    /** Hands a wholly free slab to the depot, releasing free slabs beyond the retention cap. */
    void put(Slab s) {
        int c = s.classIndex;
        Bin d = bins[c];
        boolean over;
        boolean full;
        synchronized (d) {
            s.owner = owner;
            d.push(s);
            full = d.count > classes.depotCapacity[c];
        }
        over = depotBytes.addAndGet(classes.slabByteSizes[c]) > maxRetainedByteSize;
        if (over) {
            releaseFreeSlabs(c);
        } else if (full) {
            releaseFreeSlabs(c, classes.depotCapacity[c]);   // the oldest go back: other sizes can use the memory
        }
    }

    /** A wholly free slab of the class from the depot, now owned by {@code heap}; null if it has none. */
    Slab take(Heap heap, int c) {
        Bin d = bins[c];
        synchronized (d) {
            Slab s = d.popFree();
            if (s != null) {
                depotBytes.addAndGet(-classes.slabByteSizes[c]);
                s.owner = heap;
            }
            return s;
        }
    }

    /** A new slab of the class, now owned by {@code heap}; null if the upstream has no memory. */
    Slab grow(Heap heap, int c) {
        synchronized (bins[c]) {
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
    void collect() {
        if (owner.remoteHead == null) {
            return;
        }
        owner.forEachRemote(s -> {
            Bin d = bins[s.classIndex];
            synchronized (d) {
                Heap o = s.owner;
                if (o != owner) {
                    Heap.push(o, s);
                } else {
                    long r = (long) Slab.REMOTE.getAndSet(s, 0L);
                    if (r != 0) {
                        reportRacingDoubleFrees(s, r);
                    }
                }
            }
        });
    }

    /** Counts and logs blocks two threads freed at the same moment; the second free was ignored. */
    void reportRacingDoubleFrees(Slab s, long racing) {
        racingDoubleFrees.add(Long.bitCount(racing));
        StringBuilder where = new StringBuilder();
        for (long r = racing; r != 0; r &= r - 1) {
            where.append(where.isEmpty() ? "" : ", ").append("0x")
                    .append(Long.toHexString(s.base + Long.numberOfTrailingZeros(r) * s.blockSize));
        }
        LOG.log(System.Logger.Level.ERROR, pool + ": double free of " + where + " (" + s.blockSize + "-byte class):"
                + " two frees of the same block raced, from different threads; the second was ignored");
    }

    /**
     * Carves a new slab of the class from a run with a free slot, or from a new run, and enters it
     * in the index; wholly free. Caller holds the bin's lock. Null if the upstream has no memory.
     */
    private Slab grow(int c) {
        long size = classes.classSizes[c];
        int blocks = classes.blocksPerSlab[c];
        long slabBytes = classes.slabByteSizes[c];
        Bin d = bins[c];
        Run run = d.partialRuns.isEmpty() ? null : d.partialRuns.getLast();
        if (run == null) {
            int slots = classes.slabsPerRun[c];
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
            run = new Run(base.address(), slabBytes, slots, c, runTraits(base, classes.classSizes[c]));
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
        Slab slab = new Slab(run.base + slot * slabBytes, size, blocks, c, c == 0 ? 0 : classes.classSizes[c - 1] + 1);
        slab.run = run;
        slab.slot = slot;
        run.slabs[slot] = slab;   // reaches other threads with the blocks it hands out
        slabAllocations.increment();
        return slab;
    }

    /**
     * The traits of every block of a new run: the upstream's for the run, with the alignment its
     * blocks keep (their class's, at most the upstream's). Asked once per run, since they do not
     * change while the run lives: an array asks for its block's traits on creation.
     */
    private MemoryTraits runTraits(MemorySegment runBase, long classByteSize) {
        MemoryTraits run = upstream.traitsOf(runBase);
        long classAlignment = classes.alignmentOf(classByteSize);
        return run.byteAlignment() <= classAlignment ? run : run.withByteAlignment(classAlignment);
    }

    /**
     * Releases every slab of a class in the depot to its run, and returns to the upstream every run
     * left with no slab.
     */
    void releaseFreeSlabs(int c) {
        releaseFreeSlabs(c, 0);
    }

    /** Releases the oldest free slabs of a class in the depot, keeping the newest {@code keepSlabs}. */
    private void releaseFreeSlabs(int c, int keepSlabs) {
        Bin d = bins[c];
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
        depotBytes.addAndGet(-released.size() * classes.slabByteSizes[c]);
        slabReleases.add(released.size());
        for (Run run : emptied) {
            upstreamBytes.addAndGet(-run.byteSize());
            upstream.free(MemorySegment.ofAddress(run.base), run.byteSize());
        }
    }

    /**
     * Takes the lock of every bin, in class order, the locks under which slabs are carved and
     * released, and reads the pool under them.
     */
    <T> T underAllLocks(Supplier<T> read) {
        return underLocks(0, read);
    }

    private <T> T underLocks(int c, Supplier<T> read) {
        if (c == bins.length) {
            return read.get();
        }
        synchronized (bins[c]) {
            return underLocks(c + 1, read);
        }
    }
}
