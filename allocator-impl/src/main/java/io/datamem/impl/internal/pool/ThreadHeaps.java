package io.datamem.impl.internal.pool;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The heaps of a pool's threads and their slow path: a heap for each platform thread that
 * allocates (found through {@link #slots} and {@link #local}, which the pool's fast path reads
 * itself), one heap the virtual threads share under its lock, the change of a heap's current slab,
 * the collection of the frees other threads made, and the return of wholly free slabs to the
 * {@link Depot}: at a trim, and from the heaps of threads that have ended.
 */
final class ThreadHeaps {

    /** The size of the table that finds a thread's heap by its id before the thread-local does. */
    static final int SLOTS = 64;
    /** How many slab growths pass between two collections of the heaps of ended threads. */
    private static final int REAP_EVERY_GROWTHS = 16;

    private final SizeClasses classes;
    private final Depot depot;
    private final long maxRetainedByteSize;
    /** A platform thread's heap. */
    final ThreadLocal<Heap> local = new ThreadLocal<>();
    /** Heaps by thread id modulo {@link #SLOTS}: a hit spares the thread-local's lookup. */
    final Heap[] slots = new Heap[SLOTS];
    private final Set<Heap> all = ConcurrentHashMap.newKeySet();
    /** Virtual threads' heap, used under its own lock. */
    final Heap shared;
    private final Object trimLock = new Object();
    private volatile int flushEpoch;
    private volatile boolean closed;

    final LongAdder failures = new LongAdder();
    final LongAdder trims = new LongAdder();
    private final LongAdder endedHeapAllocations = new LongAdder();
    private final AtomicInteger growths = new AtomicInteger();

    ThreadHeaps(SizeClasses classes, Depot depot, PoolOptions options) {
        this.classes = classes;
        this.depot = depot;
        this.maxRetainedByteSize = options.maxRetainedByteSize();
        this.shared = new Heap(null, classes.classCount(), 0);
    }

    /** From now on no heap keeps spare slabs: they go to the depot, and a trim returns them. */
    void close() {
        closed = true;
    }

    /** The address of a block of class {@code c} (0 if none) after a change of slab, or for a thread without a heap yet. */
    long takeSlow(Heap heap, int c) {
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
            long address = heap.take(c);
            if (address != 0) {
                return address;
            }
            if (nextSlab(heap, c) == null) {
                failures.increment();
                return 0;
            }
        }
    }

    /** This platform thread's new heap, or null on a virtual thread. */
    private Heap newHeap() {
        Thread t = Thread.currentThread();
        if (t.isVirtual()) {
            return null;
        }
        Heap heap = new Heap(t, classes.classCount(), flushEpoch);
        local.set(heap);
        slots[(int) t.threadId() & (SLOTS - 1)] = heap;
        all.add(heap);
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
    void settle(Heap heap, Slab s) {
        long f = s.free;
        int c = s.classIndex;
        if (f == s.mask && s.remote == 0) {
            heap.unlink(s);
            if (heap.spareCount[c] < classes.spareCapacity[c] && heap.thread != null && !closed
                    && maxRetainedByteSize >= classes.slabByteSizes[c]) {
                heap.pushSpare(s);
            } else {
                heap.ownedSlabs--;
                depot.put(s);
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
        heap.forEachRemote(s -> {
            Heap owner = s.owner;
            if (owner != heap) {
                Heap.push(owner, s);
            } else {
                long r = (long) Slab.REMOTE.getAndSet(s, 0L);
                long f = s.free;
                long racing = r & f;
                if (racing != 0) {
                    depot.reportRacingDoubleFrees(s, racing);
                }
                Slab.FREE.setRelease(s, f | r);
                if (s != heap.current[s.classIndex] && !s.spare) {
                    settle(heap, s);
                }
            }
        });
    }

    /** A wholly free slab of the class from the depot, or a new one; now owned by {@code heap}. */
    private Slab fromDepot(Heap heap, int c) {
        depot.collect();
        Slab s = depot.take(heap, c);
        if (s != null) {
            return s;
        }
        // Not on the virtual threads' heap: its caller holds that heap's lock, which a trim takes
        // under the trim lock (the other order would deadlock; platform threads and trims reap).
        if (growths.incrementAndGet() % REAP_EVERY_GROWTHS == 0 && heap != shared) {
            synchronized (trimLock) {
                reap();
            }
            s = depot.take(heap, c);
            if (s != null) {
                return s;
            }
        }
        return depot.grow(heap, c);
    }

    /**
     * Gives every wholly free slab a heap holds (its spares, and current slabs with no block out) to
     * the depot, after collecting its remote frees. Called by the owner, or under the trim lock for
     * an ended thread's heap, or under the shared heap's lock.
     */
    private void giveBackFreeSlabs(Heap heap, boolean all) {
        heap.epoch = flushEpoch;
        collectRemote(heap);
        for (int c = 0; c < classes.classCount(); c++) {
            while (heap.spareCount[c] > 0) {
                heap.ownedSlabs--;
                depot.put(heap.popSpare(c));
            }
            Slab current = heap.current[c];
            if (current != null && current.free == current.mask && current.remote == 0) {
                heap.current[c] = null;
                heap.ownedSlabs--;
                depot.put(current);
            }
            if (all) {
                for (Slab s = heap.available[c]; s != null; ) {
                    Slab next = s.nextAvailable;
                    if (s.free == s.mask && s.remote == 0) {
                        heap.unlink(s);
                        heap.ownedSlabs--;
                        depot.put(s);
                    }
                    s = next;
                }
            }
        }
    }

    /**
     * Gives the depot the wholly free slabs of the calling thread's heap ({@code own}, null if it
     * has none), of the virtual threads' heap and of the heaps of ended threads, then has the depot
     * return every free slab it holds. Other heaps give theirs at their next change of slab.
     */
    void trim(Heap own) {
        synchronized (trimLock) {
            trims.increment();
            flushEpoch++;
            if (own != null) {
                giveBackFreeSlabs(own, true);
            }
            synchronized (shared) {
                giveBackFreeSlabs(shared, true);
            }
            reap();
            depot.collect();
            for (int c = 0; c < classes.classCount(); c++) {
                depot.releaseFreeSlabs(c);
            }
        }
    }

    /**
     * Collects the heaps of threads that have ended: their wholly free slabs go to the depot, and a
     * heap with no slab left is forgotten (its counts kept). Caller holds the trim lock, which makes
     * it the owner of those heaps.
     */
    private void reap() {
        for (Heap h : all) {
            if (!h.thread.isAlive()) {
                giveBackFreeSlabs(h, true);
                if (h.ownedSlabs == 0 && all.remove(h)) {
                    int slot = (int) h.thread.threadId() & (SLOTS - 1);
                    if (slots[slot] == h) {
                        slots[slot] = null;
                    }
                    endedHeapAllocations.add(h.allocations);
                }
            }
        }
    }

    /**
     * The blocks every heap has handed out, read without a lock but the virtual threads' heap's
     * (taken before a depot lock elsewhere, never after).
     */
    long allocations() {
        long allocations = endedHeapAllocations.sum();
        for (Heap h : all) {
            allocations += h.allocations;
        }
        synchronized (shared) {
            allocations += shared.allocations;
        }
        return allocations;
    }

    /** The name of a slab's owner in a snapshot. */
    String ownerName(Heap h) {
        if (h == depot.owner) {
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
}
