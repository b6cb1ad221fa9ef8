package io.datamem.array;

import io.datamem.DataMemHandler;
import io.datamem.MemoryTraits;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.Cleaner;
import java.lang.ref.PhantomReference;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The memory behind an owning array and its views: the handler that frees it, the block and its
 * allocated size, and the arenas whose closing invalidates every segment handed out over it.
 *
 * <p>Segments are made when Java code first needs them, in two kinds of arena:
 * <ul>
 *   <li>a <em>local</em> arena, confined to the thread that created the array, made when that
 *       thread first reads or writes elements through the array's accessors. Closing a confined arena costs next to nothing; a shared one makes
 *       the JDK synchronise with every thread (a handshake of tens of microseconds). Arrays that one
 *       thread creates, fills, reads and closes, the common case, never pay for a shared arena;</li>
 *   <li>a <em>shared</em> arena, made when another thread accesses the elements, and for
 *       {@code segment()} and exports (user code may hand those to any thread).</li>
 * </ul>
 * A close or resize closes both before the block goes back. A local arena can be closed only by
 * its thread: when another thread closes (or resizes) memory that has one,
 * the array is closed at once (every accessor checks {@link #liveGeneration}) but the block is
 * <em>retired</em> to that thread, which closes the arena and frees the block the next time it
 * creates or closes an array; a thread that has ended can no longer touch the segment, so its
 * retired blocks are freed by whichever thread notices. A leaked array's local arena is left to
 * the garbage collector: its block is freed once no segment over it is reachable. Memory is thus
 * never returned while a segment can still reach it.
 *
 * <p>{@code NDArray.confined()} makes the arena strictly confined instead: one thread only, no
 * shared arena ever.
 *
 * <p>It is also the phantom reference that frees a leaked array: cleared by {@code close()}, or
 * enqueued when the owning array became unreachable unclosed (a leak, counted and logged), and then
 * run by the reaper thread. While the array is open the reference is kept reachable by a
 * {@link Registry} of the creating thread (see there: no lock and no atomic operation on that
 * thread's path).
 */
final class ArrayMemory extends PhantomReference<NDArray> implements Runnable {

    /** The cleaner of the rare paths (leaked blocks waiting for a segment's scope to be collected), made on first use. */
    private static final class Rare {
        static final Cleaner CLEANER = Cleaner.create(Thread.ofPlatform().name("datamem-array-cleaner").daemon(true)
                .factory());
    }

    static final AtomicLong LEAKS = new AtomicLong();
    private static final System.Logger LOG = System.getLogger("io.datamem.array.NDArray");
    /** {@link #liveGeneration} once a close has begun. */
    private static final int CLOSING = -1;
    /** The generation of a memory just made: what its owner is made for. */
    static final int FIRST_GENERATION = 1;

    /** Blocks retired to the thread whose local arena still reaches them. */
    private static final ConcurrentHashMap<Thread, ConcurrentLinkedQueue<Retired>> RETIRED = new ConcurrentHashMap<>();
    /** How many blocks wait in {@link #RETIRED}: the creation path looks only at this. */
    private static final AtomicInteger RETIRED_COUNT = new AtomicInteger();

    /** The registry of the thread that made this owner, or null (foreign memory). */
    private final Registry registry;
    /** This memory's index in {@link #registry}; written by the registry's thread only. */
    int slot = -1;

    final DataMemHandler handler;   // null: foreign memory, never freed by datamem
    final MemoryTraits traits;
    // The thread that created the array: the only one that gets a local arena (see the class comment).
    private final Thread creator;
    // What the owner was, for leak reports and messages: built only when one is needed, since an
    // array is created far more often than it is reported.
    private final DType dtype;      // null for foreign memory
    private final long[] shape;

    /**
     * The generation arrays may use the memory at: {@link #generation} while open, {@link #CLOSING}
     * once a close has begun. Element accessors compare it with their array's generation on every
     * access: a closed or resized memory is refused even through a segment whose arena another
     * thread must close. The accessors read it in plain mode ({@link #liveGenerationPlain()}): a
     * close that happens-before an access is seen by it, as the close's other writes are; an access
     * racing a close may still pass, and then reaches a block that is not yet returned, since the
     * block goes back only after every arena over it is closed. A volatile read would order every
     * later load after it: the compiler could then not keep the array's fields in registers across a
     * loop of accessor calls, and such a loop cost 2 ns per element instead of the segment's 0.08
     * (see docs/decisions.md). It is written in release mode for the same reasons: a volatile
     * write's full fence orders nothing this protocol needs (accesses that happen after a close see
     * it through the synchronisation that orders them; racing ones are stopped by the arenas), and
     * would cost one fence per array created and one per array closed.
     */
    volatile int liveGeneration;

    private static final VarHandle LIVE_GENERATION;

    static {
        try {
            LIVE_GENERATION = MethodHandles.lookup().findVarHandle(ArrayMemory.class, "liveGeneration", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** {@link #liveGeneration}, read in plain mode: the element accessors' check (see there). */
    int liveGenerationPlain() {
        return (int) LIVE_GENERATION.get(this);
    }

    // Guarded by 'this'.
    private long address;
    private long allocatedByteSize;
    // Bumped whenever the block is (re)attached: segments of an older generation are invalid.
    private int generation;
    // The shared arena and its segment over the block (or, when strictly confined, the confined
    // ones). For foreign memory: the caller's segment, no arena.
    private Arena arena;
    private MemorySegment data;
    // The local arena, confined to localOwner, and its segment (see the class comment).
    private Arena local;
    private MemorySegment localData;
    private Thread localOwner;
    private boolean freed;
    private boolean closedExplicitly;
    private int exports;
    // The thread the segments are strictly confined to (NDArray.confined()), or null.
    private Thread confinedTo;

    /** A block that goes back once its thread closed the local arena over it. */
    private record Retired(DataMemHandler handler, long address, long byteSize, Arena local, Thread owner) {
    }

    private ArrayMemory(NDArray owner, Registry registry, DataMemHandler handler, MemoryTraits traits, DType dtype,
                        long[] shape) {
        super(owner, owner == null ? null : Reaper.QUEUE);
        this.registry = registry;
        this.handler = handler;
        this.traits = traits;
        this.creator = Thread.currentThread();
        this.dtype = dtype;
        this.shape = shape;
    }

    /**
     * Memory allocated through a handler, owned by datamem, for an owner of a dtype and shape (the
     * shape array is kept, not copied: the caller must not change it).
     */
    static ArrayMemory owned(NDArray owner, DataMemHandler handler, MemorySegment block, long allocatedByteSize,
                             DType dtype, long[] shape) {
        drainRetired();
        MemoryTraits traits = handler.allocator().traitsOf(block);
        Registry r = Registry.mine();
        ArrayMemory m = new ArrayMemory(owner, r, handler, traits, dtype, shape);
        m.attach(block.address(), allocatedByteSize);
        r.add(m);
        return m;
    }

    /**
     * Memory that belongs to someone else: its segment keeps its own scope.
     */
    static ArrayMemory foreign(MemorySegment segment, MemoryTraits traits) {
        ArrayMemory m = new ArrayMemory(null, null, null, traits, null, null);
        m.address = segment.address();
        m.allocatedByteSize = segment.byteSize();
        m.data = segment;
        return m;
    }

    /** What the owner was: {@code NDArray[float64, shape [2, 3]]}, or {@code foreign memory}. */
    String description() {
        return dtype == null ? "foreign memory" : "NDArray[" + dtype + ", shape " + Arrays.toString(shape) + "]";
    }

    private void attach(long newAddress, long newAllocatedByteSize) {
        address = newAddress;
        allocatedByteSize = newAllocatedByteSize;
        generation++;
        LIVE_GENERATION.setRelease(this, generation);
        arena = null;
        data = null;
        local = null;
        localData = null;
        localOwner = null;
    }

    synchronized long address() {
        return address;
    }

    synchronized long allocatedByteSize() {
        return allocatedByteSize;
    }

    synchronized int generation() {
        return generation;
    }

    /**
     * The host segment over the whole block for element access on the calling thread, for an array
     * made at generation {@code gen} over {@code [oldAddress, oldAddress + oldByteSize)}: the local
     * segment if this thread is (or now becomes) the local arena's thread, else the shared one (made
     * now if none was yet); strictly confined memory gives its confined segment to its thread only.
     * If the block is no longer that generation's, or is freed or being closed: a segment over the
     * old range whose scope is closed, so that any access throws {@link IllegalStateException}, as a
     * segment handed out before the close or resize does.
     *
     * @return the segment, or null if the host cannot access this memory
     * @throws WrongThreadException if the memory is strictly confined to another thread
     */
    synchronized MemorySegment accessData(int gen, long oldAddress, long oldByteSize) {
        MemorySegment dead = deadOrNull(gen, oldAddress, oldByteSize);
        if (dead != null || handler == null || !traits.hostAccessible()) {
            return dead != null ? dead : handler == null ? data : null;
        }
        Thread me = Thread.currentThread();
        if (confinedTo != null) {
            return confinedData(me);
        }
        if (local == null && data == null && me == creator) {
            local = Arena.ofConfined();
            localOwner = me;
            localData = MemorySegment.ofAddress(address).reinterpret(allocatedByteSize, local, null);
        }
        if (local != null && localOwner == me) {
            return localData;
        }
        return sharedData();
    }

    /**
     * The host segment over the whole block that may go to any thread ({@code segment()}, exports):
     * the shared one, made now if none was yet; strictly confined memory gives its confined segment
     * to its thread only. As {@link #accessData} for a stale generation or a closing memory.
     *
     * @return the segment, or null if the host cannot access this memory
     * @throws WrongThreadException if the memory is strictly confined to another thread
     */
    synchronized MemorySegment data(int gen, long oldAddress, long oldByteSize) {
        MemorySegment dead = deadOrNull(gen, oldAddress, oldByteSize);
        if (dead != null || handler == null || !traits.hostAccessible()) {
            return dead != null ? dead : handler == null ? data : null;
        }
        return confinedTo != null ? confinedData(Thread.currentThread()) : sharedData();
    }

    // Under the lock: a closed segment over the old range, or null if gen may use the memory.
    private MemorySegment deadOrNull(int gen, long oldAddress, long oldByteSize) {
        if (handler == null || !(freed || closedExplicitly || gen != generation)) {
            return null;
        }
        Arena closed = Arena.ofConfined();
        MemorySegment dead = MemorySegment.ofAddress(oldAddress).reinterpret(oldByteSize, closed, null);
        closed.close();
        return dead;
    }

    // Under the lock, open memory.
    private MemorySegment sharedData() {
        if (data == null) {
            arena = Arena.ofShared();
            data = MemorySegment.ofAddress(address).reinterpret(allocatedByteSize, arena, null);
        }
        return data;
    }

    // Under the lock, open, strictly confined memory.
    private MemorySegment confinedData(Thread me) {
        if (confinedTo != me) {
            throw new WrongThreadException(description() + " is confined to thread '" + confinedTo.getName()
                    + "'; only that thread may access its memory");
        }
        if (data == null) {
            arena = Arena.ofConfined();
            data = MemorySegment.ofAddress(address).reinterpret(allocatedByteSize, arena, null);
        }
        return data;
    }

    /**
     * Confines the segments over the block to the calling thread strictly (no shared segment ever).
     *
     * @return true if confined now, false if it already was to this thread
     * @throws IllegalStateException if freed, or a shared segment was already handed out, or the
     *                               memory is confined to another thread, or another thread
     *                               already accessed its elements
     */
    synchronized boolean confine() {
        Thread me = Thread.currentThread();
        if (freed || closedExplicitly) {
            throw new IllegalStateException(description() + " is closed");
        }
        if (confinedTo == me) {
            return false;
        }
        if (confinedTo != null) {
            throw new IllegalStateException(description() + " is already confined to thread '"
                    + confinedTo.getName() + "'");
        }
        if (data != null || (local != null && localOwner != me)) {
            throw new IllegalStateException(description() + "'s memory was already reached through a shared"
                    + " segment or from another thread; call confined() right after creating the array, before"
                    + " any access from elsewhere");
        }
        confinedTo = me;
        if (local != null) {   // this thread's local arena becomes the confined one
            arena = local;
            data = localData;
            local = null;
            localData = null;
            localOwner = null;
        }
        return true;
    }

    synchronized Thread confinedTo() {
        return confinedTo;
    }


    /**
     * The lifecycle check every path that hands out an address or a segment makes: whether an array
     * made at generation {@code gen} may still reach this memory.
     *
     * @param gen the generation the array was made for
     * @param who the array, named in the message
     * @throws IllegalStateException if the memory is freed or being closed, was reallocated since
     *                               ({@code gen} is stale), or (foreign memory) its segment's scope
     *                               is closed
     */
    synchronized void checkLive(int gen, Object who) {
        IllegalStateException e = notLive(gen, who);
        if (e != null) {
            throw e;
        }
    }

    /** Whether {@link #checkLive} would pass. */
    synchronized boolean isLive(int gen) {
        return notLive(gen, null) == null;
    }

    /**
     * Why an array made at generation {@code gen} may no longer reach this memory, or null if it
     * may: the exception {@link #checkLive} would throw.
     */
    synchronized IllegalStateException whyNotLive(int gen, Object who) {
        return notLive(gen, who);
    }

    // Under the lock. 'who' is turned into text only when the check fails.
    private IllegalStateException notLive(int gen, Object who) {
        if (handler == null) {
            if (!data.scope().isAlive()) {
                return new IllegalStateException(who + " is closed: the segment it wraps is no longer alive (its"
                        + " arena was closed)");
            }
            return null;
        }
        if (freed || closedExplicitly) {
            return new IllegalStateException(who + " is closed: its memory was freed through handler '"
                    + handler.name() + "'");
        }
        if (gen != generation) {
            return new IllegalStateException(who + " is no longer valid: the owning array was resized, which"
                    + " reallocated its memory");
        }
        return null;
    }

    /**
     * Checks and pins in one step: the memory is live for generation {@code gen}, and stays so (it
     * can be neither closed nor resized) until {@link #unpinExport()}. A close or resize that began
     * earlier makes this fail; one that begins later is refused while the pin is held.
     *
     * @throws IllegalStateException as {@link #checkLive}
     */
    synchronized void pinExport(int gen, Object who) {
        checkLive(gen, who);
        exports++;
    }

    /**
     * {@link #pinExport(int, Object)}, and under the same lock {@link #data} (when asked): the pin
     * is taken only if the segment could be.
     *
     * @return the segment, or null without {@code withData}
     */
    synchronized MemorySegment pinExport(int gen, Object who, boolean withData, long oldAddress, long oldByteSize) {
        checkLive(gen, who);
        MemorySegment d = withData ? data(gen, oldAddress, oldByteSize) : null;
        exports++;
        return d;
    }

    synchronized void unpinExport() {
        if (exports <= 0) {
            throw new IllegalStateException(description() + ": no export to release");
        }
        exports--;
    }

    synchronized int exports() {
        return exports;
    }

    /**
     * Invalidates the segments over the block that can be invalidated from this thread, without
     * freeing: the shared arena, and the local one if it is this thread's. Another thread's local
     * arena stays open (only that thread can close it): the block must then stay where it is until
     * it is {@linkplain #retireLocal() retired} to that thread.
     *
     * @return true if no segment can reach the block any more; false if another thread's local
     *         arena still can
     * @throws IllegalStateException if a segment is acquired by a native call in progress
     * @throws WrongThreadException  if the memory is strictly confined to another thread
     */
    synchronized boolean invalidate() {
        if (arena != null && arena.scope().isAlive()) {
            try {
                arena.close();
            } catch (WrongThreadException e) {
                throw new WrongThreadException(description() + " is confined to thread '" + confinedTo.getName()
                        + "': only that thread may close or resize it", e);
            }
        }
        if (local != null && localOwner == Thread.currentThread()) {
            local.close();
            local = null;
            localData = null;
            localOwner = null;
        }
        return local == null;
    }

    /**
     * Hands the block, with the other thread's local arena still over it, to that thread, which
     * closes the arena and frees the block (see the class comment); detaches both from this memory.
     * Call after {@link #invalidate()} returned false, before attaching another block.
     */
    synchronized void retireLocal() {
        retire(new Retired(handler, address, allocatedByteSize, local, localOwner));
        local = null;
        localData = null;
        localOwner = null;
    }

    /** After a failed resize: new segments over the unchanged block (another thread's local arena stays valid). */
    synchronized void reattach() {
        Arena keptLocal = local;
        MemorySegment keptData = localData;
        Thread keptOwner = localOwner;
        attach(address, allocatedByteSize);
        local = keptLocal;
        localData = keptData;
        localOwner = keptOwner;
    }

    /**
     * After a resize whose {@code realloc} threw with the block freed (a guard below found an
     * overrun): the memory is gone, as after a close, without freeing it again. Call after
     * {@link #invalidate()} returned true.
     */
    void released() {
        synchronized (this) {
            closedExplicitly = true;
            LIVE_GENERATION.setRelease(this, CLOSING);
            freed = true;
        }
        unregister();
    }

    /** After a successful resize (no local arena over the old block is left: closed or retired). */
    synchronized void reattach(long newAddress, long newAllocatedByteSize) {
        attach(newAddress, newAllocatedByteSize);
    }

    /**
     * When the creating thread's local arena still reaches the block, hands the block to that thread
     * to free (it alone may close the arena) and forgets the arena; false when there is none. Caller
     * holds this memory's lock and has marked it freed.
     */
    private boolean retireToLocalOwner() {
        if (local == null) {
            return false;
        }
        retire(new Retired(handler, address, allocatedByteSize, local, localOwner));
        local = null;
        localData = null;
        localOwner = null;
        return true;
    }

    /**
     * Closes explicitly, under one lock: refuses new access at once, invalidates what this thread
     * can, and frees the block through the handler (or retires it to the thread whose local arena
     * still reaches it); the phantom reference is cleared and, on the creating thread, dropped from
     * its registry.
     *
     * @throws IllegalStateException if a buffer export is held or a segment is acquired
     * @throws WrongThreadException  if the memory is strictly confined to another thread
     */
    void close() {
        long addr;
        long size;
        synchronized (this) {
            if (freed) {
                return;
            }
            if (exports > 0) {
                throw new IllegalStateException("cannot close " + description() + ": " + exports
                        + " buffer export(s) still held; release them first");
            }
            invalidate();
            closedExplicitly = true;
            LIVE_GENERATION.setRelease(this, CLOSING);
            freed = true;
            if (retireToLocalOwner()) {
                addr = 0;
                size = -1;
            } else {
                addr = address;
                size = allocatedByteSize;
            }
        }
        unregister();
        if (size >= 0) {
            handler.allocator().free(MemorySegment.ofAddress(addr), size);
        }
    }

    /** No leak action is needed any more: clears the reference, and leaves the registry if on its thread. */
    private void unregister() {
        clear();
        if (registry != null && registry.owner == Thread.currentThread()) {
            registry.remove(this);
        }
    }

    /** The leak action: run by the reaper once the owning array became unreachable (or by close, as a no-op). */
    @Override
    public void run() {
        long addr;
        long size;
        boolean leak;
        synchronized (this) {
            if (freed || handler == null) {
                freed = true;
                return;
            }
            leak = !closedExplicitly;
            LIVE_GENERATION.setRelease(this, CLOSING);
            if (leak && arena != null && confinedTo != null && confinedTo != Thread.currentThread()
                    && arena.scope().isAlive()) {
                // Another thread's confined arena cannot be closed from here. Its segments are the only
                // way to the memory, and each holds the arena's scope: once the scope is unreachable,
                // nothing can touch the block and it is freed.
                MemorySegment.Scope scope = arena.scope();
                arena = null;
                data = null;
                Rare.CLEANER.register(scope, this::freeLeaked);
                return;
            }
            if (leak) {
                try {
                    invalidate();
                } catch (IllegalStateException e) {
                    // A native call still holds a segment: freeing now could crash it. Keep the block.
                    LOG.log(System.Logger.Level.ERROR, "datamem: leaked " + description()
                            + " could not be freed because a segment is still acquired; " + allocatedByteSize
                            + " bytes stay allocated");
                    return;
                }
            }
            if (local != null && leak) {
                // The creating thread's local arena: no array can reach it any more, but a segment in a
                // frame of that thread still may, for a moment. Once its scope is unreachable, nothing
                // can touch the block, and it is freed.
                MemorySegment.Scope scope = local.scope();
                local = null;
                localData = null;
                localOwner = null;
                Rare.CLEANER.register(scope, this::freeLeaked);
                return;
            }
            freed = true;
            if (retireToLocalOwner()) {
                return;
            }
            addr = address;
            size = allocatedByteSize;
        }
        handler.allocator().free(MemorySegment.ofAddress(addr), size);
        if (leak) {
            reportLeak(size);
        }
    }

    /** Frees a leaked confined block once no segment over it can be reached. */
    private void freeLeaked() {
        long addr;
        long size;
        synchronized (this) {
            if (freed) {
                return;
            }
            freed = true;
            addr = address;
            size = allocatedByteSize;
        }
        handler.allocator().free(MemorySegment.ofAddress(addr), size);
        reportLeak(size);
    }

    // ---------------------------------------------------------------------------------------------
    // Registries and the reaper

    /**
     * What keeps the phantom references of one thread's open owners reachable (a phantom reference
     * that is itself unreachable is never enqueued, and its leak would go unnoticed). Only the
     * thread it belongs to changes it while that thread lives: {@link #add} and {@link #remove} are
     * plain array stores, no lock and no atomic operation, unlike the JDK's {@code Cleaner}, whose
     * register and clean each take a lock on a shared list. An entry another thread closed (or the
     * reaper freed) stays until its thread sweeps it out: {@link #add} drops entries whose memory is
     * {@linkplain #done() done} before it grows the array. Once the thread has ended (which
     * {@link Thread#isAlive()} makes visible with a happens-before edge), the reaper takes the
     * registry over: it sweeps it and forgets it once empty. Every registry is also listed in
     * {@link #ALL}, so a thread's end does not make its open owners' references unreachable.
     */
    static final class Registry {
        private static final ConcurrentLinkedQueue<Registry> ALL = new ConcurrentLinkedQueue<>();
        private static final ThreadLocal<Registry> MINE = ThreadLocal.withInitial(() -> {
            Registry r = new Registry(Thread.currentThread());
            ALL.add(r);
            Reaper.ensureStarted();
            return r;
        });

        final Thread owner;
        private ArrayMemory[] slots = new ArrayMemory[8];
        private int count;

        private Registry(Thread owner) {
            this.owner = owner;
        }

        static Registry mine() {
            return MINE.get();
        }

        // On the owner's thread (or the reaper's, once the owner ended).
        void add(ArrayMemory m) {
            if (count == slots.length) {
                sweep();
                if (count > slots.length / 2) {
                    slots = Arrays.copyOf(slots, slots.length * 2);
                }
            }
            m.slot = count;
            slots[count++] = m;
        }

        // On the owner's thread (or the reaper's, once the owner ended).
        void remove(ArrayMemory m) {
            int i = m.slot;
            if (i < 0 || i >= count || slots[i] != m) {
                return;
            }
            ArrayMemory last = slots[--count];
            slots[i] = last;
            last.slot = i;
            slots[count] = null;
            m.slot = -1;
        }

        /** Drops the entries that need no leak action any more. */
        void sweep() {
            for (int i = count - 1; i >= 0; i--) {
                if (slots[i].done()) {
                    remove(slots[i]);
                }
            }
        }

        int size() {
            return count;
        }

        /** On the reaper: sweeps the registries of ended threads, forgetting those left empty. */
        static void sweepEnded() {
            for (Registry r : ALL) {
                if (!r.owner.isAlive()) {
                    r.sweep();
                    if (r.count == 0) {
                        ALL.remove(r);
                    }
                }
            }
        }

        /** How many owners all registries hold (tests). */
        static int registered() {
            int n = 0;
            for (Registry r : ALL) {
                n += r.count;   // racy for live threads: only for tests on quiescent threads
            }
            return n;
        }
    }

    /** Whether no leak action is needed any more: closed, freed or being freed. Any thread. */
    boolean done() {
        return liveGeneration == CLOSING;
    }

    /** The thread that runs the leak action of leaked owners, and sweeps the registries of ended threads. */
    private static final class Reaper {
        static final ReferenceQueue<NDArray> QUEUE = new ReferenceQueue<>();
        private static final long SWEEP_MILLIS = 1000;
        private static volatile boolean started;

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
                    Reference<? extends NDArray> ref = QUEUE.remove(SWEEP_MILLIS);
                    if (ref instanceof ArrayMemory m) {
                        m.run();
                    }
                    if (System.nanoTime() - lastSweep >= SWEEP_MILLIS * 1_000_000L) {
                        Registry.sweepEnded();
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

    // ---------------------------------------------------------------------------------------------
    // Retired blocks

    private static void retire(Retired r) {
        if (!r.owner().isAlive()) {
            release(r, false);   // an ended thread can no longer touch its confined segment
            return;
        }
        RETIRED.computeIfAbsent(r.owner(), t -> new ConcurrentLinkedQueue<>()).add(r);
        RETIRED_COUNT.incrementAndGet();
        releaseEndedThreads();   // also catches an owner that ended since the check above
    }

    /**
     * Frees what other threads retired to the calling thread (closing its local arenas over those
     * blocks first), and what was retired to threads that have ended. Called when a thread creates
     * or closes an array; costs one read when nothing is retired.
     */
    static void drainRetired() {
        if (RETIRED_COUNT.get() == 0) {
            return;
        }
        ConcurrentLinkedQueue<Retired> mine = RETIRED.get(Thread.currentThread());
        if (mine != null) {
            for (Retired r; (r = mine.poll()) != null; ) {
                RETIRED_COUNT.decrementAndGet();
                release(r, true);
            }
        }
        releaseEndedThreads();
    }

    /**
     * How many blocks wait for the thread whose local arena reaches them (see the class comment).
     *
     * @return the number of retired blocks not yet freed
     */
    static int retiredCount() {
        return RETIRED_COUNT.get();
    }

    private static void releaseEndedThreads() {
        for (Thread t : RETIRED.keySet()) {
            if (!t.isAlive()) {
                ConcurrentLinkedQueue<Retired> q = RETIRED.remove(t);
                if (q != null) {
                    for (Retired r; (r = q.poll()) != null; ) {
                        RETIRED_COUNT.decrementAndGet();
                        release(r, false);
                    }
                }
            }
        }
    }

    // On the owner's thread (closeLocal) or after it ended.
    private static void release(Retired r, boolean closeLocal) {
        if (closeLocal && r.local().scope().isAlive()) {
            r.local().close();
        }
        r.handler().allocator().free(MemorySegment.ofAddress(r.address()), r.byteSize());
    }

    private void reportLeak(long size) {
        LEAKS.incrementAndGet();
        LOG.log(System.Logger.Level.WARNING, "datamem: leaked " + description() + " (" + size
                + " bytes, handler '" + handler.name() + "') was never closed; the Cleaner freed it."
                + " Close arrays explicitly, for example with try-with-resources");
    }
}
