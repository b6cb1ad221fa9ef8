package io.datamem.arrow.memory;

import io.datamem.AllocationException;
import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import org.apache.arrow.memory.AllocationManager;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.OutOfMemoryException;
import org.apache.arrow.memory.ReferenceManager;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * An Arrow Java {@link AllocationManager} whose memory comes from a datamem handler: every
 * {@link ArrowBuf} of an allocator built with {@link #factory(DataMemHandler)} is allocated by
 * the handler's {@code malloc} and freed by its {@code free} with the size allocated, so Arrow
 * Java gets aligned, huge-page, NUMA, pinned or pooled memory and datamem's adaptors (statistics,
 * limits, tracking) see every byte:
 *
 * {@snippet :
 * DataMemHandler handler = DataMem.handler("aligned64+stats");
 * try (BufferAllocator root = new RootAllocator(RootAllocator.configBuilder()
 *         .allocationManagerFactory(HandlerAllocationManager.factory(handler)).build());
 *      IntVector v = new IntVector("v", root)) {
 *     v.allocateNew(1024);   // 4096 bytes (Arrow rounds up) through the handler
 * }
 * }
 *
 * <p>Arrow asks for the sizes its rounding policy gives (powers of two below its chunk size) and
 * expects at least 8-byte alignment, which every datamem host handler gives (choose
 * {@code aligned64} for Arrow's recommended 64). The handler must allocate memory the host can
 * access. A handler that returns NULL, or throws an {@link AllocationException} (a limit, say), is
 * reported as Arrow's {@link OutOfMemoryException}, which Arrow handles as its own exhaustion.
 */
// Arrow Java is an optional dependency, read by this module without `transitive` so that users of
// the C Data interfaces alone compile without it: a user of this class uses Arrow Java anyway.
@SuppressWarnings("exports")
public final class HandlerAllocationManager extends AllocationManager {

    /** The empty buffer of every factory: zero bytes at an aligned address nothing frees. */
    private static final ArrowBuf EMPTY = new ArrowBuf(ReferenceManager.NO_OP, null, 0,
            Arena.global().allocate(64, 64).address());

    private final DataMemHandler handler;
    private final MemorySegment block;
    private final long byteSize;

    private HandlerAllocationManager(BufferAllocator accountingAllocator, DataMemHandler handler, long byteSize) {
        super(accountingAllocator);
        DataMemAllocator allocator = handler.allocator();
        MemorySegment allocated;
        try {
            allocated = allocator.malloc(byteSize);
        } catch (AllocationException e) {
            throw new OutOfMemoryException("handler '" + handler.name() + "' refused " + byteSize + " bytes for an"
                    + " ArrowBuf: " + e.getMessage(), e);
        }
        if (allocated.address() == 0) {
            throw new OutOfMemoryException("handler '" + handler.name() + "' could not allocate " + byteSize
                    + " bytes for an ArrowBuf (malloc returned NULL)");
        }
        this.handler = handler;
        this.block = MemorySegment.ofAddress(allocated.address());
        this.byteSize = byteSize;
    }

    /**
     * A factory whose managers allocate through {@code handler}: pass it to
     * {@code RootAllocator.configBuilder().allocationManagerFactory(...)}.
     *
     * @param handler the handler every {@link ArrowBuf} of the allocator is allocated by
     * @return the factory
     * @throws NullPointerException     if {@code handler} is null
     * @throws IllegalArgumentException if the handler's memory is not host-accessible (device
     *                                  memory), which Arrow Java reads and writes directly
     */
    public static AllocationManager.Factory factory(DataMemHandler handler) {
        Objects.requireNonNull(handler, "handler");
        if (!handler.traits().hostAccessible()) {
            throw new IllegalArgumentException("handler: '" + handler.name() + "' allocates " + handler.traits().kind()
                    + " memory on " + handler.traits().device() + " (expected: memory the host can access, as Arrow"
                    + " Java reads and writes its buffers directly)");
        }
        return new Factory(handler);
    }

    /**
     * A factory over the handler current now ({@link DataMem#current()}), captured once: later
     * bindings do not change it.
     *
     * @return the factory
     * @throws IllegalArgumentException if the current handler's memory is not host-accessible
     */
    public static AllocationManager.Factory factory() {
        return factory(DataMem.current());
    }

    /**
     * The handler this manager's memory came from, and goes back to.
     *
     * @return the handler
     */
    public DataMemHandler handler() {
        return handler;
    }

    /**
     * The size of the block, as allocated from the handler.
     *
     * @return bytes
     */
    @Override
    public long getSize() {
        return byteSize;
    }

    @Override
    protected long memoryAddress() {
        return block.address();
    }

    @Override
    protected void release0() {
        handler.allocator().free(block, byteSize);
    }

    /** The factory: one handler, one manager per allocation. */
    private record Factory(DataMemHandler handler) implements AllocationManager.Factory {

        @Override
        public AllocationManager create(BufferAllocator accountingAllocator, long size) {
            return new HandlerAllocationManager(accountingAllocator, handler, size);
        }

        @Override
        public ArrowBuf empty() {
            return EMPTY;
        }

        @Override
        public String toString() {
            return "HandlerAllocationManager.factory(" + handler.name() + ")";
        }
    }
}
