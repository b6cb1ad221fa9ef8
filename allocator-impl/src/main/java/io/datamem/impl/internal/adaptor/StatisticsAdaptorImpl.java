package io.datamem.impl.internal.adaptor;

import io.datamem.DataMemAllocator;
import io.datamem.impl.adaptor.StatisticsAdaptor;
import io.datamem.impl.snapshot.LayerSnapshot;

import io.datamem.spi.BlockReleased;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The {@link StatisticsAdaptor} of the handler term {@code stats}: per-thread cells of whole-life
 * figures and a stack of scopes. The guarantees are stated on
 * the interface.
 */
public final class StatisticsAdaptorImpl implements StatisticsAdaptor {

    /** The {@code type} of the figures: the snapshot section's name for this layer. */
    static final String TYPE = "StatisticsAdaptor";

    // A cell: one long[] per thread (or per virtual-thread stripe), padded at both ends so that two
    // cells never share a cache line.
    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(long[].class);
    private static final int PAD = 8;
    private static final int CELL_SLOTS = 64;
    private static final int BUCKET0 = PAD;                          // the histogram's buckets
    private static final int ALLOCATED = BUCKET0 + HISTOGRAM_BUCKETS; // bytes, realloc growth included
    private static final int FREED = ALLOCATED + 1;                   // bytes, realloc shrinkage included
    private static final int FREES = FREED + 1;
    private static final int REALLOCATIONS = FREES + 1;
    private static final int FAILURES = REALLOCATIONS + 1;
    private static final int SIZE_TOTAL = FAILURES + 1;              // sum of allocation sizes
    private static final int SIZE_MAX = SIZE_TOTAL + 1;              // largest allocation size
    private static final int SYNCED = SIZE_MAX + 1;                  // net bytes at the last peak sync
    private static final int BEGIN = SYNCED + 1;                     // updates begun on the cell
    private static final int END = BEGIN + 1;                        // updates ended on the cell
    private static final int CELL_LENGTH = END + 1 + PAD;
    private static final int OPTIMISTIC_READS = 4;                   // read-outs tried before holding updates
    private static final long PAUSE_NANOS = 20_000;                  // a held read-out's wait on a virtual thread
    private static final int STRIPES = Math.max(4, Integer.highestOneBit(
            Math.max(1, Runtime.getRuntime().availableProcessors()) * 2 - 1) * 2);

    private final DataMemAllocator upstream;
    private final ThreadLocal<Cell> own = ThreadLocal.withInitial(this::register);
    private final Cell[] cellSlots = new Cell[CELL_SLOTS];   // platform threads' cells by thread id
    private final AtomicLong peak = new AtomicLong();
    private final Object cellLock = new Object();
    private volatile Cells cells = new Cells(new long[CELL_LENGTH], new Cell[0]);
    private volatile Cell[] stripes;            // created on the first call from a virtual thread
    private int sweepAt = 16;                   // guarded by cellLock: registrations before the next sweep
    private final Object scopeLock = new Object();
    private volatile ScopeCounters top;              // innermost open scope; null when none
    private final Object holdLock = new Object();
    private volatile boolean holding;           // a read-out holds new updates back (see read())

    /**
     * Wraps an upstream allocator.
     *
     * @param upstream the allocator to count
     * @return a new adaptor
     * @throws NullPointerException if {@code upstream} is null
     */
    public static StatisticsAdaptorImpl of(DataMemAllocator upstream) {
        return new StatisticsAdaptorImpl(upstream);
    }

    private StatisticsAdaptorImpl(DataMemAllocator upstream) {
        this.upstream = Objects.requireNonNull(upstream, "upstream");
    }

    @Override
    public DataMemAllocator upstream() {
        return upstream;
    }

    // ---------------------------------------------------------------------------------------------
    // The allocator

    @Override
    public MemorySegment malloc(long byteSize) {
        MemorySegment p = upstream.malloc(byteSize);
        if (p.address() == 0) {
            failed();
        } else {
            allocated(byteSize);
        }
        return p;
    }

