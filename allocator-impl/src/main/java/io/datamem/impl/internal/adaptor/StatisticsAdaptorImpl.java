package io.datamem.impl.adaptor;

import io.datamem.DataMemAllocator;
import io.datamem.impl.AllocatorAdaptor;
import io.datamem.impl.snapshot.LayerSnapshot;
import io.datamem.impl.snapshot.SnapshotSource;
import io.datamem.internal.Checks;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongConsumer;

/**
 * Counts what flows through an upstream allocator: bytes in use now and at peak, total bytes
 * allocated and freed, the number of allocations, frees, reallocations and failures, and a
 * histogram of allocation sizes. Nested <em>scopes</em> ({@link #push()}, {@link #pop()}) let a
 * compute block read its own figures.
 *
 * <p>Accounting follows the sizes callers pass: {@code free(ptr, n)} subtracts {@code n}. A failed
 * allocation ({@code NULL}) counts as a failure and changes nothing else; a caller mistake
 * (an {@link IllegalArgumentException} from the upstream) counts nothing, except a
 * {@link GuardViolationException} whose {@link GuardViolationException#blockReleased()} is true: the
 * guard below freed the block, so it counts as freed (for a {@code realloc}, the old block). An <em>allocation</em> is
 * a successful {@code malloc}, {@code calloc} or {@code realloc} of {@code NULL}; a
 * <em>reallocation</em> is a successful {@code realloc} of an existing block.
 *
 * <p>Thread-safe and lean: the whole-life figures are kept in per-thread <em>cells</em>. A platform
 * thread gets its own cell on its first call, which only it writes (plain reads, release stores:
 * no atomic read-modify-write and no shared cache line on the hot path); virtual threads share a
 * small fixed set of striped cells (chosen by thread id, updated atomically), so any number of
 * virtual threads costs no more memory than one stripe set per adaptor. A figure is read as the sum
 * of every cell (acquire loads) plus the folded figures of ended threads: the cell of a platform
 * thread that has terminated is folded into a retired total (its thread's end happens-before the
 * fold, so nothing is lost) when later threads register or when figures are read, so threads that
 * come and go do not accumulate cells. Each figure is exact once the threads whose calls it should
 * count have finished them (every completed call that happens-before a read is counted in it); figures
 * read while other threads allocate are each exact for some interleaving but not a consistent
 * snapshot of one instant. Frees are read before allocations ({@link #figures()},
 * {@link #currentBytes()}, {@link #liveAllocations()}), so that a free counted has its allocation
 * counted too: the bytes and blocks in use never read negative while callers free only what they
 * allocated, even when threads free each other's blocks. Nothing is allocated per call.
 *
 * <p><b>The peak.</b> Each cell remembers the net bytes (allocated minus freed through that cell) it
 * had when it last <em>synchronised</em>; a call that takes its cell's net bytes above that level
 * synchronises again: it sums every cell's net bytes (as {@link #currentBytes()} does) and raises
 * the peak to that sum if it is higher. Reading {@link #peakBytes()} or {@link #figures()} also
 * raises the peak to the bytes in use read then, so the peak is never below a {@code currentBytes}
 * read before it. A thread's steady loop of allocations and frees that do not exceed its earlier
 * high level pays no synchronisation. What is guaranteed:
 * <ul>
 *   <li><b>One thread: exact.</b> When every call is made by one thread, its cell's net bytes are the
 *       bytes in use, it synchronises at each new high, and the peak is the true peak.</li>
 *   <li><b>Never below any single cell's high figure with the others as read then:</b> for each cell
 *       (a platform thread, or a stripe of virtual threads), every time its net bytes reach a new high
 *       {@code h}, the peak becomes at least {@code h} plus the other cells' net bytes read right
 *       after. When no thread frees blocks another thread allocated (no cell goes negative), the
 *       peak is therefore at least the most bytes any one thread had in use at once.</li>
 *   <li><b>Never above the sum of per-cell figures each taken during one synchronisation:</b> the
 *       peak is the largest of the sums it computed, and each sum adds every cell's net bytes at some
 *       instant while it was being read. When calls on different threads do not overlap in time
 *       (threads taking turns), each sum is the bytes in use at that moment, so the peak never
 *       exceeds the true peak; with overlapping calls a sum may combine one cell's figure from
 *       before a free with another's from after a later allocation, and exceed it.</li>
 *   <li><b>May be below the true peak under concurrency:</b> a cell coming back up to a level it
 *       has already synchronised at does not synchronise again, so several threads each returning to
 *       their earlier highs at the same time are not seen together.</li>
 * </ul>
 *
 * <p>Scopes form a stack shared by every thread using this adaptor, as RMM's
 * {@code statistics_resource_adaptor} counters: operations are counted in the whole-life figures
 * and in the innermost open scope; popping a scope adds its figures to the enclosing one (its peak
 * counted on top of the enclosing scope's bytes in use). An operation racing with a
 * {@link #pop()} is counted in the popped scope and may miss the enclosing one; the whole-life
 * figures are always exact.
 */
