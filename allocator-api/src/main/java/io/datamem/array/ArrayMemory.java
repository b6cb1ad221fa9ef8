package io.datamem.array;

import io.datamem.DataMemHandler;
import io.datamem.MemoryTraits;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Cleaner;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The memory behind an owning array and its views: the handler that frees it, the block and its
 * allocated size, and the arena whose closing invalidates every segment handed out over it.
 *
 * <p>It is also the {@link Cleaner} action: run explicitly by {@code close()}, or by the cleaner
 * when the owning array became unreachable unclosed (a leak, counted and logged).
 */
final class ArrayMemory implements Runnable {

    static final Cleaner CLEANER = Cleaner.create();
    static final AtomicLong LEAKS = new AtomicLong();
    private static final System.Logger LOG = System.getLogger("io.datamem.array.NDArray");

    final DataMemHandler handler;   // null: foreign memory, never freed by datamem
    final MemoryTraits traits;
    // What the owner was, for leak reports and messages: built only when one is needed, since an
    // array is created far more often than it is reported.
    private final DType dtype;      // null for foreign memory
    private final long[] shape;

    // Guarded by 'this'.
    private long address;
    private long allocatedByteSize;
    // Bumped whenever the block is (re)attached: segments of an older generation are invalid.
    private int generation;
    // The host segment over the block and the shared arena it belongs to, made when Java code first
    // needs the segment (closing a shared arena synchronises with every thread, so memory that Java
    // never touches should not pay for one). For foreign memory: the caller's segment, no arena.
    private Arena arena;
    private MemorySegment data;
    private boolean freed;
    private boolean closedExplicitly;
    private int exports;
    // The thread the segments are confined to (NDArray.confined()), or null for a shared arena.
    private Thread confinedTo;

    private ArrayMemory(DataMemHandler handler, MemoryTraits traits, DType dtype, long[] shape) {
        this.handler = handler;
        this.traits = traits;
        this.dtype = dtype;
        this.shape = shape;
    }

    /**
     * Memory allocated through a handler, owned by datamem, for an owner of a dtype and shape (the
     * shape array is kept, not copied: the caller must not change it).
     */
    static ArrayMemory owned(DataMemHandler handler, MemorySegment block, long allocatedByteSize, DType dtype,
                             long[] shape) {
        MemoryTraits traits = handler.allocator().traitsOf(block);
        ArrayMemory m = new ArrayMemory(handler, traits, dtype, shape);
        m.attach(block.address(), allocatedByteSize);
        return m;
    }

    /**
     * Memory that belongs to someone else: its segment keeps its own scope.
     */
    static ArrayMemory foreign(MemorySegment segment, MemoryTraits traits) {
        ArrayMemory m = new ArrayMemory(null, traits, null, null);
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
        arena = null;
        data = null;
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
     * The host segment over the whole block, for an array made at generation {@code gen} over
     * {@code [oldAddress, oldAddress + oldByteSize)}: the current segment (made now if none was yet)
     * if the block is still that generation's and neither freed nor being closed; otherwise a segment
     * over the old range whose scope is closed, so that any access throws
     * {@link IllegalStateException}, as a segment handed out before the close or resize does.
     *
     * @return the segment, or null if the host cannot access this memory
     */
    synchronized MemorySegment data(int gen, long oldAddress, long oldByteSize) {
        if (handler == null) {
            return data;
        }
        if (!traits.hostAccessible()) {
            return null;
        }
        if (freed || closedExplicitly || gen != generation) {   // closing or closed: never a live segment
            Arena closed = Arena.ofShared();
            MemorySegment dead = MemorySegment.ofAddress(oldAddress).reinterpret(oldByteSize, closed, null);
            closed.close();
            return dead;
        }
        if (data == null) {
            if (confinedTo != null && confinedTo != Thread.currentThread()) {
                throw new WrongThreadException(description() + " is confined to thread '" + confinedTo.getName()
                        + "'; only that thread may access its memory");
            }
            arena = confinedTo != null ? Arena.ofConfined() : Arena.ofShared();
            data = MemorySegment.ofAddress(address).reinterpret(allocatedByteSize, arena, null);
        }
        return data;
    }

    /**
     * Confines the segments over the block to the calling thread (a confined arena is closed without
     * synchronising with every other thread).
     *
     * @return true if confined now, false if it already was to this thread
     * @throws IllegalStateException if freed, or a shared segment was already handed out, or the
     *                               memory is confined to another thread
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
        if (data != null) {
            throw new IllegalStateException(description() + "'s memory was already reached through a shared"
                    + " segment; call confined() right after creating the array, before any access");
        }
        confinedTo = me;
        return true;
    }

    synchronized Thread confinedTo() {
        return confinedTo;
    }

    /** Freed, or being closed (its segments already invalid, the free about to happen). */
    synchronized boolean isClosing() {
        return freed || closedExplicitly;
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
     * Invalidates every segment over the block (closing the arena, if one was made), without freeing.
     *
     * @throws IllegalStateException if a segment is acquired by a native call in progress
     */
    synchronized void invalidate() {
        if (arena != null && arena.scope().isAlive()) {
            try {
                arena.close();
            } catch (WrongThreadException e) {
                throw new WrongThreadException(description() + " is confined to thread '" + confinedTo.getName()
                        + "': only that thread may close or resize it", e);
            }
        }
    }

    /** After a failed resize: new segments over the unchanged block. */
    synchronized void reattach() {
        attach(address, allocatedByteSize);
    }

    /** After a successful resize. */
    synchronized void reattach(long newAddress, long newAllocatedByteSize) {
        attach(newAddress, newAllocatedByteSize);
    }

    /**
     * Closes explicitly: invalidates segments, then frees through the handler.
     *
     * @return false if already freed
     * @throws IllegalStateException if a buffer export is held or a segment is acquired
     */
    synchronized boolean prepareClose() {
        if (freed) {
            return false;
        }
        if (exports > 0) {
            throw new IllegalStateException("cannot close " + description() + ": " + exports
                    + " buffer export(s) still held; release them first");
        }
        invalidate();
        closedExplicitly = true;
        return true;
    }

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
            if (leak && arena != null && confinedTo != null && confinedTo != Thread.currentThread()
                    && arena.scope().isAlive()) {
                // Another thread's confined arena cannot be closed from here. Its segments are the only
                // way to the memory, and each holds the arena's scope: once the scope is unreachable,
                // nothing can touch the block and it is freed.
                MemorySegment.Scope scope = arena.scope();
                arena = null;
                data = null;
                CLEANER.register(scope, this::freeLeaked);
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
            freed = true;
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

    private void reportLeak(long size) {
        LEAKS.incrementAndGet();
        LOG.log(System.Logger.Level.WARNING, "datamem: leaked " + description() + " (" + size
                + " bytes, handler '" + handler.name() + "') was never closed; the Cleaner freed it."
                + " Close arrays explicitly, for example with try-with-resources");
    }
}
