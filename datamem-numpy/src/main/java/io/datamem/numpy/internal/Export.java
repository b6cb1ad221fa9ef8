package io.datamem.numpy.internal;

import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The state behind one exported handler: its native struct, the table of live blocks (address to
 * size, since NumPy's {@code realloc} does not pass the old size), and the counts of what C did.
 * The upcalls of {@link Upcalls} reach it through the struct's {@code ctx}.
 *
 * <p>Methods called from upcalls may throw only what the Java allocator throws; {@link Upcalls}
 * catches everything. They are called from any thread, concurrently.
 */
public final class Export {

    /** How many freed addresses are remembered to tell a double free from a foreign one. */
    public static final int FREED_MEMORY = 1024;

    private final long id;
    private final DataMemHandler handler;
    private final DataMemAllocator allocator;
    private final MemorySegment struct;
    private final String nativeName;

    private final ConcurrentHashMap<Long, Long> live = new ConcurrentHashMap<>();
    private final AtomicLongArray recentlyFreed = new AtomicLongArray(FREED_MEMORY);
    private final AtomicLong freedCursor = new AtomicLong();

    private final AtomicLong liveBytes = new AtomicLong();
    private final AtomicLong allocations = new AtomicLong();
    private final AtomicLong reallocations = new AtomicLong();
    private final AtomicLong frees = new AtomicLong();
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
        Long old = live.remove(address);
        if (old == null) {
            foreignReallocs.incrementAndGet();
            note("realloc(0x" + Long.toHexString(address) + ", " + newByteSize + "): not a live block of "
                    + handler.name() + (wasFreed(address) ? " (freed already)" : "") + "; returned NULL, block untouched");
            return MemorySegment.NULL;
        }
        MemorySegment moved;
        try {
            moved = allocator.realloc(MemorySegment.ofAddress(address), old, newByteSize);
        } catch (Throwable t) {
            live.put(address, old);
            throw t;
        }
        if (moved != null && !moved.isNative()) {
            live.put(address, old);
            upcallErrors.incrementAndGet();
            note("realloc: " + handler.name() + " returned a heap segment; returned NULL");
            return MemorySegment.NULL;
        }
        if (moved == null || moved.address() == 0) {
            live.put(address, old);
            return failed("realloc(0x" + Long.toHexString(address) + ", " + newByteSize + "): " + handler.name()
                    + " returned NULL, block untouched");
        }
        long now = moved.address();
        live.put(now, newByteSize);
        liveBytes.addAndGet(newByteSize - old);
        reallocations.incrementAndGet();
        if (now != address) {
            rememberFreed(address);
        }
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
        Long recorded = live.remove(address);
        if (recorded == null) {
            boolean twice = wasFreed(address);
            (twice ? doubleFrees : foreignFrees).incrementAndGet();
            note("free(0x" + Long.toHexString(address) + ", " + Long.toUnsignedString(byteSize) + "): "
                    + (twice ? "freed already" : "not a block of " + handler.name()) + "; ignored");
            return;
        }
        if (recorded != byteSize) {
            sizeMismatches.incrementAndGet();
        }
        liveBytes.addAndGet(-recorded);
        frees.incrementAndGet();
        rememberFreed(address);
        try {
            allocator.free(MemorySegment.ofAddress(address), recorded);
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
        Long previous = live.put(address, byteSize);
        liveBytes.addAndGet(byteSize - (previous == null ? 0 : previous));
        if (closed && live.remove(address, byteSize)) { // close() ran meanwhile: give it back
            liveBytes.addAndGet(-byteSize);
            try {
                allocator.free(block, byteSize);
            } finally {
                updateRegistration();
            }
            return refused(function + "(" + byteSize + ")");
        }
        allocations.incrementAndGet();
        return MemorySegment.ofAddress(address);
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

    private void rememberFreed(long address) {
        recentlyFreed.set((int) (freedCursor.getAndIncrement() & (FREED_MEMORY - 1)), address);
    }

    private boolean wasFreed(long address) {
        for (int i = 0; i < FREED_MEMORY; i++) {
            if (recentlyFreed.get(i) == address) {
                return true;
            }
        }
        return false;
    }

    /** Once closed: registered strongly while blocks are live, weakly once none is. */
    private void updateRegistration() {
        synchronized (this) {
            if (live.isEmpty()) {
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
        return live.size();
    }

    /**
     * The size recorded for a live block.
     *
     * @param address the block's address
     * @return its size, or -1 if it is not a live block
     */
    public long sizeOf(long address) {
        Long size = live.get(address);
        return size == null ? -1 : size;
    }

    /**
     * Bytes C holds.
     *
     * @return bytes C holds
     */
    public long liveBytes() {
        return liveBytes.get();
    }

    /**
     * Successful malloc and calloc calls, and realloc calls with a NULL pointer.
     *
     * @return the count
     */
    public long allocations() {
        return allocations.get();
    }

    /**
     * Successful realloc calls of live blocks.
     *
     * @return the count
     */
    public long reallocations() {
        return reallocations.get();
    }

    /**
     * Frees of live blocks.
     *
     * @return the count
     */
    public long frees() {
        return frees.get();
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

    @Override
    public String toString() {
        return "PyDataMem_Handler[" + nativeName + "] at 0x" + Long.toHexString(struct.address());
    }
}
