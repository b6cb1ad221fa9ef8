package io.datamem;

import io.datamem.internal.Checks;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * An {@link Arena} whose segments come from a handler and go back to it, each with its size, when
 * the arena closes. Confinement and liveness are those of the JDK arena it wraps: a confined arena
 * may only be used and closed by its owner thread.
 *
 * <p>Also the allocation behind a handler used as a {@link java.lang.foreign.SegmentAllocator}
 * ({@link #allocateAuto}): a segment freed through the handler once it is unreachable, as
 * {@link Arena#ofAuto()}'s are.
 *
 * <p>Both follow the JDK's arenas on every failure: a negative size or an alignment that is not a
 * power of two is an {@link IllegalArgumentException}; memory that cannot be had (the allocator
 * returned {@code NULL}, a limit refused, or the size with its alignment padding exceeds
 * {@link DataMemAllocator#MAX_BYTE_SIZE}) is an {@link OutOfMemoryError}, whose message names the
 * handler and the byte count and whose cause, when the allocator was called, is the
 * {@link AllocationException} an array would have thrown.
 */
final class HandlerArena implements Arena {

    private final DataMemHandler handler;
    private final DataMemAllocator allocator;
    private final long guaranteedAlignment;
    private final Arena scope;
    private final Thread owner;     // null: shared
    // Blocks to free, as (address, byteSize) pairs. Guarded by 'this' (shared arenas).
    private final List<long[]> blocks = new ArrayList<>();
    private boolean closed;         // guarded by 'this'

    /**
     * Creates the arena.
     *
     * @param handler the handler to allocate through
     * @param scope   the JDK arena whose scope the segments get: {@link Arena#ofConfined()} (owned by
     *                the calling thread) or {@link Arena#ofShared()}
     * @param shared  whether {@code scope} is shared; if not, the calling thread owns the arena
     * @throws UnsupportedOperationException if the handler's memory is not host-accessible
     */
    HandlerArena(DataMemHandler handler, Arena scope, boolean shared) {
        if (!handler.traits().hostAccessible()) {
            scope.close();
            throw notHostAccessible(handler, "an Arena");
        }
        this.handler = handler;
        this.allocator = handler.allocator();
        this.guaranteedAlignment = handler.traits().byteAlignment();
        this.scope = scope;
        this.owner = shared ? null : Thread.currentThread();
    }

    @Override
    public MemorySegment allocate(long byteSize, long byteAlignment) {
        checkArguments(byteSize, byteAlignment);
        if (owner != null && owner != Thread.currentThread()) {
            throw new WrongThreadException("arena of handler '" + handler.name() + "' is confined to thread '"
                    + owner.getName() + "'; allocate from it on that thread, or use openSharedArena()");
        }
        if (!scope.scope().isAlive()) {
            throw new IllegalStateException("arena of handler '" + handler.name() + "' is already closed");
        }
        long pad = padding(byteAlignment, guaranteedAlignment);
        long total = totalOrThrow(handler, byteSize, byteAlignment, pad);
        long raw = allocateRaw(handler, allocator, total, byteAlignment, pad);
        long aligned = Checks.alignUp(raw, byteAlignment);
        MemorySegment segment;
        try {
            segment = MemorySegment.ofAddress(aligned).reinterpret(byteSize, scope, null);
            synchronized (this) {
                // A shared arena may have been closed by another thread since the check above: its
                // list of blocks is then already taken, so this block must not join it.
                if (closed) {
                    throw new IllegalStateException("arena of handler '" + handler.name() + "' is already closed");
                }
                blocks.add(new long[] {raw, total});
            }
        } catch (RuntimeException | Error e) {
            allocator.free(MemorySegment.ofAddress(raw), total);
            throw e;
        }
        if (pad != 0) {
            segment.fill((byte) 0);
        }
        return segment;
    }

    /**
     * Allocates a zeroed segment through a handler, freed through the handler with its exact
     * allocated size once the segment (and every segment derived from it) is unreachable, as
     * {@link Arena#ofAuto()}'s segments are. Any thread may use the segment.
     *
     * @param handler       the handler to allocate through
     * @param byteSize      the segment's size
     * @param byteAlignment the segment's alignment: a power of two; larger than the handler's
     *                      guarantee, the block is over-allocated by {@code byteAlignment - 1} bytes
     * @return the segment
     * @throws IllegalArgumentException      if {@code byteSize} is negative or {@code byteAlignment}
     *                                       is not a positive power of two
     * @throws UnsupportedOperationException if the handler's memory is not host-accessible
     * @throws OutOfMemoryError              if the allocator returned {@code NULL} (the cause is the
     *                                       {@link AllocationException}), or the size with its
     *                                       padding exceeds {@link DataMemAllocator#MAX_BYTE_SIZE}
     */
    static MemorySegment allocateAuto(DataMemHandler handler, long byteSize, long byteAlignment) {
        checkArguments(byteSize, byteAlignment);
        if (!handler.traits().hostAccessible()) {
            throw notHostAccessible(handler, "a SegmentAllocator");
        }
        DataMemAllocator allocator = handler.allocator();
        long pad = padding(byteAlignment, handler.traits().byteAlignment());
        long total = totalOrThrow(handler, byteSize, byteAlignment, pad);
        long raw = allocateRaw(handler, allocator, total, byteAlignment, pad);
        MemorySegment segment;
        try {
            // The cleanup captures the block's address and size, never a segment: it must not keep
            // the scope reachable.
            segment = MemorySegment.ofAddress(Checks.alignUp(raw, byteAlignment))
                    .reinterpret(byteSize, Arena.ofAuto(), ignored -> allocator.free(MemorySegment.ofAddress(raw), total));
        } catch (RuntimeException | Error e) {
            allocator.free(MemorySegment.ofAddress(raw), total);
            throw e;
        }
        if (pad != 0) {
            segment.fill((byte) 0);
        }
        return segment;
    }

    private static void checkArguments(long byteSize, long byteAlignment) {
        Checks.notNegative("byteSize", byteSize);
        Checks.powerOfTwo("byteAlignment", byteAlignment);
    }

    private static long padding(long byteAlignment, long guaranteedAlignment) {
        return byteAlignment > guaranteedAlignment ? byteAlignment - 1 : 0;
    }

    /** The bytes to ask the allocator for; at least one, so that every segment has its own address. */
    private static long totalOrThrow(DataMemHandler handler, long byteSize, long byteAlignment, long pad) {
        long request = Math.max(byteSize, 1);
        if (request > DataMemAllocator.MAX_BYTE_SIZE - pad) {
            throw new OutOfMemoryError("handler '" + handler.name() + "' cannot allocate " + byteSize
                    + " bytes (alignment " + byteAlignment + "): more than the " + DataMemAllocator.MAX_BYTE_SIZE
                    + "-byte address space");
        }
        return request + pad;
    }

    /** Calls the allocator; a NULL result becomes an OutOfMemoryError whose cause says why. */
    private static long allocateRaw(DataMemHandler handler, DataMemAllocator allocator, long total,
                                    long byteAlignment, long pad) {
        AllocationRefusal.clear();
        MemorySegment raw = pad == 0 ? allocator.calloc(1, total) : allocator.malloc(total);
        if (raw.address() == 0) {
            AllocationException cause = AllocationRefusal.failure(handler, total,
                    Math.max(byteAlignment, handler.traits().byteAlignment()), pad == 0 ? "calloc" : "malloc");
            OutOfMemoryError e = new OutOfMemoryError(cause.getMessage());
            e.initCause(cause);
            throw e;
        }
        return raw.address();
    }

    private static UnsupportedOperationException notHostAccessible(DataMemHandler handler, String what) {
        return new UnsupportedOperationException("handler '" + handler.name() + "' allocates "
                + handler.traits().kind() + " memory on " + handler.traits().device()
                + ", which the host cannot access; " + what + " hands out host-accessible segments only");
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
            closed = true;
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
