package io.datamem.array;

import io.datamem.DataMemHandler;
import io.datamem.MemoryTraits;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
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
 * <p>Element access reaches the block in one of two ways, each made when first needed:
 * <ul>
 *   <li>on the thread that created the array, through its <em>local</em> segment: a segment over
 *       the block in no arena at all (the global scope), which never leaves the array's accessors
 *       and is used only after they checked that the calling thread is its owner
 *       ({@link #localOwner}) and the generation is live. It costs nothing to make or to drop:
 *       arrays that one thread creates, fills, reads and closes, the common case, make no arena;</li>
 *   <li>on any other thread, and for {@code segment()} and exports (user code may hand those to any
 *       thread), through a <em>shared</em> arena's segment, whose close makes the JDK synchronise
 *       with every thread (a handshake of tens of microseconds) so that no access through it is in
 *       progress when the block goes back.</li>
 * </ul>
 * A close or resize closes the shared arena before the block goes back. The local segment has no
 * arena to close; the owning thread cannot be inside an access while it closes or resizes. When
 * another thread closes (or resizes) memory whose owner thread has a local segment, the array is
 * closed at once (every accessor checks {@link #liveGeneration}) but the block is <em>retired</em>
 * to the owner thread, which frees it the next time it creates or closes an array, outside any
 * access; a thread that has ended can no longer access anything, so its retired blocks are freed
 * by whichever thread notices. A leaked array's block is retired the same way. Memory is thus never
 * returned while an access through a segment can still reach it.
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

    static final AtomicLong LEAKS = new AtomicLong();
    private static final System.Logger LOG = System.getLogger("io.datamem.array.NDArray");
    /** {@link #liveGeneration} once a close has begun. */
    private static final int CLOSING = -1;
    /** {@link #liveGeneration} while a resize, under the lock, moves the block. */
    private static final int RESIZING = -2;
    /** The generation of a memory just made: what its owner is made for. */
    static final int FIRST_GENERATION = 1;

    /** Blocks retired to the thread whose local segment may still reach them. */
    private static final ConcurrentHashMap<Thread, ConcurrentLinkedQueue<Retired>> RETIRED = new ConcurrentHashMap<>();
    /** How many blocks wait in {@link #RETIRED}: the creation path looks only at this. */
    private static final AtomicInteger RETIRED_COUNT = new AtomicInteger();

    /** The registry of the thread that made this owner, or null (foreign memory). */
    private final Registry registry;
    /** This memory's index in {@link #registry}; written by the registry's thread only. */
    int slot = -1;

    final DataMemHandler handler;   // null: foreign memory, never freed by datamem
    final MemoryTraits traits;
    // The thread that created the array: the only one that gets a local segment (see the class comment).
    private final Thread creator;
    // What the owner was, for leak reports and messages: built only when one is needed, since an
    // array is created far more often than it is reported.
    private final DType dtype;      // null for foreign memory
    private final long[] shape;

    /**
     * The generation arrays may use the memory at: {@link #generation} while open, {@link #CLOSING}
     * once a close has begun, {@link #RESIZING} while a resize moves the block. It is also what
     * decides who closes: a close, the leak action and a resize each <em>claim</em> the memory by a
     * compare-and-set from the live generation, so exactly one of them proceeds (see
     * {@link #close()}). Element accessors compare it with their array's generation on every
     * access: a closed or resized memory is refused even through a segment whose arena another
     * thread must close. The accessors read it in plain mode ({@link #liveGenerationPlain()}): a
     * close that happens-before an access is seen by it, as the close's other writes are; an access
     * racing a close may still pass, and then reaches a block that is not yet returned, since the
     * block goes back only after every arena over it is closed and, when another thread's local
     * segment may reach it, by that thread, outside any access. A volatile read would order every
     * later load after it: the compiler could then not keep the array's fields in registers across a
     * loop of accessor calls, and such a loop cost 2 ns per element instead of the segment's 0.08
     * (see docs/decisions.md). It is written in release mode for the same reasons: a volatile
     * write's full fence orders nothing this protocol needs (accesses that happen after a close see
     * it through the synchronisation that orders them; racing ones are stopped by the arenas and the retiring of blocks), and
     * would cost one fence per array created and one per array closed.
     */
    volatile int liveGeneration;

    private static final VarHandle LIVE_GENERATION;
    private static final VarHandle FREED;
    private static final VarHandle EXPORTS;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            LIVE_GENERATION = lookup.findVarHandle(ArrayMemory.class, "liveGeneration", int.class);
            FREED = lookup.findVarHandle(ArrayMemory.class, "freed", boolean.class);
            EXPORTS = lookup.findVarHandle(ArrayMemory.class, "exports", int.class);
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
    // ones). For foreign memory: the caller's segment, no arena. Written under the lock; read by a
    // close without it, after its claim (see close()).
    private volatile Arena arena;
    private MemorySegment data;
    /**
     * The thread that may reach the block through a local segment (see the class comment): the
     * creating thread from its first element access ({@link #grantLocal}), null before and once the
     * block is detached from it. Granted without the lock, as a Dekker handshake with the closes
     * and resizes, which take it: the grant writes this field, then reads {@link #liveGeneration};
     * a close or resize writes {@link #liveGeneration}, then reads this field, both volatile, so
     * that at least one sees the other: either the grant sees the close (and is refused) or the
     * close sees the grant (and retires the block to this thread instead of freeing it).
     */
    private volatile Thread localOwner;
    // Set once the block went back (or to whoever frees it: a retired block), or was given up; written
    // in release mode, read volatile.
    private volatile boolean freed;
    private boolean closedExplicitly;
    // Buffer exports and pins held. Changed under the lock; read by a close without it, after its claim.
    private volatile int exports;
    // The thread the segments are strictly confined to (NDArray.confined()), or null. Written under the
    // lock, read by grantLocal without it.
    private volatile Thread confinedTo;

    /**
     * A block that goes back once the thread whose local segment (or strictly confined arena, which
     * that thread then closes) reached it is outside any access.
     */
    private record Retired(DataMemHandler handler, long address, long byteSize, Arena confined, Thread owner) {
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
        arena = null;
        data = null;
        localOwner = null;
        generation = generation == Integer.MAX_VALUE ? 1 : generation + 1;   // never CLOSING or RESIZING
        // Last: a grant that sees this generation sees the fields above (and its own write of
        // localOwner comes after the clearing)
        LIVE_GENERATION.setRelease(this, generation);
    }

    /**
     * Claims the memory for a close (or, with {@code state} {@link #RESIZING}, a resize): a
     * compare-and-set of {@link #liveGeneration} from {@code live} to {@code state}, a full fence, so
     * that {@link #localOwner}, {@link #exports}, {@link #arena} and {@link #confinedTo}, read after
     * it, show every grant, pin, arena or confinement that did not see the claim (each publishes
     * itself, then reads {@link #liveGeneration}).
     *
     * @return whether this thread claimed it
     */
    private boolean claim(int live, int state) {
        return LIVE_GENERATION.compareAndSet(this, live, state);
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
     * Whether the calling thread may reach the block of generation {@code gen} through a local
     * segment (see the class comment): it is, or now becomes, {@link #localOwner}, which only the
     * thread that created the array can, while the memory is live for {@code gen}, datamem's,
     * host-accessible and not strictly confined to another thread. Takes no lock (see
     * {@link #localOwner}). The caller then makes the segment over the block it knows for
     * {@code gen}, uses it on this thread only, inside accessors that first check
     * {@link #liveGeneration}, and never hands it out.
     *
     * @return true if granted; false if this thread must use {@link #accessData} instead
     */
    boolean grantLocal(int gen) {
        Thread me = Thread.currentThread();
        if (me != creator || handler == null || !traits.hostAccessible()) {
            return false;
        }
        if (localOwner != me) {
            localOwner = me;     // volatile write, then the volatile reads below: see localOwner
            Thread confined = confinedTo;   // confine() writes it, then reads localOwner
            if (confined != null && confined != me) {
                return false;
            }
        }
        return liveGeneration == gen;
    }

    /**
     * The host segment over the whole block for element access on the calling thread when it has
     * no {@linkplain #grantLocal local segment}, for an array made at generation {@code gen} over
     * {@code [oldAddress, oldAddress + oldByteSize)}: the shared one (made now if none was yet);
     * strictly confined memory gives its confined segment to its thread only. If the block is no
     * longer that generation's, or is freed or being closed: a segment over the old range whose
     * scope is closed, so that any access throws {@link IllegalStateException}, as a segment handed
     * out before the close or resize does.
     *
     * @return the segment, or null if the host cannot access this memory
     * @throws WrongThreadException if the memory is strictly confined to another thread
     */
    synchronized MemorySegment accessData(int gen, long oldAddress, long oldByteSize) {
        return data(gen, oldAddress, oldByteSize);
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
        MemorySegment d = confinedTo != null ? confinedData(Thread.currentThread()) : sharedData();
        if (liveGeneration == CLOSING) {
            // A close claimed the memory without the lock before it could see the arena just published:
            // it may free the block without closing that arena, so its segment must not be handed out
            return deadSegment(oldAddress, oldByteSize);
        }
        return d;
    }

    // Under the lock: a closed segment over the old range, or null if gen may use the memory.
    private MemorySegment deadOrNull(int gen, long oldAddress, long oldByteSize) {
        if (handler == null || !(closed() || gen != generation)) {
            return null;
        }
        return deadSegment(oldAddress, oldByteSize);
    }

    /** Under the lock: whether the memory is closed, or a close has claimed it. */
    private boolean closed() {
        return freed || closedExplicitly || liveGeneration == CLOSING;
    }

    /** A segment over a range whose scope is closed: any access through it throws {@link IllegalStateException}. */
    private static MemorySegment deadSegment(long oldAddress, long oldByteSize) {
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
        if (closed()) {
            throw new IllegalStateException(description() + " is closed");
        }
        if (confinedTo == me) {
            return false;
        }
        if (confinedTo != null) {
            throw new IllegalStateException(description() + " is already confined to thread '"
                    + confinedTo.getName() + "'");
        }
        if (data != null || (localOwner != null && localOwner != me)) {
            throw new IllegalStateException(description() + "'s memory was already reached through a shared"
                    + " segment or from another thread; call confined() right after creating the array, before"
                    + " any access from elsewhere");
        }
        confinedTo = me;   // a local segment of this thread's stays: it is confined to it already
        if (liveGeneration == CLOSING) {   // a close claimed it meanwhile (see claim)
            confinedTo = null;
            throw new IllegalStateException(description() + " is closed");
        }
        Thread owner = localOwner;   // the creating thread's grant, racing this (see grantLocal)
        if (owner != null && owner != me) {
            confinedTo = null;
            throw new IllegalStateException(description() + "'s memory was already reached from another thread;"
                    + " call confined() right after creating the array, before any access from elsewhere");
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
    void checkLive(int gen, Object who) {
        if (handler != null && liveGeneration == gen) {
            return;   // see isLive
        }
        awaitDecision();
        synchronized (this) {
            IllegalStateException e = notLive(gen, who);
            if (e != null) {
                throw e;
            }
        }
    }

    /**
     * Whether {@link #checkLive} would pass. Owned memory answers from one volatile read: its live
     * generation equals an array's generation exactly while the memory is neither closing, closed,
     * freed nor being resized, and that array's generation is the current one (every close, free
     * and resize first claims {@link #liveGeneration} away from the live generation, and a refused
     * one restores it). What the lock would add is only a later moment to read at: a check answers
     * for the moment it reads, under the lock or not; exports hold a pin (see {@link #pinExport}).
     * A claim not yet decided is waited for ({@link #awaitDecision()}).
     */
    boolean isLive(int gen) {
        if (handler != null && liveGeneration == gen) {
            return true;
        }
        awaitDecision();
        synchronized (this) {
            return notLive(gen, null) == null;
        }
    }

    /**
     * Waits, when a close or resize has claimed owned memory and not yet decided, for its decision:
     * a close that finds an export pinned gives the memory back, so a check made in between must
     * not report it closed (an exporter holding a pin would otherwise see its own memory "closed"
     * for a moment, and fail, while the close fails because of its pin). Not under the lock: the
     * deciding close or resize may need it (a caller holding it, a resize, checks as it is).
     */
    private void awaitDecision() {
        if (handler == null || Thread.holdsLock(this)) {
            return;
        }
        awaitDecided();
    }

    /**
     * Spins (then yields) while {@link #liveGeneration} is a claim not yet decided.
     *
     * @return the first read of {@link #liveGeneration} that is not
     */
    private int awaitDecided() {
        int live;
        for (int spins = 0; deciding(live = liveGeneration); spins++) {
            if (spins < 128) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
        return live;
    }

    /** Whether {@code live}, a read of {@link #liveGeneration}, is a claim not yet decided. */
    private boolean deciding(int live) {
        return live == RESIZING || (live == CLOSING && !freed);
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
        if (closed()) {
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
     * <p>Owned memory is pinned without the lock, as a Dekker handshake with the closes and
     * resizes: the pin counts itself in {@link #exports} (an atomic add, a full fence), then reads
     * {@link #liveGeneration}; a close or resize claims {@link #liveGeneration} (a compare-and-set),
     * then reads {@link #exports}. At least one sees the other. If the pin finds the live generation,
     * it holds: a claim after its count sees the count and gives the memory back, refused. If it
     * finds a claim, the close or resize may or may not have seen the count, so the pin waits for
     * its decision: the memory given back at {@code gen} (refused because of this pin, which then
     * holds), or closed or moved (the pin uncounts itself and fails). Exactly one of the two
     * succeeds; never both, never neither.
     *
     * @throws IllegalStateException as {@link #checkLive}
     */
    void pinExport(int gen, Object who) {
        if (handler == null) {
            synchronized (this) {
                pin(gen, who);
            }
            return;
        }
        EXPORTS.getAndAdd(this, 1);
        if (awaitDecided() == gen) {
            return;   // otherwise closed, or moved to another generation
        }
        EXPORTS.getAndAdd(this, -1);
        synchronized (this) {
            IllegalStateException e = notLive(gen, who);
            throw e != null ? e : new IllegalStateException(who + " is no longer valid: its memory was closed or"
                    + " resized while it was being exported");
        }
    }

    // Under the lock: counts the pin first, then checks (a close that claimed without the lock sees the
    // count, or this check sees its claim: see claim)
    private void pin(int gen, Object who) {
        EXPORTS.getAndAdd(this, 1);
        IllegalStateException e = notLive(gen, who);
        if (e != null) {
            EXPORTS.getAndAdd(this, -1);
            throw e;
        }
    }

    /**
     * {@link #pinExport(int, Object)}, and under the same lock {@link #data} (when asked): the pin
     * is taken only if the segment could be.
     *
     * @return the segment, or null without {@code withData}
     */
    synchronized MemorySegment pinExport(int gen, Object who, boolean withData, long oldAddress, long oldByteSize) {
        pin(gen, who);
        try {
            return withData ? data(gen, oldAddress, oldByteSize) : null;
        } catch (RuntimeException | Error e) {
            EXPORTS.getAndAdd(this, -1);
            throw e;
        }
    }

    /**
     * Releases one pin, without the lock: a compare-and-set of the count (a close reading the count
     * while it changes sees the pin held or released, and settles under the lock either way).
     *
     * @throws IllegalStateException if no pin is held
     */
    void unpinExport() {
        for (;;) {
            int n = exports;
            if (n <= 0) {
                throw new IllegalStateException(description() + ": no export to release");
            }
            if (EXPORTS.compareAndSet(this, n, n - 1)) {
                return;
            }
        }
    }

    synchronized int exports() {
        return exports;
    }

    /**
     * Invalidates the segments over the block that can be invalidated from this thread, without
     * freeing: the shared arena, and the local segment if it is this thread's (this thread is not
     * inside an access). Another thread's local segment may be in use by an access that passed its
     * generation check before this close: the block must then stay where it is until it is
     * {@linkplain #retireLocal() retired} to that thread. The caller has claimed the memory (see
     * {@link #claim}) and restores {@link #liveGeneration} if this throws.
     *
     * @return true if no segment can reach the block any more; false if another thread's local
     *         segment still can
     * @throws IllegalStateException if a segment is acquired by a native call in progress
     * @throws WrongThreadException  if the memory is strictly confined to another thread
     */
    synchronized boolean invalidate() {
        Thread me = Thread.currentThread();
        if (confinedTo != null && confinedTo != me && localOwner != null) {
            throw new WrongThreadException(description() + " is confined to thread '" + confinedTo.getName()
                    + "': only that thread may close or resize it");
        }
        Arena a = arena;
        if (a != null && a.scope().isAlive()) {
            try {
                a.close();
            } catch (WrongThreadException e) {
                throw new WrongThreadException(description() + " is confined to thread '" + confinedTo.getName()
                        + "': only that thread may close or resize it", e);
            }
        }
        if (localOwner == me) {
            localOwner = null;
        }
        return localOwner == null;
    }

    /**
     * Hands the block, with the other thread's local segment still over it, to that thread, which
     * frees it outside any access (see the class comment); detaches both from this memory. Call
     * after {@link #invalidate()} returned false, before attaching another block.
     */
    synchronized void retireLocal() {
        retire(new Retired(handler, address, allocatedByteSize, null, localOwner));
        localOwner = null;
    }

    /** After a failed resize: new segments over the unchanged block (another thread's local segment stays its). */
    synchronized void reattach() {
        Thread keptOwner = localOwner;
        attach(address, allocatedByteSize);
        localOwner = keptOwner;   // still the one thread whose local segment may reach the block
    }

    /**
     * After a resize whose {@code realloc} threw with the block freed (a guard below found an
     * overrun): the memory is gone, as after a close, without freeing it again. Call after
     * {@link #invalidate()} returned true, under the resize's claim.
     */
    void released() {
        synchronized (this) {
            closedExplicitly = true;
            liveGeneration = CLOSING;
            freed = true;
        }
        unregister();
    }

    /**
     * Claims the memory for a resize, under the lock the caller holds: {@link #liveGeneration} goes
     * from {@code gen} to {@link #RESIZING}, which no close, pin or access passes, until
     * {@link #reattach} attaches the next generation (or {@link #released} closes it). Refused, the
     * claim undone, when a pin counted itself before the claim (pins take no lock: see
     * {@link #pinExport(int, Object)}).
     *
     * @throws IllegalStateException as {@link #checkLive}, also when a close has claimed it first,
     *                               or an export is held
     */
    void claimResize(int gen, Object who) {
        IllegalStateException e = notLive(gen, who);
        if (e == null && !claim(gen, RESIZING)) {
            e = notLive(gen, who);   // a close claimed it without the lock
        }
        if (e != null) {
            throw e;
        }
        int held = exports;   // read after the claim: a pin without the lock counted itself, or sees the claim
        if (held != 0) {
            LIVE_GENERATION.setRelease(this, gen);
            throw new IllegalStateException("cannot resize " + who + ": " + held + " buffer export(s) still held");
        }
    }

    /** After a resize's {@link #invalidate()} threw: the memory is live again at {@code gen}. */
    synchronized void unclaimResize(int gen) {
        LIVE_GENERATION.setRelease(this, gen);
    }

    /** After a successful resize (no local segment over the old block is left: dropped or retired). */
    synchronized void reattach(long newAddress, long newAllocatedByteSize) {
        attach(newAddress, newAllocatedByteSize);
    }

    /**
     * When another thread's local segment may still reach the block, hands the block to that thread
     * to free outside any access and forgets the segment; false when there is none (or it is the
     * calling thread's, which is not inside an access). Caller has claimed the memory and
     * invalidated what this thread could.
     */
    private boolean retireToLocalOwner() {
        Thread owner = localOwner;
        if (owner == null || owner == Thread.currentThread()) {
            return false;
        }
        retire(new Retired(handler, address, allocatedByteSize, null, owner));
        localOwner = null;
        return true;
    }

    /**
     * Closes explicitly: refuses new access at once, invalidates what this thread can, and frees the
     * block through the handler (or retires it to the thread whose local segment may still reach
     * it); the phantom reference is cleared and, on the creating thread, dropped from its registry.
     *
     * <p>The common case takes no lock: memory with no export, no arena (no segment ever went to
     * another thread or to user code) and no confinement is claimed by one compare-and-set of
     * {@link #liveGeneration} (see {@link #claim}) and freed, or retired to its local owner. Anything
     * else, or a pin, arena or confinement that raced the claim, is decided under the lock, as every
     * other change of this memory is.
     *
     * @throws IllegalStateException if a buffer export is held or a segment is acquired
     * @throws WrongThreadException  if the memory is strictly confined to another thread
     */
    void close() {
        for (;;) {
            int live = liveGeneration;
            if (live == CLOSING) {
                if (freed) {
                    return;
                }
                Thread.onSpinWait();   // another close decides: it commits, or is refused and restores
                continue;
            }
            if (live == RESIZING || exports != 0 || arena != null || confinedTo != null) {
                if (closeLocked()) {
                    return;
                }
                continue;
            }
            if (!claim(live, CLOSING)) {
                continue;
            }
            if (exports != 0 || arena != null || confinedTo != null) {
                finishClose(live);   // one of them raced the claim: settle it under the lock
                return;
            }
            closedExplicitly = true;
            long addr = address;   // written before the release of liveGeneration read above
            long size = allocatedByteSize;
            boolean retired = retireToLocalOwner();
            FREED.setRelease(this, true);
            unregister();
            if (!retired) {
                handler.allocator().free(MemorySegment.ofAddress(addr), size);
            }
            return;
        }
    }

    /**
     * {@link #close()} under the lock: claims, then {@link #finishClose}.
     *
     * @return false if the state changed before the claim (the caller looks again)
     */
    private boolean closeLocked() {
        int live;
        synchronized (this) {
            live = liveGeneration;
            if (live == CLOSING) {
                return freed;   // closed; or a close without the lock is deciding: look again
            }
            if (exports > 0) {
                throw exportsHeld();
            }
            if (!claim(live, CLOSING)) {
                return false;
            }
        }
        finishClose(live);
        return true;
    }

    private IllegalStateException exportsHeld() {
        return new IllegalStateException("cannot close " + description() + ": " + exports
                + " buffer export(s) still held; release them first");
    }

    /**
     * The rest of a close that claimed the memory from generation {@code live}, under the lock:
     * refused (and the claim undone) if an export is held or a segment cannot be invalidated.
     */
    private void finishClose(int live) {
        long addr;
        long size;
        synchronized (this) {
            try {
                if (exports > 0) {
                    throw exportsHeld();
                }
                invalidate();
            } catch (RuntimeException e) {
                LIVE_GENERATION.setRelease(this, live);
                throw e;
            }
            closedExplicitly = true;
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

    /** The leak action: run by the reaper once the owning array became unreachable. */
    @Override
    public void run() {
        long addr;
        long size;
        synchronized (this) {
            int live = liveGeneration;
            if (freed || handler == null || live == CLOSING || !claim(live, CLOSING)) {
                return;   // closed, or a close is deciding (it frees)
            }
            if (confinedTo != null && confinedTo != Thread.currentThread()
                    && ((arena != null && arena.scope().isAlive()) || localOwner != null)) {
                // Another thread's confined arena cannot be closed from here, and that thread may be inside
                // an access through it or its local segment: it closes the arena and frees the block itself,
                // outside any access (at once if it has ended: nothing can touch the block any more).
                freed = true;
                retire(new Retired(handler, address, allocatedByteSize, arena, confinedTo));
                arena = null;
                data = null;
                localOwner = null;
                reportLeak(allocatedByteSize);
                return;
            }
            try {
                invalidate();
            } catch (IllegalStateException e) {
                // A native call still holds a segment: freeing now could crash it. Keep the block.
                freed = true;   // given up: nobody frees it
                LOG.log(System.Logger.Level.ERROR, "datamem: leaked " + description()
                        + " could not be freed because a segment is still acquired; " + allocatedByteSize
                        + " bytes stay allocated");
                return;
            }
            freed = true;
            // The creating thread's local segment: no array can reach it any more, but an access in a
            // frame of that thread still may, for a moment (its array was last used there). That thread
            // frees the block outside any access.
            if (retireToLocalOwner()) {
                reportLeak(allocatedByteSize);
                return;
            }
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
     *
     * <p>{@link #add} stores a new owner's reference into {@link #slots}, which lives as long as the
     * thread. Once the collector has promoted that array to the old generation, every such store of a
     * young reference runs the collector's card-marking barrier to its end (G1: a full fence, then
     * dirtying and queueing the array's card for refinement), and the card-table bytes of two
     * threads' arrays, which the collector copies next to each other, share a cache line: on 2
     * threads a written array's lifecycle took 1.2x to 3x its 1-thread time, by where the last
     * collection had put the arrays. {@link #add} therefore replaces the array by a fresh copy every
     * {@link #REFRESH_ADDS} adds, so that it is young (the barrier stops at its first check) for all
     * but a moment after a collection that promoted it.
     */
    static final class Registry {
        private static final ConcurrentLinkedQueue<Registry> ALL = new ConcurrentLinkedQueue<>();
        private static final ThreadLocal<Registry> MINE = ThreadLocal.withInitial(() -> {
            Registry r = new Registry(Thread.currentThread());
            ALL.add(r);
            Reaper.ensureStarted();
            return r;
        });

        /** How often {@link #add} copies {@link #slots} into a young array (see the class comment): a power of 2. */
        static final int REFRESH_ADDS = 1 << 12;

        final Thread owner;
        private ArrayMemory[] slots = new ArrayMemory[8];
        private int count;
        private int adds;

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
            } else if ((++adds & (REFRESH_ADDS - 1)) == 0) {
                slots = slots.clone();   // young again: see the class comment
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

    /** Whether no leak action is needed any more: closed, freed or given up. Any thread. */
    boolean done() {
        return freed;
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
            release(r, false);   // an ended thread can no longer touch its segments
            return;
        }
        RETIRED.computeIfAbsent(r.owner(), t -> new ConcurrentLinkedQueue<>()).add(r);
        RETIRED_COUNT.incrementAndGet();
        releaseEndedThreads();   // also catches an owner that ended since the check above
    }

    /**
     * Frees what other threads retired to the calling thread (blocks its local segments reached), and what was retired to threads that have ended. Called when a thread creates
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
     * How many blocks wait for the thread whose local segment may reach them (see the class comment).
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

    // On the owner's thread, outside any access (onOwner), or after it ended.
    private static void release(Retired r, boolean onOwner) {
        if (onOwner && r.confined() != null && r.confined().scope().isAlive()) {
            r.confined().close();
        }
        r.handler().allocator().free(MemorySegment.ofAddress(r.address()), r.byteSize());
    }

    private void reportLeak(long size) {
        LEAKS.incrementAndGet();
        LOG.log(System.Logger.Level.WARNING, "datamem: leaked " + description() + " (" + size
                + " bytes, handler '" + handler.name() + "') was never closed; datamem frees it."
                + " Close arrays explicitly, for example with try-with-resources");
    }
}
