package io.datamem.array;

import io.datamem.DataMemHandler;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What one thread keeps for the arrays it creates, made on its first array:
 * <ul>
 *   <li>the registry that keeps its open arrays' phantom references reachable (see
 *       {@link #register});</li>
 *   <li>the blocks other threads closed (or the reaper found leaked) while this thread, through its
 *       home segment, might still be inside an access to them: this thread frees them itself, the
 *       next time it creates or closes an array ({@link #drain}), outside any access.</li>
 * </ul>
 * The reaper thread frees the leaked arrays' blocks, and takes over the homes of ended threads.
 */
final class ThreadHome {

    private static final System.Logger LOG = System.getLogger("io.datamem.array.NDArray");

    private static final ThreadLocal<ThreadHome> MINE = ThreadLocal.withInitial(ThreadHome::new);
    /** Every home whose thread may still have open arrays or retired blocks, by thread. */
    private static final ConcurrentHashMap<Thread, ThreadHome> BY_THREAD = new ConcurrentHashMap<>();
    /** Blocks retired to all homes and not yet freed. */
    private static final AtomicInteger RETIRED_COUNT = new AtomicInteger();

    /**
     * How often {@link #register} copies {@link #slots} into a young array (a power of 2): an old
     * array's reference stores run the collector's whole card-marking barrier, and on 2 threads the
     * card-table bytes of both threads' arrays share cache lines (the written-array lifecycle took
     * 1.2x to 3x its 1-thread time by where the last collection had put them).
     */
    static final int REFRESH_ADDS = 1 << 12;

    final Thread thread;
    /** The innermost open workspace scope of this thread, or null. */
    Workspace.Scope scope;
    /** Set by a workspace's malloc to the scope the block belongs to; read and cleared by NDArray's creation. */
    Workspace.Scope pendingScope;
    /** This thread's workspace regions, one per workspace it allocated from (usually one). */
    private WorkspaceHeap[] heaps = new WorkspaceHeap[0];
    private final ConcurrentLinkedQueue<Retired> retired = new ConcurrentLinkedQueue<>();

    // The registry: written by the owning thread only (the reaper once it ended).
    private ArrayMemory[] slots = new ArrayMemory[8];
    private int count;
    private int adds;

    /** A block that goes back once this home's thread is outside any access (see {@link #drain}). */
    record Retired(DataMemHandler handler, long address, long byteSize, Arena confined) {
    }

    private ThreadHome() {
        this.thread = Thread.currentThread();
        BY_THREAD.put(thread, this);
        Reaper.ensureStarted();
    }

    /** The calling thread's home, made now if it has none. */
    static ThreadHome mine() {
        return MINE.get();
    }

    /** This thread's region of {@code workspace}, made (and its first region reserved) on first use. */
    WorkspaceHeap heap(Workspace workspace) {
        for (WorkspaceHeap h : heaps) {
            if (h.workspace == workspace) {
                return h;
            }
        }
        WorkspaceHeap h = workspace.newHeap(this);
        heaps = Arrays.copyOf(heaps, heaps.length + 1);
        heaps[heaps.length - 1] = h;
        return h;
    }

    /** This thread's region of {@code workspace}, or null if it has none (none is made). */
    WorkspaceHeap heapIfAny(Workspace workspace) {
        for (WorkspaceHeap h : heaps) {
            if (h.workspace == workspace) {
                return h;
            }
        }
        return null;
    }

    /** Forgets this thread's region of {@code workspace} (given back), if it has one; false if a scope of it is open. */
    boolean dropHeap(Workspace workspace) {
        for (int i = 0; i < heaps.length; i++) {
            if (heaps[i].workspace == workspace) {
                if (heaps[i].inScope()) {
                    return false;
                }
                heaps[i].trim();
                WorkspaceHeap[] rest = new WorkspaceHeap[heaps.length - 1];
                System.arraycopy(heaps, 0, rest, 0, i);
                System.arraycopy(heaps, i + 1, rest, i, heaps.length - i - 1);
                heaps = rest;
                return true;
            }
        }
        return true;
    }

    /** The home of {@code t}, or null if it has none any more (it ended, and nothing waits for it). */
    static ThreadHome of(Thread t) {
        return BY_THREAD.get(t);
    }

    // ---------------------------------------------------------------------------------------------
    // Registry

    /**
     * Keeps an open owner's phantom reference reachable until it is done (a phantom reference that is
     * itself unreachable is never enqueued, and its leak would go unnoticed). A plain array store on
     * the owning thread, no lock: done entries are swept when the array is full, instead of being
     * removed one by one.
     */
    void register(ArrayMemory m) {
        if (count == slots.length) {
            sweep();
            if (count > slots.length / 2) {
                slots = Arrays.copyOf(slots, slots.length * 2);
            }
        } else if ((++adds & (REFRESH_ADDS - 1)) == 0) {
            slots = slots.clone();   // young again: see REFRESH_ADDS
        }
        slots[count++] = m;
    }

    /** Drops the entries that need no leak action any more. */
    private void sweep() {
        int kept = 0;
        ArrayMemory[] s = slots;
        for (int i = 0; i < count; i++) {
            if (!s[i].done()) {
                s[kept++] = s[i];
            }
        }
        Arrays.fill(s, kept, count, null);
        count = kept;
    }

    /** How many open owners this thread's registry holds (tests). */
    int size() {
        int n = 0;
        for (int i = 0; i < count; i++) {
            if (!slots[i].done()) {
                n++;
            }
        }
        return n;
    }

    /** How many open owners all registries hold (tests; racy for live threads). */
    static int registered() {
        int n = 0;
        for (ThreadHome h : BY_THREAD.values()) {
            ArrayMemory[] s = h.slots;
            for (int i = 0; i < Math.min(h.count, s.length); i++) {
                if (s[i] != null && !s[i].done()) {
                    n++;
                }
            }
        }
        return n;
    }

    // ---------------------------------------------------------------------------------------------
    // Retired blocks

    /**
     * Hands a block to this home's thread to free outside any access; frees it now if that thread
     * cannot be inside one ({@link #quiescent}) and no segment of user code confined to it reaches
     * the block (which only that thread can close).
     */
    void retire(Retired r) {
        if (r.confined() == null && quiescent()) {
            release(r, false);
            return;
        }
        retired.add(r);
        RETIRED_COUNT.incrementAndGet();
        if (!thread.isAlive()) {   // ended meanwhile: nobody would drain it
            drainEnded();
        }
    }

    /**
     * Frees what other threads retired to this thread, on this thread (outside any access of its
     * own). Costs one read when nothing is retired.
     */
    void drain() {
        if (retired.isEmpty()) {
            return;
        }
        for (Retired r; (r = retired.poll()) != null; ) {
            RETIRED_COUNT.decrementAndGet();
            release(r, true);
        }
    }

    /**
     * Whether this home's thread cannot be inside an access to its arrays' memory: it has ended, or
     * it is blocked, waiting or sleeping, so inside a call; code resuming after a call reads the
     * array's memory state again (the call may have changed it) and finds it closed. An access of an
     * array that is already unreachable (the leak action) cannot resume at all: the frames that
     * could still use its memory are running, not in a call.
     */
    boolean quiescent() {
        return switch (thread.getState()) {
            case BLOCKED, WAITING, TIMED_WAITING, TERMINATED -> true;
            default -> false;
        };
    }

    /** Frees, from another thread, what waits for this home's thread while it is quiescent. */
    private void releaseIfQuiescent() {
        if (retired.isEmpty() || !quiescent()) {
            return;
        }
        for (Retired r : retired) {
            if (r.confined() == null && retired.remove(r)) {
                RETIRED_COUNT.decrementAndGet();
                release(r, false);
            }
        }
    }

    /** How many retired blocks wait, over all threads. */
    static int retiredCount() {
        return RETIRED_COUNT.get();
    }

    private void drainEnded() {
        for (Retired r; (r = retired.poll()) != null; ) {
            RETIRED_COUNT.decrementAndGet();
            release(r, false);
        }
    }

    // On the owning thread, outside any access (onOwner), or after it ended.
    private static void release(Retired r, boolean onOwner) {
        if (onOwner && r.confined() != null && r.confined().scope().isAlive()) {
            r.confined().close();
        }
        r.handler().allocator().free(MemorySegment.ofAddress(r.address()), r.byteSize());
    }

    /** On the reaper: frees what waits for quiescent threads. */
    private static void releaseQuiescent() {
        if (RETIRED_COUNT.get() == 0) {
            return;
        }
        for (ThreadHome h : BY_THREAD.values()) {
            if (h.thread.isAlive()) {
                h.releaseIfQuiescent();
            }
        }
    }

    /** On the reaper: frees what waits for ended threads, sweeps their registries, forgets empty ones. */
    private static void sweepEnded() {
        for (ThreadHome h : BY_THREAD.values()) {
            if (!h.thread.isAlive()) {
                h.drainEnded();
                h.sweep();
                for (WorkspaceHeap w : h.heaps) {
                    w.trim();   // nothing can be in a scope of an ended thread
                }
                h.heaps = new WorkspaceHeap[0];
                if (h.count == 0 && h.retired.isEmpty()) {
                    BY_THREAD.remove(h.thread);
                }
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // The reaper

    /** The thread that runs the leak action of leaked owners, and sweeps the homes of ended threads. */
    static final class Reaper {
        static final ReferenceQueue<NDArray> QUEUE = new ReferenceQueue<>();
        private static final long SWEEP_MILLIS = 1000;
        /** How often the reaper looks for retired blocks of quiescent threads. */
        private static final long QUIESCENT_MILLIS = 100;
        private static volatile boolean started;

        private Reaper() {
        }

        static void ensureStarted() {
            if (!started) {
                synchronized (Reaper.class) {
                    if (!started) {
                        Thread.ofPlatform().name("datamem-array-reaper").daemon(true).start(Reaper::loop);
                        started = true;
                    }
                }
            }
        }

        private static void loop() {
            long lastSweep = System.nanoTime();
            for (;;) {
                try {
                    Reference<? extends NDArray> ref = QUEUE.remove(QUIESCENT_MILLIS);
                    if (ref instanceof ArrayMemory m) {
                        m.leaked();
                    }
                    releaseQuiescent();
                    if (System.nanoTime() - lastSweep >= SWEEP_MILLIS * 1_000_000L) {
                        sweepEnded();
                        lastSweep = System.nanoTime();
                    }
                } catch (InterruptedException e) {
                    // a daemon: keep going
                } catch (RuntimeException | Error e) {
                    LOG.log(System.Logger.Level.ERROR, "datamem: freeing a leaked array failed", e);
                }
            }
        }
    }
}
