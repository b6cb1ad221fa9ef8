package io.datamem.numpy.internal;

import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The state behind one exported handler: its native struct, the table of live blocks (address to
 * size, since NumPy's {@code realloc} does not pass the old size), and the counts of what C did.
 * The upcalls of {@link Upcalls} reach it through the struct's {@code ctx}.
 *
 * <p>Methods called from upcalls may throw only what the Java allocator throws; {@link Upcalls}
 * catches everything. They are called from any thread, concurrently.
 */
public final class Export {

    /**
     * How many freed addresses are remembered to tell a double free from a foreign one: in all,
     * {@code FREED_MEMORY / STRIPES} for each stripe of the live-block table (an address is always
     * remembered by the same stripe).
     */
    public static final int FREED_MEMORY = 1024;

    private final long id;
    private final DataMemHandler handler;
    private final DataMemAllocator allocator;
    private final MemorySegment struct;
    private final String nativeName;

    /** How many stripes the live-block table has: a power of two. */
    static final int STRIPES = 16;

    /**
     * The live blocks (address to size), in stripes chosen by the address's hash, each under its
     * own lock: a malloc or a free takes one uncontended lock (a compare-and-set and a release store) and updates
     * the stripe's counts inside it, where a concurrent map and atomic counters took about ten
     * atomic operations and 120 bytes of boxed keys and nodes per pair (see docs/decisions.md).
     */
    private final Stripe[] stripes = new Stripe[STRIPES];
    private final AtomicLong failedAllocations = new AtomicLong();
    private final AtomicLong refusedAfterClose = new AtomicLong();
    private final AtomicLong sizeMismatches = new AtomicLong();
    private final AtomicLong foreignFrees = new AtomicLong();
    private final AtomicLong doubleFrees = new AtomicLong();
    private final AtomicLong foreignReallocs = new AtomicLong();
    private final AtomicLong upcallErrors = new AtomicLong();

    private volatile boolean closed;
    private volatile String lastAnomaly;

    private Export(long id, DataMemHandler handler) {
        this.id = id;
        this.handler = handler;
        this.allocator = handler.allocator();
        byte[] name = HandlerStruct.nativeNameBytes(handler.name());
        this.nativeName = new String(name, StandardCharsets.UTF_8);
        // Immortal: C may hold the struct's address for as long as the process runs (an installed
        // handler in some context, a capsule in some array); see docs/decisions.md.
        for (int i = 0; i < STRIPES; i++) {
            stripes[i] = new Stripe();
        }
        this.struct = Arena.global().allocate(HandlerStruct.HANDLER_LAYOUT);
        HandlerStruct.write(struct, name, MemorySegment.ofAddress(id), Upcalls.MALLOC, Upcalls.CALLOC,
                Upcalls.REALLOC, Upcalls.FREE);
    }

    /**
     * Exports a handler: writes its struct and registers it for the upcalls.
     *
     * @param handler the handler
     * @return the export, open
     */
    public static Export create(DataMemHandler handler) {
        Export export = new Export(Upcalls.nextId(), handler);
        Upcalls.register(export);
        return export;
    }

    /**
     * The id written into the struct's {@code ctx}.
     *
     * @return the id
     */
    public long id() {
        return id;
    }

    /**
     * The exported handler.
     *
     * @return the handler
     */
    public DataMemHandler handler() {
        return handler;
    }

    /**
     * The native struct, valid for the life of the process.
     *
     * @return the struct
     */
    public MemorySegment struct() {
        return struct;
    }

    /**
     * The name as C reads it from the struct.
     *
     * @return the name
     */
    public String nativeName() {
        return nativeName;
    }

    /**
     * Whether {@link #close()} was called.
     *
     * @return whether closed
     */
    public boolean isClosed() {
        return closed;
    }

    /**
     * Refuses every later allocation; blocks still live are freed through the handler when C frees
     * them. Idempotent.
     */
    public void close() {
        closed = true;
        updateRegistration();
    }

    // ---------------------------------------------------------------------------------------------
    // what the upcalls do

    MemorySegment malloc(long byteSize) {
        if (closed) {
            return refused("malloc(" + byteSize + ")");
        }
        if (byteSize < 0 || byteSize > DataMemAllocator.MAX_BYTE_SIZE) {
            return failed("malloc(" + Long.toUnsignedString(byteSize) + "): above the largest size, "
                    + DataMemAllocator.MAX_BYTE_SIZE);
        }
        return admit(allocator.malloc(byteSize), byteSize, "malloc");
    }

    MemorySegment calloc(long count, long elementByteSize) {
        if (closed) {
            return refused("calloc(" + count + ", " + elementByteSize + ")");
        }
        long total = count * elementByteSize;
        if (count < 0 || elementByteSize < 0 || Math.multiplyHigh(count, elementByteSize) != 0 || total < 0
                || total > DataMemAllocator.MAX_BYTE_SIZE) {
            return failed("calloc(" + Long.toUnsignedString(count) + ", " + Long.toUnsignedString(elementByteSize)
                    + "): the product overflows or is above the largest size, " + DataMemAllocator.MAX_BYTE_SIZE);
        }
        return admit(allocator.calloc(count, elementByteSize), total, "calloc");
    }

    MemorySegment realloc(MemorySegment ptr, long newByteSize) {
        long address = ptr.address();
        if (closed) {
            return refused("realloc(0x" + Long.toHexString(address) + ", " + newByteSize + ")");
        }
        if (newByteSize < 0 || newByteSize > DataMemAllocator.MAX_BYTE_SIZE) {
            return failed("realloc(0x" + Long.toHexString(address) + ", " + Long.toUnsignedString(newByteSize)
                    + "): above the largest size, " + DataMemAllocator.MAX_BYTE_SIZE);
        }
        if (address == 0) {
            return admit(allocator.realloc(MemorySegment.NULL, 0, newByteSize), newByteSize, "realloc");
        }
        Stripe from = stripe(address);
        long old = from.remove(address);
        if (old < 0) {
            foreignReallocs.incrementAndGet();
            note("realloc(0x" + Long.toHexString(address) + ", " + newByteSize + "): not a live block of "
                    + handler.name() + (from.wasFreed(address) ? " (freed already)" : "") + "; returned NULL, block untouched");
            return MemorySegment.NULL;
        }
        MemorySegment moved;
        try {
            moved = allocator.realloc(MemorySegment.ofAddress(address), old, newByteSize);
        } catch (Throwable t) {
            from.putBack(address, old);
            throw t;
        }
        if (moved != null && !moved.isNative()) {
            from.putBack(address, old);
            upcallErrors.incrementAndGet();
            note("realloc: " + handler.name() + " returned a heap segment; returned NULL");
            return MemorySegment.NULL;
        }
        if (moved == null || moved.address() == 0) {
            from.putBack(address, old);
            return failed("realloc(0x" + Long.toHexString(address) + ", " + newByteSize + "): " + handler.name()
                    + " returned NULL, block untouched");
        }
        long now = moved.address();
        stripe(now).put(now, newByteSize, false);
        from.reallocated(now != address ? address : 0);
        if (closed) {
            updateRegistration();
        }
        return MemorySegment.ofAddress(now);
    }

    void free(MemorySegment ptr, long byteSize) {
        long address = ptr.address();
        if (address == 0) {
            return;
        }
        Stripe in = stripe(address);
        long recorded = in.free(address);
        if (recorded < 0) {
            boolean twice = in.wasFreed(address);
            (twice ? doubleFrees : foreignFrees).incrementAndGet();
            note("free(0x" + Long.toHexString(address) + ", " + Long.toUnsignedString(byteSize) + "): "
                    + (twice ? "freed already" : "not a block of " + handler.name()) + "; ignored");
            return;
        }
        if (recorded != byteSize) {
            sizeMismatches.incrementAndGet();
        }
        try {
            allocator.free(ptr, recorded);   // the upcall's own segment: its address, zero length
        } finally {
            if (closed) {
                updateRegistration();
            }
        }
    }

    /**
     * Records an exception thrown inside an upcall. Never throws.
     *
     * @param function the C function
     * @param error    what was thrown
     */
    void upcallError(String function, Throwable error) {
        upcallErrors.incrementAndGet();
        try {
            note(function + ": " + handler.name() + " threw " + error + "; returned "
                    + ("free".equals(function) ? "nothing" : "NULL"));
        } catch (Throwable ignored) {
            // nothing may escape an upcall
        }
    }

    private MemorySegment admit(MemorySegment block, long byteSize, String function) {
        if (block != null && !block.isNative()) {
            upcallErrors.incrementAndGet();
            note(function + "(" + byteSize + "): " + handler.name() + " returned a heap segment; returned NULL");
            return MemorySegment.NULL;
        }
        if (block == null || block.address() == 0) {
            return failed(function + "(" + byteSize + "): " + handler.name() + " returned NULL");
        }
        long address = block.address();
        Stripe in = stripe(address);
        in.put(address, byteSize, true);
        if (closed && in.removeIf(address, byteSize)) { // close() ran meanwhile: give it back
            try {
                allocator.free(block, byteSize);
            } finally {
                updateRegistration();
            }
            return refused(function + "(" + byteSize + ")");
        }
        return block;   // its address is what C gets: no segment of our own to make
    }

    private MemorySegment refused(String call) {
        refusedAfterClose.incrementAndGet();
        note(call + ": " + handler.name() + " was closed; returned NULL");
        return MemorySegment.NULL;
    }

    private MemorySegment failed(String why) {
        failedAllocations.incrementAndGet();
        note(why);
        return MemorySegment.NULL;
    }

    private void note(String message) {
        lastAnomaly = message;
    }

    private Stripe stripe(long address) {
        return stripes[(int) ((address * 0x9E3779B97F4A7C15L) >>> 60) & (STRIPES - 1)];
    }

    /** Once closed: registered strongly while blocks are live, weakly once none is. */
    private void updateRegistration() {
        synchronized (this) {
            if (liveBlocks() == 0) {
                Upcalls.weaken(this);
            } else {
                Upcalls.strengthen(this);
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // figures

    /**
     * Blocks C holds.
     *
     * @return blocks C holds
     */
    public long liveBlocks() {
        long n = 0;
        for (Stripe st : stripes) {
            n += st.count();
        }
        return n;
    }

    /**
     * The size recorded for a live block.
     *
     * @param address the block's address
     * @return its size, or -1 if it is not a live block
     */
    public long sizeOf(long address) {
        return stripe(address).get(address);
    }

    /**
     * Bytes C holds.
     *
     * @return bytes C holds
     */
    public long liveBytes() {
        return sum(Stripe.LIVE_BYTES);
    }

    /**
     * Successful malloc and calloc calls, and realloc calls with a NULL pointer.
     *
     * @return the count
     */
    public long allocations() {
        return sum(Stripe.ALLOCATIONS);
    }

    /**
     * Successful realloc calls of live blocks.
     *
     * @return the count
     */
    public long reallocations() {
        return sum(Stripe.REALLOCATIONS);
    }

    /**
     * Frees of live blocks.
     *
     * @return the count
     */
    public long frees() {
        return sum(Stripe.FREES);
    }

    /**
     * Allocations that returned NULL while open: the handler's NULL, overflow, sizes too large.
     *
     * @return the count
     */
    public long failedAllocations() {
        return failedAllocations.get();
    }

    /**
     * Allocations refused because the export was closed.
     *
     * @return the count
     */
    public long refusedAfterClose() {
        return refusedAfterClose.get();
    }

    /**
     * Frees whose size differed from the size recorded.
     *
     * @return the count
     */
    public long sizeMismatches() {
        return sizeMismatches.get();
    }

    /**
     * Frees of pointers this export never returned, ignored.
     *
     * @return the count
     */
    public long foreignFrees() {
        return foreignFrees.get();
    }

    /**
     * Frees of pointers freed already, ignored.
     *
     * @return the count
     */
    public long doubleFrees() {
        return doubleFrees.get();
    }

    /**
     * Reallocs of pointers that are not live blocks, refused.
     *
     * @return the count
     */
    public long foreignReallocs() {
        return foreignReallocs.get();
    }

    /**
     * Exceptions caught inside upcalls, and heap segments refused.
     *
     * @return the count
     */
    public long upcallErrors() {
        return upcallErrors.get();
    }

    /**
     * The message of the last anomaly, or null.
     *
     * @return the message of the last anomaly, or null
     */
    public String lastAnomaly() {
        return lastAnomaly;
    }

    private long sum(int figure) {
        long n = 0;
        for (Stripe st : stripes) {
            n += st.figure(figure);
        }
        return n;
    }

    /**
     * One stripe of the live-block table: an open-addressing map of addresses (never 0) to sizes
     * with linear probing and backward-shift deletion, its counts, and the addresses it freed last
     * (an address always falls in the same stripe, so a double free is told from a foreign one as
     * long as the address is among its stripe's last {@code FREED_MEMORY / STRIPES}). Every method
     * holds the stripe's lock.
     */
    private static final class Stripe {
        static final int LIVE_BYTES = 0;
        static final int ALLOCATIONS = 1;
        static final int REALLOCATIONS = 2;
        static final int FREES = 3;

        private long[] keys = new long[16];
        private long[] values = new long[16];
        private int count;
        private long liveBytes;
        private long allocations;
        private long reallocations;
        private long frees;
        private final long[] freed = new long[FREED_MEMORY / STRIPES];
        private int freedCursor;

        private static final VarHandle LOCK;

        static {
            try {
                LOCK = MethodHandles.lookup().findVarHandle(Stripe.class, "locked", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        /**
         * The stripe's lock: a compare-and-set to take it and a release store to give it back,
         * where {@code synchronized} costs two compare-and-sets. Held for a few loads and stores
         * (and, rarely, the table's growth); a waiter spins, then yields (a platform thread) or parks
         * a few microseconds (a virtual thread, which a yield would queue ahead of an unmounted holder).
         */
        @SuppressWarnings("unused") // through LOCK
        private volatile int locked;

        private void lock() {
            if (!LOCK.compareAndSet(this, 0, 1)) {
                for (int spins = 0; !LOCK.compareAndSet(this, 0, 1); spins++) {
                    if (spins < 64) {
                        Thread.onSpinWait();
                    } else if (Thread.currentThread().isVirtual()) {
                        LockSupport.parkNanos(20_000);   // never a yield loop: see decisions.md
                    } else {
                        Thread.yield();
                    }
                }
            }
        }

        private void unlock() {
            LOCK.setRelease(this, 0);
        }

        private int slot(long address) {
            return (int) ((address * 0xC2B2AE3D27D4EB4FL) >>> 40) & (keys.length - 1);
        }

        int count() {
            lock();
            try {
                return count;
            } finally {
                unlock();
            }
        }

        long figure(int which) {
            lock();
            try {
                return switch (which) {
                    case LIVE_BYTES -> liveBytes;
                    case ALLOCATIONS -> allocations;
                    case REALLOCATIONS -> reallocations;
                    default -> frees;
                };
            } finally {
                unlock();
            }
        }

        long get(long address) {
            lock();
            try {
                int i = find(address);
                return i < 0 ? -1 : values[i];
            } finally {
                unlock();
            }
        }

        /** Records a block (replacing a size recorded for the address); counts an allocation if asked. */
        void put(long address, long size, boolean allocation) {
            lock();
            try {
                int i = find(address);
                if (i >= 0) {
                    liveBytes += size - values[i];
                    values[i] = size;
                } else {
                    insert(address, size);
                    liveBytes += size;
                }
                if (allocation) {
                    allocations++;
                }
            } finally {
                unlock();
            }
        }

        /** Puts back a block {@link #remove} took out (a realloc that failed). */
        void putBack(long address, long size) {
            lock();
            try {
                insert(address, size);
                liveBytes += size;
            } finally {
                unlock();
            }
        }

        /** Takes a block out for a realloc; its size, or -1 if not live. */
        long remove(long address) {
            lock();
            try {
                int i = find(address);
                if (i < 0) {
                    return -1;
                }
                long size = values[i];
                delete(i);
                liveBytes -= size;
                return size;
            } finally {
                unlock();
            }
        }

        /** Counts a realloc that succeeded, and remembers the old address if the block moved (0: not). */
        void reallocated(long movedFrom) {
            lock();
            try {
                reallocations++;
                if (movedFrom != 0) {
                    remember(movedFrom);
                }
            } finally {
                unlock();
            }
        }

        /** Takes a block out for a free and counts it; its size, or -1 if not live. */
        long free(long address) {
            lock();
            try {
                int i = find(address);
                if (i < 0) {
                    return -1;
                }
                long size = values[i];
                delete(i);
                liveBytes -= size;
                frees++;
                remember(address);
                return size;
            } finally {
                unlock();
            }
        }

        /** Takes a block out if it is recorded with this size (an allocation refused after close). */
        boolean removeIf(long address, long size) {
            lock();
            try {
                int i = find(address);
                if (i < 0 || values[i] != size) {
                    return false;
                }
                delete(i);
                liveBytes -= size;
                allocations--;
                return true;
            } finally {
                unlock();
            }
        }

        boolean wasFreed(long address) {
            lock();
            try {
                for (long f : freed) {
                    if (f == address) {
                        return true;
                    }
                }
                return false;
            } finally {
                unlock();
            }
        }

        private void remember(long address) {
            freed[freedCursor] = address;
            freedCursor = (freedCursor + 1) % freed.length;
        }

        private int find(long address) {
            int mask = keys.length - 1;
            for (int i = slot(address); ; i = (i + 1) & mask) {
                long k = keys[i];
                if (k == address) {
                    return i;
                }
                if (k == 0) {
                    return -1;
                }
            }
        }

        private void insert(long address, long size) {
            if (2 * (count + 1) > keys.length) {
                grow();
            }
            int mask = keys.length - 1;
            int i = slot(address);
            while (keys[i] != 0) {
                i = (i + 1) & mask;
            }
            keys[i] = address;
            values[i] = size;
            count++;
        }

        private void grow() {
            long[] oldKeys = keys;
            long[] oldValues = values;
            keys = new long[oldKeys.length * 2];
            values = new long[oldKeys.length * 2];
            count = 0;
            for (int i = 0; i < oldKeys.length; i++) {
                if (oldKeys[i] != 0) {
                    insert(oldKeys[i], oldValues[i]);
                }
            }
        }

        /** Empties slot {@code i}, shifting back the entries of its probe run (no tombstones). */
        private void delete(int i) {
            int mask = keys.length - 1;
            int hole = i;
            for (int j = (i + 1) & mask; keys[j] != 0; j = (j + 1) & mask) {
                int home = slot(keys[j]);
                // keys[j] may move to the hole if its home is not cyclically in (hole, j]
                boolean stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
                if (!stays) {
                    keys[hole] = keys[j];
                    values[hole] = values[j];
                    hole = j;
                }
            }
            keys[hole] = 0;
            values[hole] = 0;
            count--;
        }
    }

    @Override
    public String toString() {
        return "PyDataMem_Handler[" + nativeName + "] at 0x" + Long.toHexString(struct.address());
    }
}
