package io.datamem.array;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.MemoryTraits;
import io.datamem.spi.ProviderTerm;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * A workspace: scoped compute-block memory, reclaimed all at once. Its blocks come from a region
 * it reserves from its upstream once per thread, bumped one after the other, and go back together
 * when the {@linkplain Scope scope} that allocated them ends, typically at the end of each iteration
 * of a computation (a block freed while it is the last one bumped, a temporary closed at once, goes
 * back at once). The first cycle learns how much a cycle needs (it takes chunks from the upstream
 * as it goes); from then on a cycle of that size makes no call to the upstream.
 *
 * <pre>{@code
 * DataMemHandler ws = DataMem.handler("workspace(pool(aligned64))");
 * for (int step = 0; step < steps; step++) {
 *     Workspace.run(ws, () -> {                       // one cycle: everything it allocates ...
 *         NDArray t = NDArray.zeros(DType.FLOAT64, n);
 *         ...
 *     });                                             // ... goes back here, arrays still open included
 * }
 * }</pre>
 *
 * <p>The handler name is {@code workspace(UPSTREAM)}, with options
 * {@code :initial=SIZE,growth=FACTOR}: a first region of {@code initial} bytes (default 0: the first
 * cycle decides), and how much bigger than the cycle that outgrew it the next region is (default
 * 1.25). It composes: {@code workspace(pool(aligned64))}, {@code workspace(aligned64)+stats},
 * {@code workspace(default_allocator)+guard}; adaptors above it see every block allocated and, when
 * a scope ends, freed.
 *
 * <p><b>Safety.</b> Arrays allocated in a scope belong to its thread and cannot be shared (other
 * threads' element access throws {@link WrongThreadException}); when the scope ends every one of them
 * still open is closed with it: any later use, through the array, a view or a segment obtained from
 * it, throws {@link IllegalStateException} naming the ended scope, never a read of memory the next
 * cycle reuses. A scope whose arrays have an export held (a buffer view, a DLPack tensor, a
 * {@link NDArray#hold()}) refuses to end until it is released. Scopes nest, and end in the reverse
 * order they opened, on the thread that opened them. Malloc through a workspace with no scope of it
 * open on the thread throws {@link IllegalStateException}: there would be nothing to reclaim the
 * block.
 *
 * <p>{@link #figures()} reports the cycle in progress, the last and the largest cycle's bytes.
 * All methods are thread-safe; each thread has its own region.
 */
public final class Workspace implements DataMemAllocator {

    /**
     * A workspace's options: its first region, and how it grows.
     *
     * @param initialByteSize the region each thread reserves before its first cycle (0: none; the
     *                        first cycle's size decides)
     * @param growth          the next region's size over the cycle that outgrew the region, at least 1
     */
    public record Options(long initialByteSize, double growth) {

        /** No first region; 1.25 times the cycle that outgrew the region. */
        public static final Options DEFAULTS = new Options(0, 1.25);

        /**
         * Checks the options.
         *
         * @throws IllegalArgumentException if {@code initialByteSize} is negative or over
         *                                  {@link DataMemAllocator#MAX_BYTE_SIZE}, or {@code growth}
         *                                  is not a number of at least 1
         */
        public Options {
            if (initialByteSize < 0 || initialByteSize > MAX_BYTE_SIZE) {
                throw new IllegalArgumentException("initialByteSize: " + initialByteSize + " (expected: 0 to "
                        + MAX_BYTE_SIZE + ")");
            }
            if (!(growth >= 1) || growth > 1024) {
                throw new IllegalArgumentException("growth: " + growth + " (expected: 1 to 1024)");
            }
        }

        /** The next region: at least {@code cycleBytes} times the growth, never smaller than the current one. */
        long nextRegionByteSize(long current, long cycleBytes) {
            double wanted = Math.ceil(cycleBytes * growth);
            long next = wanted >= MAX_BYTE_SIZE ? MAX_BYTE_SIZE : (long) wanted;
            return Math.max(next, current);
        }

        /**
         * The options of a {@code workspace(UPSTREAM)} term: {@code initial=SIZE}, {@code growth=FACTOR}.
         *
         * @param term        the term
         * @param handlerName the whole handler name, for messages
         * @return the options
         * @throws IllegalArgumentException if the term is not {@code workspace(UPSTREAM)}, or an
         *                                  option is unknown or its value invalid; the message names
         *                                  the handler and what was expected
         */
        public static Options parse(ProviderTerm term, String handlerName) {
            String nested = term.nested();
            if (nested == null || nested.isEmpty() || !term.text().startsWith("workspace(")) {
                throw term.refused(handlerName, "workspace term", "workspace(UPSTREAM), for example"
                        + " workspace(pool(aligned64))");
            }
            long initial = DEFAULTS.initialByteSize;
            double growth = DEFAULTS.growth;
            for (ProviderTerm.Option o : term.options("workspace")) {
                switch (o.key()) {
                    case "initial" -> initial = ProviderTerm.byteSize("initial", o.value(), MAX_BYTE_SIZE);
                    case "growth" -> {
                        try {
                            growth = Double.parseDouble(o.value());
                        } catch (NumberFormatException e) {
                            growth = Double.NaN;
                        }
                        if (!(growth >= 1) || growth > 1024) {
                            throw term.refused(handlerName, "workspace option " + o, "growth=FACTOR, a number"
                                    + " from 1 to 1024");
                        }
                    }
                    default -> throw term.refused(handlerName, "workspace option " + o,
                            "initial=SIZE or growth=FACTOR");
                }
            }
            return new Options(initial, growth);
        }
    }

    /**
     * What a workspace did, over all threads.
     *
     * @param currentCycleBytes the bytes the cycles in progress allocated so far
     * @param lastCycleBytes    the bytes the cycle that ended last allocated (on any thread)
     * @param largestCycleBytes the most bytes one cycle allocated
     * @param regionBytes       the regions the threads hold now, in all
     * @param cycles            the cycles ended
     * @param spills            the chunks cycles took from the upstream beyond their region
     * @param threads           the threads that have a region
     */
    public record Figures(long currentCycleBytes, long lastCycleBytes, long largestCycleBytes, long regionBytes,
                          long cycles, long spills, int threads) {
    }

    private final String name;
    private final DataMemAllocator upstream;
    private final Options options;
    private final long alignment;
    private final ConcurrentLinkedQueue<WorkspaceHeap> allHeaps = new ConcurrentLinkedQueue<>();
    private volatile WorkspaceHeap lastEnded;
    /**
     * The region the last allocation used, whichever thread's: a thread that finds its own here
     * skips the thread-local lookup (a plain field; the heap's final fields make the check safe).
     */
    private WorkspaceHeap lastHeap;

    private Workspace(String name, DataMemAllocator upstream, Options options) {
        this.name = name;
        this.upstream = upstream;
        this.options = options;
        this.alignment = Math.max(16, upstream.traits().byteAlignment());
    }

    /** A region for the calling thread (see {@link ThreadHome#heap}). */
    WorkspaceHeap newHeap(ThreadHome home) {
        WorkspaceHeap h = new WorkspaceHeap(this, home, upstream, alignment);
        h.reserve(options.initialByteSize());
        allHeaps.add(h);
        return h;
    }

    /** A thread's region, given back: no longer counted. */
    void forget(WorkspaceHeap heap) {
        allHeaps.remove(heap);
        if (lastHeap == heap) {
            lastHeap = null;   // trimmed on its own thread (or its thread ended): not to be bumped again
        }
    }

    /**
     * A workspace over an upstream allocator: what the handler name {@code workspace(UPSTREAM)}
     * builds.
     *
     * @param name     the name to report it by, usually its handler name
     * @param upstream where its regions come from
     * @param options  its options
     * @return the workspace
     * @throws NullPointerException if an argument is null
     */
    public static Workspace over(String name, DataMemAllocator upstream, Options options) {
        return new Workspace(Objects.requireNonNull(name, "name"), Objects.requireNonNull(upstream, "upstream"),
                Objects.requireNonNull(options, "options"));
    }

    /**
     * The options it was made with.
     *
     * @return the options
     */
    public Options options() {
        return options;
    }

    // ---------------------------------------------------------------------------------------------
    // Scopes

    /**
     * Runs {@code body} in a new scope, with {@code handler} bound ({@link DataMem#runWith}): what
     * the body allocates through the handler's workspaces goes back when it returns or throws.
     *
     * @param handler a handler whose stack has a workspace (or any handler: then the scope reclaims
     *                nothing)
     * @param body    the computation
     * @throws NullPointerException  if an argument is null
     * @throws IllegalStateException if the scope cannot end because an export of one of its arrays
     *                               is still held (the scope then stays open: release it, then
     *                               close {@link #open} scopes explicitly)
     */
    public static void run(DataMemHandler handler, Runnable body) {
        Objects.requireNonNull(body, "body");
        Scope s = open(handler);
        try {
            DataMem.runWith(handler, body);
        } finally {
            s.close();
        }
    }

    /**
     * As {@link #run}, returning what {@code body} returns.
     *
     * @param handler a handler whose stack has a workspace
     * @param body    the computation
     * @param <T>     the result type
     * @param <X>     what the body may throw
     * @return what the body returned (an array among its results is closed with the scope: copy
     *         what must outlive it, for example with {@link NDArray#copy()} outside the scope)
     * @throws X                     what the body threw
     * @throws NullPointerException  if an argument is null
     * @throws IllegalStateException as {@link #run}
     */
    public static <T, X extends Throwable> T call(DataMemHandler handler, ScopedValue.CallableOp<T, X> body)
            throws X {
        Objects.requireNonNull(body, "body");
        Scope s = open(handler);
        try {
            return DataMem.callWith(handler, body);
        } finally {
            s.close();
        }
    }

    /**
     * Opens a scope on the calling thread: until it is closed, what workspaces allocate on this
     * thread belongs to it. Bind a workspace handler inside it to allocate arrays there
     * ({@link DataMem#runWith}); {@link #run} does both.
     *
     * @param handler the handler the scope is for (named in messages)
     * @return the scope; close it on this thread, after every scope opened inside it
     * @throws NullPointerException if {@code handler} is null
     */
    public static Scope open(DataMemHandler handler) {
        Objects.requireNonNull(handler, "handler");
        ThreadHome home = ThreadHome.mine();
        Scope s = new Scope(handler, home, home.scope);
        home.scope = s;
        return s;
    }

    /**
     * A scope of workspace memory on one thread (see {@link Workspace}).
     */
    public static final class Scope implements AutoCloseable {

        private static final int COMPACT_FIRST = 16;

        private final DataMemHandler handler;
        private final ThreadHome home;
        private final Scope parent;
        /** The heaps this scope bumped, and each one's mark: the bump pointer to give back to. */
        private final List<WorkspaceHeap> heaps = new ArrayList<>(1);
        private long[] marks = new long[1];
        /** The memories of the arrays allocated in it. */
        private final List<ArrayMemory> arrays = new ArrayList<>();
        /** The list's size at which {@link #adopt} next drops the arrays closed since. */
        private int compactAt = COMPACT_FIRST;
        private boolean closed;

        private Scope(DataMemHandler handler, ThreadHome home, Scope parent) {
            this.handler = handler;
            this.home = home;
            this.parent = parent;
        }

        /** The mark of {@code heap} in this scope, taken on its first allocation here. */
        void enter(WorkspaceHeap heap) {
            for (int i = heaps.size() - 1; i >= 0; i--) {
                if (heaps.get(i) == heap) {
                    return;
                }
            }
            if (heaps.size() == marks.length) {
                marks = java.util.Arrays.copyOf(marks, marks.length * 2);
            }
            marks[heaps.size()] = heap.mark();
            heaps.add(heap);
        }

        /**
         * An array allocated in this scope: closed with it. The list drops arrays closed since
         * whenever it doubles, so a long scope of temporaries closed out of order stays as small
         * as its open arrays.
         */
        void adopt(ArrayMemory m) {
            if (arrays.size() >= compactAt) {
                arrays.removeIf(ArrayMemory::done);
                compactAt = Math.max(COMPACT_FIRST, 2 * arrays.size());
            }
            arrays.add(m);
        }

        /** An array of this scope closed: forgotten at once when closed on its thread and the last adopted. */
        void released(ArrayMemory m) {
            if (Thread.currentThread() != home.thread) {
                return;   // the list is the scope thread's: adopt drops it later
            }
            int last = arrays.size() - 1;
            if (last >= 0 && arrays.get(last) == m) {
                arrays.remove(last);
            }
        }

        /** The arrays the scope keeps to close, closed ones not yet dropped included (for tests). */
        int tracked() {
            return arrays.size();
        }

        /** What this scope is, in messages. */
        String describe() {
            return "a workspace scope of handler '" + handler.name() + "' on thread '" + home.thread.getName() + "'";
        }

        /**
         * Whether the scope has ended.
         *
         * @return true once closed
         */
        public boolean isClosed() {
            return closed;
        }

        /**
         * Ends the scope: every array still open that was allocated in it is closed (through its
         * handler, so that adaptors see it freed), and its workspace memory goes back to the region.
         * Idempotent.
         *
         * @throws WrongThreadException  if called on another thread than the one that opened it
         * @throws IllegalStateException if a scope opened inside it is still open, or an export of
         *                               one of its arrays is held; the scope stays open
         * @throws RuntimeException      what an adaptor's free threw for one of its arrays (a guard's
         *                               finding, say), after the scope ended anyway
         */
        @Override
        public void close() {
            if (closed) {
                return;
            }
            if (Thread.currentThread() != home.thread) {
                throw new WrongThreadException("cannot close " + describe() + " on thread '"
                        + Thread.currentThread().getName() + "': a scope ends on the thread that opened it");
            }
            if (home.scope != this) {
                throw new IllegalStateException("cannot close " + describe() + ": a scope opened inside it is still"
                        + " open (" + home.scope.describe() + "); close the inner scope first");
            }
            // Claim every array first (a hold refuses it), so that either all close or none does
            ArrayMemory.Claim[] claims = new ArrayMemory.Claim[arrays.size()];
            for (int i = 0; i < claims.length; i++) {
                try {
                    claims[i] = arrays.get(i).claimForScope();
                } catch (RuntimeException e) {
                    for (int j = 0; j < i; j++) {
                        if (claims[j] != null) {
                            arrays.get(j).restore(claims[j]);
                        }
                    }
                    throw new IllegalStateException("cannot close " + describe() + ": " + e.getMessage(), e);
                }
            }
            RuntimeException failure = null;   // an adaptor's free that throws (a guard's finding) ends nothing early
            for (int i = 0; i < claims.length; i++) {
                if (claims[i] != null) {
                    try {
                        arrays.get(i).endWithScope(claims[i]);
                    } catch (RuntimeException e) {
                        if (failure == null) {
                            failure = e;
                        } else {
                            failure.addSuppressed(e);
                        }
                    }
                }
            }
            for (int i = heaps.size() - 1; i >= 0; i--) {
                heaps.get(i).reset(marks[i]);
                heaps.get(i).workspace.ended(heaps.get(i));
            }
            closed = true;
            home.scope = parent;
            if (failure != null) {
                throw failure;
            }
        }
    }

    private void ended(WorkspaceHeap heap) {
        lastEnded = heap;
    }

    // ---------------------------------------------------------------------------------------------
    // The allocator

    /** The calling thread's innermost open scope, for an allocation through this workspace. */
    private Scope scopeHere(ThreadHome home) {
        Scope s = home.scope;
        if (s == null) {
            throw new IllegalStateException("workspace '" + name + "': no workspace scope is open on thread '"
                    + Thread.currentThread().getName() + "' (allocate inside Workspace.run(handler, ...) or a"
                    + " Workspace.open(handler) scope: its end is what gives the block back)");
        }
        home.pendingScope = s;   // the array being created joins the scope (see NDArray)
        return s;
    }

    /**
     * Bumps {@code byteSize} bytes in the calling thread's region for its innermost open scope.
     *
     * @throws IllegalStateException if no scope is open on this thread
     */
    @Override
    public MemorySegment malloc(long byteSize) {
        if (byteSize < 0 || byteSize > MAX_BYTE_SIZE) {
            return MemorySegment.NULL;
        }
        WorkspaceHeap heap = lastHeap;
        if (heap == null || heap.thread != Thread.currentThread()) {
            heap = ThreadHome.mine().heap(this);
            lastHeap = heap;
        }
        Scope s = scopeHere(heap.home);
        s.enter(heap);
        return heap.bump(byteSize);
    }

    /**
     * {@link #malloc} of {@code count * elementByteSize} bytes, zeroed (the region is reused).
     *
     * @throws IllegalStateException if no scope is open on this thread
     */
    @Override
    public MemorySegment calloc(long count, long elementByteSize) {
        long bytes = io.datamem.internal.Checks.productOrMinusOne(count, elementByteSize);
        if (bytes < 0) {
            return MemorySegment.NULL;
        }
        MemorySegment p = malloc(bytes);
        if (p.address() != 0 && bytes > 0) {
            p.reinterpret(bytes).fill((byte) 0);
        }
        return p;
    }

    /**
     * A new block of {@code newByteSize} bytes holding the old one's; the old block stays until its
     * scope ends (arrays in a scope are not resized: this serves other users of the allocator).
     *
     * @throws IllegalStateException if no scope is open on this thread
     */
    @Override
    public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        MemorySegment moved = malloc(newByteSize);
        if (moved.address() != 0 && ptr.address() != 0) {
            long kept = Math.min(oldByteSize, newByteSize);
            if (kept > 0) {
                MemorySegment.copy(ptr.reinterpret(kept), 0, moved.reinterpret(kept), 0, kept);
            }
        }
        return moved;
    }

    /**
     * Gives the block back at once if it is the last one bumped in this thread's region (a
     * temporary closed right away); otherwise it goes back when the scope that allocated it ends.
     * Another thread's free does nothing more (the region is its thread's).
     */
    @Override
    public void free(MemorySegment ptr, long byteSize) {
        if (ptr.address() == 0) {
            return;
        }
        WorkspaceHeap heap = lastHeap;
        if (heap == null || heap.thread != Thread.currentThread()) {
            heap = ThreadHome.mine().heapIfAny(this);
        }
        if (heap != null) {
            heap.release(ptr.address(), byteSize);
        }
    }

    /**
     * The upstream's traits.
     *
     * @return the traits of the blocks
     */
    @Override
    public MemoryTraits traits() {
        return upstream.traits();
    }

    /**
     * What this workspace did, over all threads.
     *
     * @return the figures
     */
    public Figures figures() {
        long current = 0;
        long largest = 0;
        long regions = 0;
        long cycles = 0;
        long spills = 0;
        int threads = 0;
        for (WorkspaceHeap h : allHeaps) {
            current += h.currentBytes();
            largest = Math.max(largest, h.largestCycleBytes);
            regions += h.regionBytes();
            cycles += h.cycles;
            spills += h.spillCount;
            threads++;
        }
        WorkspaceHeap last = lastEnded;
        return new Figures(current, last == null ? 0 : last.lastCycleBytes, largest, regions, cycles, spills, threads);
    }

    /**
     * Gives the calling thread's region back to the upstream (the next scope on this thread starts
     * over, learning its size again). Other threads' regions go back when they end.
     *
     * @return false if a scope of this workspace is open on this thread (nothing was given back)
     */
    public boolean trim() {
        return ThreadHome.mine().dropHeap(this);
    }

    /**
     * The upstream its regions come from.
     *
     * @return the upstream allocator
     */
    public DataMemAllocator upstream() {
        return upstream;
    }

    @Override
    public String toString() {
        return "Workspace[" + name + ", " + options + "]";
    }
}