public final class StatisticsAdaptor implements AllocatorAdaptor, SnapshotSource {

    /** The number of buckets of {@link #histogram()}: size 0, then one per power of two up to 2^57. */
    public static final int HISTOGRAM_BUCKETS = 59;

    private static final System.Logger LOG = System.getLogger(StatisticsAdaptor.class.getName());

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
    private static final int CELL_LENGTH = SYNCED + 1 + PAD;
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
    private volatile Counters top;              // innermost open scope; null when none
    private volatile LongConsumer[] observers;  // null when none

    /**
     * Wraps an upstream allocator.
     *
     * @param upstream the allocator to count
     * @return a new adaptor
     * @throws NullPointerException if {@code upstream} is null
     */
    public static StatisticsAdaptor of(DataMemAllocator upstream) {
        return new StatisticsAdaptor(upstream);
    }

    private StatisticsAdaptor(DataMemAllocator upstream) {
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
            if (ptr.address() != 0 && GuardViolationException.released(e)) {
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
            Counters s = top;
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
            if (ptr.address() != 0 && GuardViolationException.released(e)) {
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
        if (c.owner != null) {
            // The owning thread's cell: plain reads, release stores (see Cell).
            long[] v = c.v;
            SLOT.setRelease(v, FREES, v[FREES] + 1);
            SLOT.setRelease(v, FREED, v[FREED] + byteSize);
        } else {
            c.add(FREES, 1);
            c.add(FREED, byteSize);
        }
        if (top != null) {
            freedInScope(byteSize);
        }
    }

    private void freedInScope(long byteSize) {
        Counters s = top;
        if (s != null) {
            s.freed(byteSize);
        }
    }

    private void failed() {
        cell().add(FAILURES, 1);
        Counters s = top;
        if (s != null) {
            s.failures.increment();
        }
    }

    private void allocated(long byteSize) {
        // The whole-life count of allocations is the histogram's total: one update less.
        Cell c = cell();
        if (c.owner != null) {
            // The owning thread's cell: plain reads, release stores (see Cell). Kept small, so that
            // the compiler inlines it into the caller.
            long[] v = c.v;
            int bucket = BUCKET0 + bucketOf(byteSize);
            SLOT.setRelease(v, bucket, v[bucket] + 1);
            SLOT.setRelease(v, SIZE_TOTAL, v[SIZE_TOTAL] + byteSize);
            long allocated = v[ALLOCATED] + byteSize;
            SLOT.setRelease(v, ALLOCATED, allocated);
            if (byteSize > v[SIZE_MAX] || allocated - v[FREED] > v[SYNCED]) {
                raised(c, byteSize, allocated - v[FREED]);
            }
        } else {
            allocatedShared(c, byteSize);
        }
        if (top != null || observers != null) {
            allocatedElsewhere(byteSize);
        }
    }

    /** The largest size or the net bytes of an owned cell went up: record it. */
    private void raised(Cell c, long byteSize, long net) {
        if (byteSize > c.v[SIZE_MAX]) {
            SLOT.setRelease(c.v, SIZE_MAX, byteSize);
        }
        if (net > c.v[SYNCED]) {
            sync(c, net);
        }
    }

    /** {@link #allocated} on a striped cell (virtual threads): atomic updates. */
    private void allocatedShared(Cell c, long byteSize) {
        c.add(BUCKET0 + bucketOf(byteSize), 1);
        c.add(SIZE_TOTAL, byteSize);
        if (byteSize > c.get(SIZE_MAX)) {
            c.max(SIZE_MAX, byteSize);
        }
        long net = c.add(ALLOCATED, byteSize) - c.get(FREED);
        if (net > c.get(SYNCED)) {
            sync(c, net);
        }
    }

    /** Counts an allocation in the open scope and tells the observers, when there are any. */
    private void allocatedElsewhere(long byteSize) {
        Counters s = top;
        if (s != null) {
            s.allocated(byteSize);
        }
        LongConsumer[] o = observers;
        if (o != null) {
            notify(o, byteSize);
        }
    }

    private static void notify(LongConsumer[] o, long byteSize) {
        for (LongConsumer c : o) {
            try {
                c.accept(byteSize);
            } catch (RuntimeException e) {
                // The block is allocated and the caller owns it: an observer must not undo that.
                LOG.log(System.Logger.Level.WARNING, "datamem: an allocation-size observer failed", e);
            }
        }
    }

    private void reallocated(Cell c, long oldByteSize, long newByteSize) {
        c.add(REALLOCATIONS, 1);
        long delta = newByteSize - oldByteSize;
        if (delta >= 0) {
            long net = c.add(ALLOCATED, delta) - c.get(FREED);
            if (net > c.get(SYNCED)) {
                sync(c, net);
            }
        } else {
            c.add(FREED, -delta);
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

    /** Raises the peak to the bytes in use now, summed over every cell; records the cell's level. */
    private void sync(Cell c, long net) {
        c.set(SYNCED, net);
        raisePeak(cells.sum(ALLOCATED) - cells.sum(FREED));
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
        Cells c = cellsForReading();
        long freed = c.sum(FREED);   // first: every free read has its allocation read after it
        return c.sum(ALLOCATED) - freed;
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
        return cellsForReading().sum(ALLOCATED);
    }

    /**
     * All bytes ever freed (shrinking by realloc included).
     *
     * @return bytes
     */
    public long freedBytes() {
        return cellsForReading().sum(FREED);
    }

    /**
     * Successful malloc and calloc calls (and realloc of NULL).
     *
     * @return count
     */
    public long allocations() {
        Cells c = cellsForReading();
        long n = 0;
        for (int i = 0; i < HISTOGRAM_BUCKETS; i++) {
            n += c.sum(BUCKET0 + i);
        }
        return n;
    }

    /**
     * Frees of non-NULL pointers.
     *
     * @return count
     */
    public long frees() {
        return cellsForReading().sum(FREES);
    }

    /**
     * Successful reallocations of existing blocks.
     *
     * @return count
     */
    public long reallocations() {
        return cellsForReading().sum(REALLOCATIONS);
    }

    /**
     * Requests the upstream answered with NULL.
     *
     * @return count
     */
    public long failures() {
        return cellsForReading().sum(FAILURES);
    }

    /**
     * The sum of the sizes of every allocation (what {@link #allocations()} counts): the
     * {@link #allocatedBytes()} without realloc growth. With {@link #allocations()} and
     * {@link #largestAllocationBytes()}, what a size distribution summary publishes.
     *
     * @return bytes
     */
    public long totalAllocationBytes() {
        return cellsForReading().sum(SIZE_TOTAL);
    }

    /**
     * The size of the largest allocation so far (what {@link #allocations()} counts).
     *
     * @return bytes; 0 before the first allocation
     */
    public long largestAllocationBytes() {
        return cellsForReading().max(SIZE_MAX);
    }

    /**
     * Blocks allocated and not yet freed: {@code allocations() - frees()}.
     *
     * @return count
     */
    public long liveAllocations() {
        long frees = frees();   // first, as in currentBytes()
        return allocations() - frees;
    }

    /**
     * Every whole-life figure at once.
     *
     * @return the figures since this adaptor was created
     */
    public Figures figures() {
        Cells c = cellsForReading();
        // Frees before allocations: a free read here happened after its block's allocation, which
        // the later reads of the allocating cell then see; so neither the bytes nor the blocks in use
        // read negative while callers free only what they allocated.
        long freed = c.sum(FREED);
        long frees = c.sum(FREES);
        long allocations = 0;
        for (int i = 0; i < HISTOGRAM_BUCKETS; i++) {
            allocations += c.sum(BUCKET0 + i);
        }
        long allocated = c.sum(ALLOCATED);
        long current = allocated - freed;
        return new Figures(current, raisePeak(current), allocated, freed, allocations, frees,
                c.sum(REALLOCATIONS), c.sum(FAILURES));
    }

    /**
     * The whole-life {@link #figures()}, for a memory snapshot.
     *
     * @return a {@link LayerSnapshot.Statistics}
     */
    @Override
    public LayerSnapshot snapshot() {
        Figures f = figures();
        return new LayerSnapshot.Statistics("StatisticsAdaptor", f.currentBytes(), f.peakBytes(), f.allocatedBytes(),
                f.freedBytes(), f.allocations(), f.frees(), f.reallocations(), f.failures());
    }

    /**
     * The sizes of every allocation so far, by power of two.
     *
     * @return a snapshot of the histogram
     */
    public SizeHistogram histogram() {
        Cells c = cellsForReading();
        long[] counts = new long[HISTOGRAM_BUCKETS];
        for (int i = 0; i < HISTOGRAM_BUCKETS; i++) {
            counts[i] = c.sum(BUCKET0 + i);
        }
        return new SizeHistogram(counts);
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

    /**
     * Opens a scope: from now on, and until it is popped, operations are also counted in it, starting
     * from zero. Scopes nest; the figures of an inner scope are added to the enclosing one when it is
     * popped.
     *
     * @return the scope; {@link Scope#close()} pops it
     */
    public Scope push() {
        synchronized (scopeLock) {
            Counters c = new Counters(top);
            top = c;
            return new Scope(c);
        }
    }

    /**
     * Closes the innermost scope and adds its figures to the enclosing one.
     *
     * @return the figures of the scope closed
     * @throws IllegalStateException if no scope is open
     */
    public Figures pop() {
        synchronized (scopeLock) {
            Counters c = top;
            if (c == null) {
                throw new IllegalStateException("pop: no scope is open on " + this);
            }
            return popLocked(c);
        }
    }

    private Figures popLocked(Counters c) {
        top = c.parent;
        c.closed = true;
        if (c.parent != null) {
            c.parent.absorb(c);
        }
        return c.figures();
    }

    /**
     * How many scopes are open.
     *
     * @return the depth of the scope stack
     */
    public int scopeDepth() {
        synchronized (scopeLock) {
            int n = 0;
            for (Counters c = top; c != null; c = c.parent) {
                n++;
            }
            return n;
        }
    }

    /**
     * A scope opened by {@link #push()}: counts the operations made while it is the innermost open
     * scope (and those of the scopes nested in it, once they are popped).
     */
    public final class Scope implements AutoCloseable {

        private final Counters counters;

        private Scope(Counters counters) {
            this.counters = counters;
        }

        /**
         * The scope's figures so far (or final, once closed).
         *
         * @return the figures
         */
        public Figures figures() {
            return counters.figures();
        }

        /**
         * Whether the scope is still open.
         *
         * @return false once popped
         */
        public boolean isOpen() {
            return !counters.closed;
        }

        /**
         * Pops the scope. Idempotent.
         *
         * @throws IllegalStateException if the scope is open but not the innermost one
         */
        @Override
        public void close() {
            synchronized (scopeLock) {
                if (counters.closed) {
                    return;
                }
                if (top != counters) {
                    throw new IllegalStateException("close: an inner scope of " + StatisticsAdaptor.this
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

    // ---------------------------------------------------------------------------------------------
    // Observers

    /**
     * Calls {@code observer} with the byte size of every allocation from now on (what
     * {@link #allocations()} counts), on the allocating thread, until the returned subscription is
     * closed; with no observer the cost is one read of a volatile field per allocation. (The
     * Micrometer binder does not use this: it reads {@link #histogram()} and the size figures when
     * scraped.) An observer that throws is logged and otherwise ignored: the allocation stands.
     *
     * @param observer a fast, thread-safe consumer of sizes in bytes
     * @return the subscription; closing it removes the observer
     * @throws NullPointerException if {@code observer} is null
     */
    public Subscription observeAllocationSizes(LongConsumer observer) {
        Objects.requireNonNull(observer, "observer");
        synchronized (scopeLock) {
            LongConsumer[] o = observers;
            LongConsumer[] next = o == null ? new LongConsumer[1] : Arrays.copyOf(o, o.length + 1);
            next[next.length - 1] = observer;
            observers = next;
        }
        return () -> {
            synchronized (scopeLock) {
                LongConsumer[] o = observers;
                if (o == null) {
                    return;
                }
                List<LongConsumer> rest = new ArrayList<>(Arrays.asList(o));
                if (rest.remove(observer)) {
                    observers = rest.isEmpty() ? null : rest.toArray(LongConsumer[]::new);
                }
            }
        };
    }

    /** What {@link #observeAllocationSizes} returns: closing it removes the observer. */
    @FunctionalInterface
    public interface Subscription extends AutoCloseable {
        /** Removes the observer. Idempotent. */
        @Override
        void close();
    }

    @Override
    public String toString() {
        return "StatisticsAdaptor[" + upstream + "]";
    }

    // ---------------------------------------------------------------------------------------------
    // Value types

    /**
     * The figures of a {@link StatisticsAdaptor} or of one of its scopes.
     *
     * @param currentBytes   bytes allocated and not yet freed (in a scope: may be negative when it
     *                       freed blocks allocated before it)
     * @param peakBytes      the highest {@code currentBytes}
     * @param allocatedBytes all bytes allocated (growth by realloc included)
     * @param freedBytes     all bytes freed (shrinking by realloc included)
     * @param allocations    successful malloc, calloc and realloc of NULL
     * @param frees          frees of non-NULL pointers
     * @param reallocations  successful reallocations of existing blocks
     * @param failures       requests answered with NULL
     */
    public record Figures(long currentBytes, long peakBytes, long allocatedBytes, long freedBytes,
                          long allocations, long frees, long reallocations, long failures) {

        /**
         * Blocks allocated and not yet freed.
         *
         * @return {@code allocations - frees}
         */
        public long liveAllocations() {
            return allocations - frees;
        }
    }

    /**
     * Allocation sizes by power of two: bucket 0 counts zero-byte allocations, bucket {@code k}
     * those of {@code 2^(k-1)} to {@code 2^k - 1} bytes.
     */
    public static final class SizeHistogram {

        private final long[] counts;

        /**
         * A histogram with given counts.
         *
         * @param counts one count per bucket, {@link #HISTOGRAM_BUCKETS} of them
         * @throws IllegalArgumentException if the length is wrong or a count is negative
         */
        public SizeHistogram(long[] counts) {
            if (counts.length != HISTOGRAM_BUCKETS) {
                throw new IllegalArgumentException("counts: " + counts.length + " buckets (expected: "
                        + HISTOGRAM_BUCKETS + ")");
            }
            for (long c : counts) {
                Checks.notNegative("count", c);
            }
            this.counts = counts.clone();
        }

        /**
         * The count of a bucket.
         *
         * @param bucket from 0 to {@link #HISTOGRAM_BUCKETS} - 1
         * @return allocations whose size fell in it
         * @throws IndexOutOfBoundsException if {@code bucket} is out of range
         */
        public long count(int bucket) {
            return counts[Objects.checkIndex(bucket, HISTOGRAM_BUCKETS)];
        }

        /**
         * Every count.
         *
         * @return a copy of the counts, bucket 0 first
         */
        public long[] counts() {
            return counts.clone();
        }

        /**
         * All allocations counted.
         *
         * @return the sum of the counts
         */
        public long total() {
            long t = 0;
            for (long c : counts) {
                t += c;
            }
            return t;
        }

        /**
         * The smallest size of a bucket.
         *
         * @param bucket from 0 to {@link #HISTOGRAM_BUCKETS} - 1
         * @return bytes
         * @throws IndexOutOfBoundsException if {@code bucket} is out of range
         */
        public static long lowerBound(int bucket) {
            Objects.checkIndex(bucket, HISTOGRAM_BUCKETS);
            return bucket == 0 ? 0 : 1L << (bucket - 1);
        }

        /**
         * The largest size of a bucket.
         *
         * @param bucket from 0 to {@link #HISTOGRAM_BUCKETS} - 1
         * @return bytes
         * @throws IndexOutOfBoundsException if {@code bucket} is out of range
         */
        public static long upperBound(int bucket) {
            Objects.checkIndex(bucket, HISTOGRAM_BUCKETS);
            return bucket == 0 ? 0 : bucket == HISTOGRAM_BUCKETS - 1 ? DataMemAllocator.MAX_BYTE_SIZE
                    : (1L << bucket) - 1;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof SizeHistogram h && Arrays.equals(counts, h.counts);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(counts);
        }

        /**
         * The non-empty buckets, one per line: {@code [64, 127] bytes: 12}.
         *
         * @return the text
         */
        @Override
        public String toString() {
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < HISTOGRAM_BUCKETS; i++) {
                if (counts[i] != 0) {
                    b.append('[').append(lowerBound(i)).append(", ").append(upperBound(i)).append("] bytes: ")
                            .append(counts[i]).append('\n');
                }
            }
            return b.isEmpty() ? "(no allocations)\n" : b.toString();
        }
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
    }

    /** The registered cells and the folded figures of ended threads: replaced whole, never changed. */
    private record Cells(long[] retired, Cell[] live) {

        long sum(int slot) {
            long n = retired[slot];
            for (Cell c : live) {
                n += (long) SLOT.getAcquire(c.v, slot);
            }
            return n;
        }

        long max(int slot) {
            long n = retired[slot];
            for (Cell c : live) {
                n = Math.max(n, (long) SLOT.getAcquire(c.v, slot));
            }
            return n;
        }
    }

    /** One set of counters: a scope's. */
    private static final class Counters {
        final Counters parent;
        final AtomicLong current = new AtomicLong();
        final AtomicLong peak = new AtomicLong();
        final LongAdder allocatedBytes = new LongAdder();
        final LongAdder freedBytes = new LongAdder();
        final LongAdder allocations = new LongAdder();
        final LongAdder frees = new LongAdder();
        final LongAdder reallocations = new LongAdder();
        final LongAdder failures = new LongAdder();
        volatile boolean closed;

        Counters(Counters parent) {
            this.parent = parent;
        }

        void allocated(long byteSize) {
            allocations.increment();
            allocatedBytes(byteSize);
        }

        /** An allocation's bytes, without counting it (the whole-life count is the histogram's). */
        void allocatedBytes(long byteSize) {
            allocatedBytes.add(byteSize);
            raise(byteSize);
        }

        void reallocated(long oldByteSize, long newByteSize) {
            reallocations.increment();
            long delta = newByteSize - oldByteSize;
            if (delta >= 0) {
                allocatedBytes.add(delta);
                raise(delta);
            } else {
                freedBytes.add(-delta);
                current.addAndGet(delta);
            }
        }

        void freed(long byteSize) {
            frees.increment();
            freedBytes.add(byteSize);
            current.addAndGet(-byteSize);
        }

        void raise(long byteSize) {
            long now = current.addAndGet(byteSize);
            long p = peak.get();
            while (now > p && !peak.compareAndSet(p, now)) {
                p = peak.get();
            }
        }

        /** Adds a popped child's figures: RMM's add_counters_from_tracked_sub_block. */
        void absorb(Counters child) {
            long childPeak = child.peak.get();
            long base = current.get();
            long p = peak.get();
            while (base + childPeak > p && !peak.compareAndSet(p, base + childPeak)) {
                p = peak.get();
            }
            current.addAndGet(child.current.get());
            allocatedBytes.add(child.allocatedBytes.sum());
            freedBytes.add(child.freedBytes.sum());
            allocations.add(child.allocations.sum());
            frees.add(child.frees.sum());
            reallocations.add(child.reallocations.sum());
            failures.add(child.failures.sum());
        }

        Figures figures() {
            return figures(allocations.sum());
        }

        Figures figures(long allocationCount) {
            return new Figures(current.get(), peak.get(), allocatedBytes.sum(), freedBytes.sum(), allocationCount,
                    frees.sum(), reallocations.sum(), failures.sum());
        }
    }
}
