package io.datamem.internal;

import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.AllocationRefusal;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * An {@link Arena} whose segments come from a handler and go back to it, each with its size, when
 * the arena closes. Confinement and liveness are those of the JDK arena it wraps: a confined arena
 * may only be used and closed by its owner thread.
 */
public final class HandlerArena implements Arena {

    private final DataMemHandler handler;
    private final DataMemAllocator allocator;
    private final long guaranteedAlignment;
    private final Arena scope;
    // Blocks to free, as (address, byteSize) pairs. Guarded by 'this' (shared arenas).
    private final List<long[]> blocks = new ArrayList<>();

    /**
     * Creates the arena.
     *
     * @param handler the handler to allocate through
     * @param scope   the JDK arena whose scope (confined or shared) the segments get
     * @throws UnsupportedOperationException if the handler's memory is not host-accessible
     */
    public HandlerArena(DataMemHandler handler, Arena scope) {
        if (!handler.traits().hostAccessible()) {
            scope.close();
            throw new UnsupportedOperationException("handler '" + handler.name() + "' allocates "
                    + handler.traits().kind() + " memory on " + handler.traits().device()
                    + ", which the host cannot access; an Arena hands out host-accessible segments only");
        }
        this.handler = handler;
        this.allocator = handler.allocator();
        this.guaranteedAlignment = handler.traits().byteAlignment();
        this.scope = scope;
    }

    @Override
    public MemorySegment allocate(long byteSize, long byteAlignment) {
        Checks.byteSize("byteSize", byteSize);
        Checks.powerOfTwo("byteAlignment", byteAlignment);
        if (!scope.scope().isAlive()) {
            throw new IllegalStateException("arena of handler '" + handler.name() + "' is already closed");
        }
        long request = Math.max(byteSize, 1);
        long pad = byteAlignment > guaranteedAlignment ? byteAlignment - 1 : 0;
        long total = request + pad;
        if (total > DataMemAllocator.MAX_BYTE_SIZE) {
            throw new IllegalArgumentException("byteSize: " + byteSize + " with byteAlignment " + byteAlignment
                    + " (expected: at most " + DataMemAllocator.MAX_BYTE_SIZE + " bytes in all)");
        }
        AllocationRefusal.clear();
        MemorySegment raw = pad == 0 ? allocator.calloc(1, total) : allocator.malloc(total);
        if (raw.address() == 0) {
            throw AllocationRefusal.failure(handler, total, Math.max(byteAlignment, guaranteedAlignment),
                    pad == 0 ? "calloc" : "malloc");
        }
        long aligned = Checks.alignUp(raw.address(), byteAlignment);
        MemorySegment segment;
        try {
            segment = MemorySegment.ofAddress(aligned).reinterpret(byteSize, scope, null);
            synchronized (this) {
                blocks.add(new long[] {raw.address(), total});
            }
        } catch (RuntimeException | Error e) {
            allocator.free(raw, total);
            throw e;
        }
        if (pad != 0) {
            segment.fill((byte) 0);
        }
        return segment;
    }

    @Override
    public MemorySegment.Scope scope() {
        return scope.scope();
    }

    @Override
    public void close() {
        scope.close(); // throws if not the owner thread, already closed, or a segment is acquired
        List<long[]> toFree;
        synchronized (this) {
            toFree = new ArrayList<>(blocks);
            blocks.clear();
        }
        RuntimeException failure = null;
        for (long[] b : toFree) {
            try {
                allocator.free(MemorySegment.ofAddress(b[0]), b[1]);
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public String toString() {
        return "Arena[handler=" + handler.name() + "]";
    }
}