    @Override
    public MemorySegment calloc(long count, long elementByteSize) {
        MemorySegment p = upstream.calloc(count, elementByteSize);
        if (p.address() == 0) {
            failed();
        } else {
            allocated(count * elementByteSize);
        }
        return p;
    }

    @Override
    public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        MemorySegment p;
        try {
            p = upstream.realloc(ptr, oldByteSize, newByteSize);
        } catch (RuntimeException e) {
            if (ptr.address() != 0 && BlockReleased.by(e)) {
                freed(oldByteSize);
            }
            throw e;
        }
        if (p.address() == 0) {
            failed();
        } else if (ptr.address() == 0) {
            allocated(newByteSize);
        } else {
            reallocated(cell(), oldByteSize, newByteSize);
            ScopeCounters s = top;
            if (s != null) {
                s.reallocated(oldByteSize, newByteSize);
            }
        }
        return p;
    }

    @Override
    public void free(MemorySegment ptr, long byteSize) {
        try {
            upstream.free(ptr, byteSize);
        } catch (RuntimeException e) {
            if (ptr.address() != 0 && BlockReleased.by(e)) {
                freed(byteSize);
            }
            throw e;
        }
        if (ptr.address() != 0) {
            freed(byteSize);
        }
    }

    private void freed(long byteSize) {
        Cell c = cell();
        if (holding) {
            awaitRead();
        }
        if (c.owner != null) {
            // The owning thread's cell: plain reads, release stores (see Cell).
            long[] v = c.v;
            long op = v[END] + 1;
            SLOT.setRelease(v, BEGIN, op);
            SLOT.setRelease(v, FREES, v[FREES] + 1);
            SLOT.setRelease(v, FREED, v[FREED] + byteSize);
            SLOT.setRelease(v, END, op);
        } else {
            c.begin();
            c.add(FREES, 1);
            c.add(FREED, byteSize);
            c.end();
        }
        if (top != null) {
            freedInScope(byteSize);
        }
    }

    private void freedInScope(long byteSize) {
        ScopeCounters s = top;
        if (s != null) {
            s.freed(byteSize);
        }
    }

    private void failed() {
        Cell c = cell();
        if (holding) {
            awaitRead();
        }
        c.begin();
        c.add(FAILURES, 1);
        c.end();
        ScopeCounters s = top;
        if (s != null) {
            s.failures.increment();
        }
    }

    private void allocated(long byteSize) {
        // The whole-life count of allocations is the histogram's total: one update less.
        Cell c = cell();
        if (holding) {
            awaitRead();
        }
        if (c.owner != null) {
            // The owning thread's cell: plain reads, release stores (see Cell). Kept small, so that
            // the compiler inlines it into the caller.
            long[] v = c.v;
            long op = v[END] + 1;
            SLOT.setRelease(v, BEGIN, op);
            int bucket = BUCKET0 + bucketOf(byteSize);
            SLOT.setRelease(v, bucket, v[bucket] + 1);
            SLOT.setRelease(v, SIZE_TOTAL, v[SIZE_TOTAL] + byteSize);
            long allocated = v[ALLOCATED] + byteSize;
            SLOT.setRelease(v, ALLOCATED, allocated);
            if (byteSize > v[SIZE_MAX]) {
                SLOT.setRelease(v, SIZE_MAX, byteSize);
            }
            SLOT.setRelease(v, END, op);
            if (allocated - v[FREED] > v[SYNCED]) {
                sync(c, allocated - v[FREED]);
            }
        } else {
            allocatedShared(c, byteSize);
        }
        ScopeCounters s = top;
        if (s != null) {
            s.allocated(byteSize);
        }
    }

    /** {@link #allocated} on a striped cell (virtual threads): atomic updates. */
    private void allocatedShared(Cell c, long byteSize) {
        c.begin();
        c.add(BUCKET0 + bucketOf(byteSize), 1);
        c.add(SIZE_TOTAL, byteSize);
        if (byteSize > c.get(SIZE_MAX)) {
            c.max(SIZE_MAX, byteSize);
        }
        long net = c.add(ALLOCATED, byteSize) - c.get(FREED);
        c.end();
        if (net > c.get(SYNCED)) {
            sync(c, net);
        }
    }

    private void reallocated(Cell c, long oldByteSize, long newByteSize) {
        if (holding) {
            awaitRead();
        }
        c.begin();
        c.add(REALLOCATIONS, 1);
        long delta = newByteSize - oldByteSize;
        if (delta >= 0) {
            long net = c.add(ALLOCATED, delta) - c.get(FREED);
            c.end();
            if (net > c.get(SYNCED)) {
                sync(c, net);
            }
        } else {
            c.add(FREED, -delta);
            c.end();
        }
    }

    /**
     * Waits, before an update begins, while a read-out holds updates back: a short spin, then blocked
     * on the monitor the read-out holds for as long as it holds updates back. Blocking, not yielding:
     * a virtual thread that yields in a loop is put back on its carrier's own queue, which the carrier
     * drains before it looks at any other, so a few dozen such loops kept both carriers of a 2-core
     * machine busy forever while the read-out they waited for sat in another queue.
     */
    private void awaitRead() {
        for (int spins = 0; holding; spins++) {
            if (spins < 64) {
                Thread.onSpinWait();
            } else {
                synchronized (holdLock) {
                    // holding is true only while a read-out holds holdLock: entering means it ended
                }
            }
        }
    }

    /** The calling thread's cell: its own for a platform thread, a shared stripe for a virtual one. */
    private Cell cell() {
        Thread t = Thread.currentThread();
        Cell c = cellSlots[(int) t.threadId() & (CELL_SLOTS - 1)];
        if (c != null && c.owner == t) {
            return c;   // three loads and a compare, before the thread-local's hash lookup
        }
        return cellSlow(t);
    }

    private Cell cellSlow(Thread t) {
        if (t.isVirtual()) {
            Cell[] s = stripes;
            if (s == null) {
                s = makeStripes();
            }
            long id = t.threadId() * 0x9E3779B97F4A7C15L;
            return s[(int) (id >>> 32) & (STRIPES - 1)];
        }
        Cell c = own.get();
        cellSlots[(int) t.threadId() & (CELL_SLOTS - 1)] = c;   // Cell.owner is final: safe to publish so
        return c;
    }

    private Cell[] makeStripes() {
        synchronized (cellLock) {
            Cell[] s = stripes;
            if (s == null) {
                s = new Cell[STRIPES];
                for (int i = 0; i < STRIPES; i++) {
                    s[i] = new Cell(null);
                }
                Cells now = cells;
                Cell[] all = Arrays.copyOf(now.live, now.live.length + STRIPES);
                System.arraycopy(s, 0, all, now.live.length, STRIPES);
                cells = new Cells(now.retired, all);
                stripes = s;
            }
            return s;
        }
    }

    /** A platform thread's first call: a cell of its own, registered; ended threads' cells swept. */
    private Cell register() {
        Cell c = new Cell(Thread.currentThread());
        synchronized (cellLock) {
            Cells now = cells;
            if (now.live.length >= sweepAt) {
                now = fold(now);
                sweepAt = Math.max(16, 2 * now.live.length);
            }
            Cell[] all = Arrays.copyOf(now.live, now.live.length + 1);
            all[now.live.length] = c;
            cells = new Cells(now.retired, all);
        }
        return c;
    }

    /**
     * Folds the cells of terminated threads into the retired figures; the caller holds cellLock.
     * A thread's termination happens-before isAlive() returning false, so its cell is final here.
     */
    private Cells fold(Cells now) {
        // One look at each thread: one that ends between two looks would be folded without being
        // counted, leaving a null in the live cells.
        boolean[] ended = new boolean[now.live.length];
        int dead = 0;
        for (int i = 0; i < ended.length; i++) {
            Cell c = now.live[i];
            if (c.owner != null && !c.owner.isAlive()) {
                ended[i] = true;
                dead++;
            }
        }
        if (dead == 0) {
            return now;
        }
        long[] retired = now.retired.clone();
        Cell[] live = new Cell[now.live.length - dead];
        int n = 0;
        for (int k = 0; k < ended.length; k++) {
            Cell c = now.live[k];
            if (ended[k]) {
                for (int i = BUCKET0; i < SYNCED; i++) {
                    retired[i] = i == SIZE_MAX ? Math.max(retired[i], c.v[i]) : retired[i] + c.v[i];
                }
            } else {
                live[n++] = c;
            }
        }
        Cells next = new Cells(retired, live);
        cells = next;
        return next;
    }

    /** The registered cells, with those of ended threads folded in first when there are any. */
    private Cells cellsForReading() {
        Cells now = cells;
        for (Cell c : now.live) {
            if (c.owner != null && !c.owner.isAlive()) {
                synchronized (cellLock) {
                    return fold(cells);
                }
            }
        }
        return now;
    }

    /**
     * How many cells are registered after folding those of ended threads (the virtual-thread stripes
     * included once made). Package-private for tests.
     */
    int cellCount() {
        return cellsForReading().live().length;
    }

    /** Raises the peak to the bytes in use now (an exact read-out); records the cell's level. */
    private void sync(Cell c, long net) {
        c.set(SYNCED, net);
        long[] t = read();
        raisePeak(t[ALLOCATED] - t[FREED]);
    }

    /**
     * Every figure as it stood at one instant: the retired figures plus each live cell's slots, summed
     * (the largest size taken as a maximum). A cell is read between its update counters (its END
     * before, its BEGIN after: equal means no update was under way), and a second pass finds every
     * cell's BEGIN unchanged, so each cell held the values read at the instant between the passes.
     * After {@link #OPTIMISTIC_READS} read-outs spoiled by updates, it holds new updates back (they
     * wait before they begin) until one read-out succeeds.
     */
    private long[] read() {
        for (int attempt = 0; attempt < OPTIMISTIC_READS; attempt++) {
            long[] t = tryRead();
            if (t != null) {
                return t;
            }
        }
        synchronized (holdLock) {
            holding = true;
            try {
                for (int spins = 0; ; spins++) {
                    long[] t = tryRead();
                    if (t != null) {
                        return t;
                    }
                    if (spins < 64) {
                        Thread.onSpinWait();
                    } else if (Thread.currentThread().isVirtual()) {
                        LockSupport.parkNanos(PAUSE_NANOS);   // see awaitRead: never a yield loop
                    } else {
                        Thread.yield();   // an update under way on a descheduled thread
                    }
                }
            } finally {
                holding = false;
            }
        }
    }

    /**
     * Runs an action while updates are held back, as a read-out holds them when optimistic reads
     * keep failing. Package-private, for tests.
     */
    void whileHoldingUpdates(Runnable action) {
        synchronized (holdLock) {
            holding = true;
            try {
                action.run();
            } finally {
                holding = false;
            }
        }
    }

    /** One read-out of every cell; null if an update was under way or the cells changed meanwhile. */
    private long[] tryRead() {
        Cells cs = cellsForReading();
        Cell[] live = cs.live();
        long[] t = cs.retired().clone();
        long[] ends = new long[live.length];
        for (int i = 0; i < live.length; i++) {
            long[] v = live[i].v;
            long end = (long) SLOT.getAcquire(v, END);
            for (int slot = BUCKET0; slot < SYNCED; slot++) {
                long x = (long) SLOT.getAcquire(v, slot);
                t[slot] = slot == SIZE_MAX ? Math.max(t[slot], x) : t[slot] + x;
            }
            if ((long) SLOT.getAcquire(v, BEGIN) != end) {
                return null;
            }
            ends[i] = end;
        }
        for (int i = 0; i < live.length; i++) {
            if ((long) SLOT.getAcquire(live[i].v, BEGIN) != ends[i]) {
                return null;
            }
        }
        return cells == cs ? t : null;
    }

    private long raisePeak(long bytes) {
        long p = peak.get();
        while (bytes > p) {
            if (peak.compareAndSet(p, bytes)) {
                return bytes;
            }
            p = peak.get();
        }
        return p;
    }

    // ---------------------------------------------------------------------------------------------
    // Figures

    /**
     * Bytes allocated and not yet freed.
     *
     * @return bytes in use
     */
    public long currentBytes() {
        long[] t = read();
        return t[ALLOCATED] - t[FREED];
    }

    /**
     * The highest bytes in use seen: exact when one thread makes every call, within the bounds the
     * class comment states otherwise; never below a {@link #currentBytes()} read before it.
     *
     * @return peak bytes
     */
    public long peakBytes() {
        return raisePeak(currentBytes());
    }

    /**
     * All bytes ever allocated (growth by realloc included).
     *
     * @return bytes
     */
    public long allocatedBytes() {
        return read()[ALLOCATED];
    }

    /**
     * All bytes ever freed (shrinking by realloc included).
     *
     * @return bytes
     */
    public long freedBytes() {
        return read()[FREED];
    }

    /**
     * Successful malloc and calloc calls (and realloc of NULL).
     *
     * @return count
     */
    public long allocations() {
        return allocations(read());
    }

    private static long allocations(long[] t) {
        long n = 0;
        for (int i = 0; i < HISTOGRAM_BUCKETS; i++) {
            n += t[BUCKET0 + i];
        }
        return n;
    }

    /**
     * Frees of non-NULL pointers.
     *
     * @return count
     */
    public long frees() {
        return read()[FREES];
    }

    /**
     * Successful reallocations of existing blocks.
     *
     * @return count
     */
    public long reallocations() {
        return read()[REALLOCATIONS];
    }

    /**
     * Requests the upstream answered with NULL.
     *
     * @return count
     */
    public long failures() {
        return read()[FAILURES];
    }

    /**
     * The sum of the sizes of every allocation (what {@link #allocations()} counts): the
     * {@link #allocatedBytes()} without realloc growth. With {@link #allocations()} and
     * {@link #largestAllocationBytes()}, what a size distribution summary publishes.
     *
     * @return bytes
     */
    public long totalAllocationBytes() {
        return read()[SIZE_TOTAL];
    }

    /**
     * The size of the largest allocation so far (what {@link #allocations()} counts).
     *
     * @return bytes; 0 before the first allocation
     */
    public long largestAllocationBytes() {
        return read()[SIZE_MAX];
    }

    /**
     * Blocks allocated and not yet freed: {@code allocations() - frees()}.
     *
     * @return count
     */
    public long liveAllocations() {
        long[] t = read();
        return allocations(t) - t[FREES];
    }

    @Override
    public LayerSnapshot.Statistics figures() {
        // One read-out of one instant: the bytes and blocks in use are those of that instant.
        long[] t = read();
        long current = t[ALLOCATED] - t[FREED];
        return new LayerSnapshot.Statistics(TYPE, current, raisePeak(current), t[ALLOCATED], t[FREED],
                allocations(t), t[FREES], t[REALLOCATIONS], t[FAILURES]);
    }

    /**
     * The whole-life {@link #figures()}, for a memory snapshot.
     *
     * @return a {@link LayerSnapshot.Statistics}
     */
    @Override
    public LayerSnapshot snapshot() {
        return figures();
    }

    @Override
    public SizeHistogram histogram() {
        long[] t = read();
        long[] counts = Arrays.copyOfRange(t, BUCKET0, BUCKET0 + HISTOGRAM_BUCKETS);
        return new SizeHistogram(counts, t[SIZE_TOTAL], t[SIZE_MAX]);
    }

    /**
     * The histogram bucket of a size: 0 for 0 bytes, else {@code k} for sizes in
     * {@code [2^(k-1), 2^k)}.
     *
     * @param byteSize a size, at least 0
     * @return the bucket, from 0 to {@link #HISTOGRAM_BUCKETS} - 1
     */
    public static int bucketOf(long byteSize) {
        return Math.min(64 - Long.numberOfLeadingZeros(byteSize), HISTOGRAM_BUCKETS - 1);
    }

    // ---------------------------------------------------------------------------------------------
    // Scopes

    @Override
    public Scope push() {
        synchronized (scopeLock) {
            ScopeCounters c = new ScopeCounters(top);
            top = c;
            return new ScopeImpl(c);
        }
    }

    private LayerSnapshot.Statistics popLocked(ScopeCounters c) {
        top = c.parent;
        c.closed = true;
        if (c.parent != null) {
            c.parent.absorb(c);
        }
        return c.figures();
    }

    /** A scope of this adaptor: its counters. */
    private final class ScopeImpl implements Scope {

        private final ScopeCounters counters;

        ScopeImpl(ScopeCounters counters) {
            this.counters = counters;
        }

        @Override
        public LayerSnapshot.Statistics figures() {
            return counters.figures();
        }

        @Override
        public boolean isOpen() {
            return !counters.closed;
        }

        @Override
        public void close() {
            synchronized (scopeLock) {
                if (counters.closed) {
                    return;
                }
                if (top != counters) {
                    throw new IllegalStateException("close: an inner scope of " + StatisticsAdaptorImpl.this
                            + " is still open; close scopes innermost first");
                }
                popLocked(counters);
            }
        }

        @Override
        public String toString() {
            return "Scope" + figures();
        }
    }

    @Override
    public String toString() {
        return "StatisticsAdaptor[" + upstream + "]";
    }

    /**
     * A thread's figures (owner set: written by that thread alone, with release stores) or a stripe
     * shared by virtual threads (owner null: atomic updates). Read by others with acquire loads.
     */
    private static final class Cell {
        final long[] v = new long[CELL_LENGTH];
        final Thread owner;

        Cell(Thread owner) {
            this.owner = owner;
        }

        /** Adds to a slot; returns the new value. */
        long add(int slot, long delta) {
            if (owner != null) {
                long next = v[slot] + delta;   // only this thread writes the slot
                SLOT.setRelease(v, slot, next);
                return next;
            }
            return (long) SLOT.getAndAdd(v, slot, delta) + delta;
        }

        /** Raises a slot to at least {@code value}. */
        void max(int slot, long value) {
            if (owner != null) {
                SLOT.setRelease(v, slot, value);   // the caller checked value > v[slot]
                return;
            }
            long now = (long) SLOT.getAcquire(v, slot);
            while (value > now && !SLOT.compareAndSet(v, slot, now, value)) {
                now = (long) SLOT.getAcquire(v, slot);
            }
        }

        long get(int slot) {
            return owner != null ? v[slot] : (long) SLOT.getAcquire(v, slot);
        }

        void set(int slot, long value) {
            SLOT.setRelease(v, slot, value);
        }

        /** An update begins: after this store, a read-out of the cell sees it as under way. */
        void begin() {
            if (owner != null) {
                SLOT.setRelease(v, BEGIN, v[BEGIN] + 1);
            } else {
                SLOT.getAndAdd(v, BEGIN, 1L);
            }
        }

        /** The update ended: its stores come before this one. */
        void end() {
            if (owner != null) {
                SLOT.setRelease(v, END, v[END] + 1);
            } else {
                SLOT.getAndAdd(v, END, 1L);
            }
        }
    }

    /** The registered cells and the folded figures of ended threads: replaced whole, never changed. */
    private record Cells(long[] retired, Cell[] live) {
    }
}
