package io.datamem.array;

import io.datamem.AllocationRefusal;
import io.datamem.DataMemHandler;
import io.datamem.MemoryTraits;
import io.datamem.spi.BlockReleased;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.PhantomReference;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * The memory behind an owning array and its views, and the one owner of its lifecycle: share,
 * hold (exports), close, resize and the leak action all go through here.
 *
 * <p>Element access reads two fields, in plain mode, and lets the JDK's check on the segment it
 * picks decide:
 * <ul>
 *   <li>on the thread that created the memory, {@link #owner}, while the memory is not shared, it
 *       goes through {@link #ALL}, a segment over the whole address space that is never closed.
 *       That thread closes or resizes without synchronising with anyone: it cannot be inside one of
 *       its own accesses meanwhile. A close clears {@link #owner}, so its next access goes through
 *       {@link #seg}, and fails;</li>
 *   <li>on any other thread, and on every thread once the memory is shared, it goes through
 *       {@link #seg}: {@link #NOT_SHARED} (a segment whose scope is closed: the access throws,
 *       reported as the memory's belonging to its owner) until the
 *       memory is {@linkplain #share shared}, then a segment of a shared arena of this memory alone,
 *       which a close or resize closes first: the JDK then synchronises with every thread (a
 *       handshake of tens of microseconds), so that no access through it is in progress when the
 *       block goes back;</li>
 *   <li>once closed, {@link #seg} is {@link #DEAD} (or {@link #CLOSING} while a close decides, or
 *       {@link #MOVED} after a resize), so that every access throws, on any thread.</li>
 * </ul>
 * Every segment the accessors may see is of a shared-kind or global session (never a confined one),
 * so the JDK's own check takes one path whatever the memory's state: the compiler's speculation on
 * it holds through every change (a confined home segment replaced by a shared one once cost a
 * matrix multiply compiled before the change 4x, by the failed loop predicates it left).
 *
 * <p>The accessors never do anything but read these fields and throw when the check fails: no path
 * of theirs returns after changing anything, so the compiler keeps their loads out of the user's
 * loops whatever else the process did (see docs/decisions.md). A close or resize from another thread
 * than the owner cannot know whether the owner is inside an access that passed its check before: the
 * block is then <em>retired</em> to the owner, which frees it the next time it creates or closes an
 * array, or as soon as it is seen waiting ({@link ThreadHome#retire}).
 *
 * <p>State changes are compare-and-sets of {@code seg} ({@link #SEG}); what only some arrays need
 * (holds, the arenas of shared memory and of a confined array's {@code segment()}, strict
 * confinement) lives in an {@link Extras} made on first need and changed under its lock.
 *
 * <p>It is also the phantom reference that frees a leaked array: cleared by a close, or enqueued
 * when the owning array became unreachable unclosed (a leak, counted and logged), then run by the
 * reaper thread ({@link #leaked()}).
 */
final class ArrayMemory extends PhantomReference<NDArray> {

    static final AtomicLong LEAKS = new AtomicLong();
    private static final System.Logger LOG = System.getLogger("io.datamem.array.NDArray");

    /** What the owner thread's accesses go through: the whole address space, in the global scope. */
    static final MemorySegment ALL = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);
    /** {@link #seg} of live memory not shared yet: other threads' accesses fail on it. */
    static final MemorySegment NOT_SHARED = deadSegment();
    /** {@link #seg} once closed: a segment whose (shared) scope is closed, so any access on any thread throws. */
    static final MemorySegment DEAD = deadSegment();
    /** {@link #seg} once a resize moved the arrays to a new memory: closed, but reported as resized. */
    static final MemorySegment MOVED = deadSegment();
    /** {@link #seg} once the workspace scope the memory was allocated in ended: closed, reported as such. */
    static final MemorySegment SCOPE_ENDED = deadSegment();
    /** {@link #seg} while a close or resize that claimed the memory decides. */
    static final MemorySegment CLOSING = deadSegment();
    /** {@link #seg} of live memory Java code does not reach: device memory, or memory made for native code only. */
    static final MemorySegment NO_HOST = deadSegment();

    /** The memory of a closed view or wrapped array: nothing to free, every access fails. */
    static final ArrayMemory CLOSED = new ArrayMemory(null, null, null, DEAD, 0, 0, null);

    private static final VarHandle SEG;
    private static final VarHandle EXTRAS;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            SEG = lookup.findVarHandle(ArrayMemory.class, "seg", MemorySegment.class);
            EXTRAS = lookup.findVarHandle(ArrayMemory.class, "extras", Extras.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final DataMemHandler handler;   // null: memory datamem does not own (never freed here), and CLOSED
    /**
     * The thread whose accesses go through {@link #ALL}: the creating one while the memory is open;
     * null for memory datamem does not own, memory Java does not reach, memory shared from birth,
     * and once closed. Read plainly by the accessors; written by the owner (and by a close).
     */
    Thread owner;
    /** See the class comment: read plainly by the accessors, changed by compare-and-set. */
    MemorySegment seg;
    @SuppressWarnings("unused") // through EXTRAS
    private volatile Extras extras;
    final long address;
    final long byteSize;
    /** The workspace scope this memory was allocated in (it ends with it), or null. */
    final Workspace.Scope scope;

    /** What only some memories need; guarded by its own lock. */
    private static final class Extras {
        int holds;
        Arena sharedArena;
        MemorySegment sharedSeg;
        /** The arena of {@code segment()} on the owner thread of unshared memory: confined to it. */
        Arena userArena;
        MemorySegment userSeg;
        /** {@code confined()}: never shared, closed and resized on the owner only. */
        boolean strict;
        /** The traits of memory datamem does not own (asked of the allocator otherwise). */
        MemoryTraits traits;
    }

    private ArrayMemory(NDArray array, DataMemHandler handler, Thread owner, MemorySegment seg, long address,
                        long byteSize, Workspace.Scope scope) {
        super(array, array == null ? null : ThreadHome.Reaper.QUEUE);
        this.handler = handler;
        this.owner = owner;
        this.seg = seg;
        this.address = address;
        this.byteSize = byteSize;
        this.scope = scope;
    }

    /**
     * Memory allocated through a handler, owned by datamem, belonging to the calling thread: its
     * phantom reference to {@code owner} is registered there.
     */
    static ArrayMemory owned(NDArray array, DataMemHandler handler, long address, long byteSize, boolean hostAccessible,
                             ThreadHome home) {
        ArrayMemory m = new ArrayMemory(array, handler, hostAccessible ? home.thread : null,
                hostAccessible ? NOT_SHARED : NO_HOST, address, byteSize, null);
        home.register(m);
        return m;
    }

    /**
     * Memory a workspace allocated in {@code scope}, on its thread: no leak action (the scope's end
     * closes it), never shared.
     */
    static ArrayMemory inScope(DataMemHandler handler, long address, long byteSize, boolean hostAccessible,
                               Workspace.Scope scope, Thread owner) {
        ArrayMemory m = new ArrayMemory(null, handler, hostAccessible ? owner : null,
                hostAccessible ? NOT_SHARED : NO_HOST, address, byteSize, scope);
        scope.adopt(m);
        return m;
    }

    /** Memory that belongs to someone else: {@code segment} keeps its own scope. */
    static ArrayMemory foreign(MemorySegment segment, MemoryTraits traits) {
        ArrayMemory m = new ArrayMemory(null, null, null, segment, segment.address(), segment.byteSize(), null);
        m.extras().traits = traits;
        return m;
    }

    /**
     * Memory for {@link AccessProfile}, owning nothing: unshared with {@code owner} as its owner, or
     * shared if {@code owner} is null (its segment closed: never reached).
     */
    static ArrayMemory forProfile(Thread owner) {
        return owner == null ? new ArrayMemory(null, null, null, DEAD, 0, 0, null)
                : new ArrayMemory(null, null, owner, NOT_SHARED, 0, 0, null);
    }

    private static MemorySegment deadSegment() {
        Arena a = Arena.ofShared();
        MemorySegment s = MemorySegment.NULL.reinterpret(Long.MAX_VALUE, a, null);
        a.close();
        return s;
    }

    private Extras extras() {
        Extras e = extras;
        if (e == null) {
            Extras made = new Extras();
            e = EXTRAS.compareAndSet(this, null, made) ? made : extras;
        }
        return e;
    }

    private MemorySegment segAcquire() {
        return (MemorySegment) SEG.getAcquire(this);
    }

    // ---------------------------------------------------------------------------------------------
    // State

    /** Whether live memory datamem does not own is behind it (its segment's scope decides). */
    boolean isForeign() {
        return handler == null && this != CLOSED;
    }

    /** Whether a live state: not closing, closed, or a foreign segment whose scope ended. */
    private static boolean live(MemorySegment s) {
        return s != DEAD && s != CLOSING && s != MOVED && s != SCOPE_ENDED && (s == NOT_SHARED || s == NO_HOST || s.scope().isAlive());
    }

    /** Whether arrays may still reach this memory (waits for a close that is deciding). */
    boolean isLive() {
        return live(awaitDecided());
    }

    /** Whether no leak action is needed any more: closed, freed or given up. */
    boolean done() {
        MemorySegment s = seg;
        return s == DEAD || s == MOVED || s == SCOPE_ENDED;
    }

    /** Whether the host cannot reach this memory (device memory). */
    boolean isDevice() {
        return seg == NO_HOST;
    }

    /** Whether shared: every thread reaches the elements. */
    boolean isShared() {
        Extras e = extras;
        MemorySegment s = seg;
        return e != null && s == e.sharedSeg && s != null;
    }

    /** Whether belonging to a thread, not yet shared (device and foreign memory: false). */
    boolean isConfined() {
        return seg == NOT_SHARED;
    }

    /** Whether other threads' accesses fail for want of a {@link #share}. */
    boolean isNotShared() {
        return seg == NOT_SHARED;
    }

    /** The thread the memory belongs to, or null (device, foreign, shared from birth, closed). */
    Thread ownerThread() {
        return owner;
    }

    /** The traits of the block: asked of the allocator (owned memory), or given (foreign). */
    MemoryTraits traits() {
        Extras e = extras;
        if (e != null && e.traits != null) {
            return e.traits;
        }
        if (handler == null) {
            return MemoryTraits.host(1);
        }
        return handler.allocator().traitsOf(MemorySegment.ofAddress(address));
    }

    /**
     * Spins, then yields (a platform thread) or parks for a few microseconds (a virtual thread), while
     * a close or resize that claimed the memory decides; the next state. A claim can wait on a monitor
     * or on the allocator's realloc, and a virtual thread that waits is run again from a queue that
     * carriers busy with yielding virtual threads never look at: parked waiters leave them free.
     */
    private MemorySegment awaitDecided() {
        MemorySegment s;
        for (int spins = 0; (s = segAcquire()) == CLOSING; spins++) {
            if (spins < 128) {
                Thread.onSpinWait();
            } else if (Thread.currentThread().isVirtual()) {
                LockSupport.parkNanos(20_000);
            } else {
                Thread.yield();
            }
        }
        return s;
    }

    /**
     * The lifecycle check of every path that hands out an address or a segment, as a message: why
     * {@code who} may no longer reach this memory, or null if it may.
     */
    IllegalStateException whyNotLive(Object who) {
        return notLive(awaitDecided(), who);
    }

    /** {@link #whyNotLive} for the state {@code s}, without waiting: what the methods holding the lock use. */
    private IllegalStateException notLive(MemorySegment s, Object who) {
        if (live(s)) {
            return null;
        }
        if (this == CLOSED) {
            return new IllegalStateException(who + " is closed");
        }
        if (s == MOVED) {
            return new IllegalStateException(who + " is no longer valid: the owning array was resized, which"
                    + " reallocated its memory");
        }
        if (s == SCOPE_ENDED) {
            return new IllegalStateException(who + " is closed: it was allocated in " + scope.describe()
                    + ", which has ended, and its memory went back with it");
        }
        if (handler == null) {
            return new IllegalStateException(who + " is closed: the segment it wraps is no longer alive (its"
                    + " arena was closed)");
        }
        return new IllegalStateException(who + " is closed: its memory was freed through handler '"
                + handler.name() + "'");
    }

    /**
     * Throws {@link #whyNotLive}'s exception, if any.
     *
     * @throws IllegalStateException if arrays may no longer reach this memory
     */
    void checkLive(Object who) {
        IllegalStateException e = whyNotLive(who);
        if (e != null) {
            throw e;
        }
    }

    private void checkLive(MemorySegment s, Object who) {
        IllegalStateException e = notLive(s, who);
        if (e != null) {
            throw e;
        }
    }

    /** Whether Java code does not reach the elements although the host could: memory made for native code only. */
    boolean isNativeOnly() {
        return seg == NO_HOST && traits().hostAccessible();
    }

    /**
     * Gives up Java's element access (see {@code ArrayInternals.nativeOnly}): on the owner thread,
     * before anything reached the memory.
     */
    void nativeOnly() {
        MemorySegment s = seg;
        if (s == NO_HOST) {
            return;   // device memory: Java never reached it
        }
        if (s != NOT_SHARED || owner != Thread.currentThread() || extras != null || !SEG.compareAndSet(this, s, NO_HOST)) {
            throw new IllegalStateException("only a new, untouched array of the calling thread can be given to native"
                    + " code only");
        }
        owner = null;
    }

    // ---------------------------------------------------------------------------------------------
    // Sharing and segments for user code

    /**
     * Shares the memory with every thread: from now on accessors on any thread reach it through a
     * shared arena of its own. Idempotent; any thread may call it. Memory the host cannot access
     * and memory datamem does not own need nothing.
     *
     * @throws IllegalStateException if closed, or strictly confined ({@code confined()})
     */
    void share(Object who) {
        share(who, false);
    }

    /**
     * {@link #share(Object)}; {@code atBirth}: by the array's creation, before any code could reach
     * the memory through {@link #ALL}, which then no thread does (closes free at once).
     */
    void share(Object who, boolean atBirth) {
        if (scope != null) {
            checkLive(who);
            throw new IllegalStateException(who + " was allocated in " + scope.describe() + ": it belongs to that"
                    + " thread until the scope ends and cannot be shared (copy it out of the scope to share it)");
        }
        if (handler == null || seg == NO_HOST) {
            checkLive(who);
            return;
        }
        Extras e = extras();
        for (;;) {
            awaitDecided();   // never under the lock: a deciding close needs it
            synchronized (e) {
                MemorySegment s = segAcquire();
                if (s == CLOSING) {
                    continue;
                }
                if (s == e.sharedSeg && s != null) {
                    return;
                }
                checkLive(s, who);
                if (e.strict) {
                    throw new IllegalStateException(who + " is confined to thread '" + owner.getName()
                            + "' (confined()): it cannot be shared");
                }
                Arena a = Arena.ofShared();
                MemorySegment shared = MemorySegment.NULL.reinterpret(Long.MAX_VALUE, a, null);
                e.sharedArena = a;
                e.sharedSeg = shared;
                if (SEG.compareAndSet(this, s, shared)) {
                    if (atBirth) {
                        owner = null;
                    }
                    return;
                }
                e.sharedArena = null;   // a close claimed it meanwhile: look again
                e.sharedSeg = null;
                a.close();
            }
        }
    }

    /**
     * Confines the memory strictly to the calling thread, its owner: it can then never be shared,
     * and only that thread closes or resizes it.
     *
     * @throws IllegalStateException if closed, shared, or not the calling thread's
     */
    void confine(Object who) {
        Extras e = extras();
        for (;;) {
            awaitDecided();
            synchronized (e) {
                MemorySegment s = segAcquire();
                if (s == CLOSING) {
                    continue;
                }
                confineLocked(e, s, who);
                return;
            }
        }
    }

    private void confineLocked(Extras e, MemorySegment s, Object who) {
        {
            checkLive(s, who);
            if (handler == null) {
                throw new IllegalStateException(who + " wraps memory datamem does not own; its segment keeps the"
                        + " scope it was given");
            }
            if (s != NOT_SHARED || owner != Thread.currentThread()) {
                throw new IllegalStateException(who + (s == e.sharedSeg ? " is shared already" : " belongs to another"
                        + " thread") + "; confined() confines an unshared array to the thread that created it");
            }
            e.strict = true;
        }
    }

    /** Whether {@code confined()} was called. */
    boolean isStrict() {
        Extras e = extras;
        return e != null && e.strict;
    }

    /**
     * A segment over the whole block that user code may keep, and hand to any thread: the memory is
     * {@linkplain #share shared} first, and the segment is in its shared arena, closed with it (user
     * code may keep a segment longer than the array: only a shared arena can be closed by whichever
     * thread closes the array, or the reaper). Memory {@linkplain #confine confined} to its thread
     * instead gives, on that thread, a segment in an arena confined to it, closed with the memory.
     * Foreign memory: the caller's segment.
     *
     * @return the segment, or null for memory the host cannot access
     * @throws IllegalStateException if closed
     * @throws WrongThreadException  if confined to another thread
     */
    MemorySegment userSegment(Object who) {
        if (handler == null) {
            MemorySegment s = seg;
            checkLive(who);
            return s;
        }
        if (seg == NO_HOST) {
            checkLive(who);
            return null;
        }
        Extras e = extras();
        for (;;) {
            awaitDecided();
            synchronized (e) {
                MemorySegment s = segAcquire();
                if (s == CLOSING) {
                    continue;
                }
                checkLive(s, who);
                if (s == e.sharedSeg) {
                    return s.asSlice(address, byteSize);
                }
                if (e.strict || scope != null) {
                    Thread o = owner;
                    if (o != Thread.currentThread()) {
                        throw new WrongThreadException(who + " is confined to thread '" + (o == null ? "?" : o.getName())
                                + "' (confined()): only that thread may reach its memory");
                    }
                    if (e.userArena == null) {
                        Arena a = Arena.ofConfined();
                        e.userSeg = MemorySegment.ofAddress(address).reinterpret(byteSize, a, null);
                        e.userArena = a;
                    }
                    return e.userSeg;   // a close claims, then looks under this lock: it sees the arena
                }
            }
            share(who);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Holds (exports)

    /**
     * Takes a hold: until {@link #release}, a close or resize is refused. The check and the count
     * happen under the lock of {@link Extras}; a close claims {@link #seg} first, then looks at the
     * count under the same lock, so exactly one of them wins.
     *
     * @throws IllegalStateException if closed or being closed
     */
    void hold(Object who) {
        Extras e = extras();
        for (;;) {
            awaitDecided();
            synchronized (e) {
                MemorySegment s = segAcquire();
                if (s == CLOSING) {
                    continue;   // decide outside the lock: the close needs it
                }
                checkLive(s, who);
                e.holds++;
                return;
            }
        }
    }

    /**
     * Releases one hold.
     *
     * @throws IllegalStateException if none is held
     */
    void release(Object who) {
        Extras e = extras();
        synchronized (e) {
            if (e.holds <= 0) {
                throw new IllegalStateException(who + ": no export to release");
            }
            e.holds--;
        }
    }

    /** How many holds are taken. */
    int holds() {
        Extras e = extras;
        if (e == null) {
            return 0;
        }
        synchronized (e) {
            return e.holds;
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Close, resize, leak

    /** What a claim found: the live state it replaced, and the user arena it leaves to the owner. */
    record Claim(MemorySegment was, Thread owner, boolean ownerHere, Arena ownersArena) {
    }

    /**
     * Claims the memory for a close or resize: {@link #seg} goes to {@link #CLOSING}; then holds
     * refuse it, the shared arena is closed (no other thread is inside an access through it any
     * more) and the user arena too if this thread owns it.
     *
     * @return the claim, or null if already closed
     * @throws IllegalStateException if a hold is taken, or a segment is acquired by a native call;
     *                               the memory is as before
     * @throws WrongThreadException  if strictly confined to another thread
     */
    private Claim claim(String what, Object who) {
        for (;;) {
            MemorySegment s = awaitDecided();
            if (s == DEAD || s == MOVED) {
                return null;
            }
            if (!SEG.compareAndSet(this, s, CLOSING)) {
                continue;
            }
            Extras e = extras;
            Thread owner = this.owner;
            Thread me = Thread.currentThread();
            boolean ownerHere = owner == null || owner == me || !owner.isAlive();
            Arena ownersArena = null;
            if (e != null) {
                try {
                    synchronized (e) {
                        if (e.holds > 0) {
                            throw new IllegalStateException("cannot " + what + " " + who + ": " + e.holds
                                    + " buffer export(s) still held (buffer views, DLPack or Arrow exports, holds);"
                                    + " release them first");
                        }
                        if (e.strict && !ownerHere) {
                            throw new WrongThreadException("cannot " + what + " " + who + ": it is confined to thread '"
                                    + owner.getName() + "' (confined()), which alone may " + what + " it");
                        }
                        if (s == e.sharedSeg && e.sharedArena.scope().isAlive()) {
                            e.sharedArena.close();   // the handshake: may throw if a native call holds it
                        }
                        if (e.userArena != null && e.userArena.scope().isAlive()) {
                            if (owner == me) {
                                e.userArena.close();
                            } else {
                                ownersArena = e.userArena;
                            }
                        }
                    }
                } catch (RuntimeException x) {
                    SEG.setRelease(this, s);
                    throw x;
                }
            }
            return new Claim(s, owner, ownerHere, ownersArena);
        }
    }

    /** After a claim: the block goes back now (owner here) or to the owner, and the memory is closed. */
    private void finish(Claim c) {
        clear();
        owner = null;   // the owner's next access goes through seg, and fails
        SEG.setRelease(this, DEAD);
        if (handler == null) {
            return;
        }
        // A workspace's block stays until its scope ends (on its thread): never retired
        if (scope != null) {
            scope.released(this);
        }
        ThreadHome home = c.ownerHere() || scope != null ? null : ThreadHome.of(c.owner());
        if (home == null) {
            handler.allocator().free(MemorySegment.ofAddress(address), byteSize);
        } else {
            home.retire(new ThreadHome.Retired(handler, address, byteSize, c.ownersArena()));
        }
    }

    /**
     * Closes: refuses new access at once and frees the block through the handler with its size, or
     * retires it to the owner thread (see the class comment). Idempotent.
     *
     * @throws IllegalStateException if a hold is taken or a segment is acquired by a native call
     * @throws WrongThreadException  if strictly confined to another thread
     */
    void close(Object who) {
        Claim c = claim("close", who);
        if (c != null) {
            finish(c);
        }
    }

    /**
     * Moves the block to {@code newByteSize} bytes through the handler's {@code realloc} (the bytes
     * up to the smaller size kept, the rest not initialised) and continues on a new memory:
     * {@code install} receives it before this returns or throws, and this memory is closed, so views
     * and segments made before fail. Only the owner thread resizes (no access of its own is in
     * progress; a shared arena is closed first, so no other thread's is either), and the new memory
     * belongs to it, unshared: another thread racing the resize then reaches nothing, whatever part
     * of the array's new layout it has seen.
     *
     * @throws IllegalStateException as {@link #close}, or if closed
     * @throws WrongThreadException  if the memory belongs to another (live) thread
     * @throws RuntimeException      what the allocator threw (the block intact, unless it says it freed
     *                               it: {@link BlockReleased}; then nothing is installed, the array is closed)
     * @throws io.datamem.AllocationException if the allocator refused
     */
    void resize(NDArray array, long newByteSize, Object who, Consumer<ArrayMemory> install) {
        if (scope != null) {
            checkLive(who);
            throw new UnsupportedOperationException("cannot resize " + who + ": it was allocated in " + scope.describe()
                    + ", whose blocks do not move; allocate another array");
        }
        awaitDecided();
        Thread o = owner;
        if (o != null && o != Thread.currentThread() && o.isAlive()) {
            throw new WrongThreadException("cannot resize " + who + ": it belongs to thread '" + o.getName()
                    + "', which alone may resize it");
        }
        Claim c = claim("resize", who);
        if (c == null) {
            throw new IllegalStateException(who + " is closed: its memory was freed through handler '"
                    + handler.name() + "'");
        }
        if (!c.ownerHere()) {   // shared meanwhile with another owner recorded: refuse, as above
            SEG.setRelease(this, c.was());
            throw new WrongThreadException("cannot resize " + who + ": it belongs to another thread");
        }
        MemorySegment moved;
        AllocationRefusal.clear();
        try {
            moved = handler.allocator().realloc(MemorySegment.ofAddress(address), byteSize, newByteSize);
        } catch (RuntimeException | Error x) {
            if (BlockReleased.by(x)) {
                clear();
                owner = null;
                SEG.setRelease(this, DEAD);   // the allocator freed the block: closed
                throw x;
            }
            install.accept(successor(array, c, address, byteSize));
            throw x;
        }
        if (moved.address() == 0) {
            install.accept(successor(array, c, address, byteSize));
            throw AllocationRefusal.failure(handler, newByteSize, "realloc");
        }
        install.accept(successor(array, c, moved.address(), newByteSize));
    }

    /** The memory that replaces this claimed one over {@code [newAddress, + newByteSize)}; this one is closed. */
    private ArrayMemory successor(NDArray array, Claim c, long newAddress, long newByteSize) {
        ThreadHome home = ThreadHome.mine();
        Extras e = extras;
        boolean host = c.was() != NO_HOST;
        ArrayMemory next = new ArrayMemory(array, handler, host ? home.thread : null, host ? NOT_SHARED : NO_HOST,
                newAddress, newByteSize, null);
        home.register(next);
        clear();
        this.owner = null;   // views made before go through seg, and fail
        SEG.setRelease(this, MOVED);
        if (e != null && e.strict) {
            next.extras().strict = true;
        }
        return next;
    }

    /**
     * The first step of a scope's end: claims this memory, or throws (a hold is taken).
     *
     * @return the claim, or null if already closed
     */
    Claim claimForScope() {
        return claim("end the scope of", "an array of " + scope.describe());
    }

    /** The scope could not end: this memory, claimed by {@link #claimForScope}, is open again. */
    void restore(Claim c) {
        SEG.setRelease(this, c.was());
    }

    /** The scope ends: this memory, claimed, is closed with it, its block freed through the handler. */
    void endWithScope(Claim c) {
        clear();
        owner = null;
        SEG.setRelease(this, SCOPE_ENDED);
        handler.allocator().free(MemorySegment.ofAddress(address), byteSize);
    }

    /** The leak action: run by the reaper once the owning array became unreachable unclosed. */
    void leaked() {
        Claim c;
        try {
            c = claim("free", "leaked array");
        } catch (IllegalStateException e) {
            // A native call still holds a segment: freeing now could crash it. Keep the block.
            clear();
            SEG.setRelease(this, DEAD);
            LOG.log(System.Logger.Level.ERROR, "datamem: leaked " + description() + " could not be freed because a"
                    + " segment is still acquired; " + byteSize + " bytes stay allocated");
            return;
        }
        if (c == null) {
            return;
        }
        finish(c);
        LEAKS.incrementAndGet();
        LOG.log(System.Logger.Level.WARNING, "datamem: leaked " + description() + " was never closed; datamem frees"
                + " it. Close arrays explicitly, for example with try-with-resources");
    }

    private String description() {
        return "array of " + byteSize + " bytes (handler '" + handler.name() + "')";
    }
}
