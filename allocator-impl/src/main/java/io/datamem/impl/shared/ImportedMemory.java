package io.datamem.impl.shared;

import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.MemoryTraits;
import io.datamem.array.DType;
import io.datamem.array.NDArray;

import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One open of an {@link IpcHandle}: the block's bytes in this process, mapped zero-copy, shared with
 * every other open of a block of the same exported mapping (one mapping, counted). Closing it drops
 * its reference; the last reference unmaps. Opening does not copy and does not depend on the
 * exporter afterwards: the pages stay mapped here even when the exporter frees the block or exits.
 *
 * <p>{@link #segment()} is bound to the imported mapping: access after the mapping is unmapped is an
 * {@link IllegalStateException}, never a crash. {@link #toArray} hands the reference to an
 * {@link NDArray} instead, whose own lifecycle then guards the memory. Thread-safe;
 * {@link #close()} is idempotent.
 */
public final class ImportedMemory implements AutoCloseable {

    /**
     * The handler of arrays over imported memory ({@link #toArray}): its {@code free} drops a
     * reference to the imported mapping; it allocates nothing.
     */
    static final DataMemHandler IMPORT_HANDLER = new DataMemHandler("shared_import", 1, new DataMemAllocator() {
        private UnsupportedOperationException refuse(String operation) {
            return new UnsupportedOperationException("handler 'shared_import' cannot " + operation
                    + ": imported shared memory is another process's mapping, which an import cannot allocate"
                    + " or resize (copy it into an array of its own first)");
        }

        /** @throws UnsupportedOperationException always: an import allocates nothing */
        @Override
        public MemorySegment malloc(long byteSize) {
            throw refuse("allocate");
        }

        /** @throws UnsupportedOperationException always: an import allocates nothing */
        @Override
        public MemorySegment calloc(long count, long elementByteSize) {
            throw refuse("allocate");
        }

        /** @throws UnsupportedOperationException always: imports cannot resize */
        @Override
        public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
            throw refuse("resize " + oldByteSize + " bytes to " + newByteSize);
        }

        @Override
        public void free(MemorySegment ptr, long byteSize) {
            if (ptr.address() != 0) {
                Imports.release(ptr.address());
            }
        }

        @Override
        public MemoryTraits traits() {
            return MemoryTraits.host(io.datamem.internal.Libc.pageSize());
        }

        @Override
        public String toString() {
            return "imported shared memory";
        }
    });

    private final IpcHandle handle;
    private final Imports.Entry entry;
    private final AtomicBoolean closed = new AtomicBoolean();

    ImportedMemory(IpcHandle handle, Imports.Entry entry) {
        this.handle = handle;
        this.entry = entry;
    }

    /**
     * The handle this was opened from.
     *
     * @return the handle
     */
    public IpcHandle handle() {
        return handle;
    }

    /**
     * The block's address here, for native code; valid until {@link #close()}.
     *
     * @return the address
     * @throws IllegalStateException if closed
     */
    public long address() {
        checkOpen();
        return entry.address + handle.byteOffset();
    }

    /**
     * The block's size.
     *
     * @return bytes
     */
    public long byteSize() {
        return handle.byteSize();
    }

    /**
     * The block as a segment. It is bound to the imported mapping, not to this lease: it stays
     * accessible while any lease or array holds the mapping and becomes inaccessible (an
     * {@link IllegalStateException} on access, never a crash) when the last one closes and the
     * mapping is unmapped. This keeps a cached open free of arena creation and closing.
     *
     * @return the segment
     * @throws IllegalStateException if this lease is closed
     */
    public MemorySegment segment() {
        checkOpen();
        return entry.whole.asSlice(handle.byteOffset(), handle.byteSize());
    }

    /**
     * Hands this lease's reference to a new array over the block (C order): closing the array (or
     * its collection) releases it. This lease is closed afterwards, whether or not it succeeds.
     *
     * @param dtype the element type
     * @param shape the length of each axis
     * @return the owning array; {@link NDArray#handler()} is {@code shared_import}, which cannot
     *         resize
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if the shape needs more bytes than the block has (the
     *                                  reference is released)
     * @throws IllegalStateException    if closed
     */
    public NDArray toArray(DType dtype, long... shape) {
        Objects.requireNonNull(dtype, "dtype");
        Objects.requireNonNull(shape, "shape");
        if (!closed.compareAndSet(false, true)) {
            throw new IllegalStateException(this + " is closed");
        }
        // an empty block may sit at the mapping's very end: anchor it at the start, so that the
        // array's free still finds this mapping by address
        long address = entry.address + (handle.byteOffset() < entry.length ? handle.byteOffset() : 0);
        try {
            return NDArray.adopt(IMPORT_HANDLER, MemorySegment.ofAddress(address), handle.byteSize(), dtype, shape,
                    null, 0);
        } catch (RuntimeException | Error e) {
            Imports.release(entry);
            throw e;
        }
    }

    /** Drops this lease's reference (the last one unmaps); idempotent. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            Imports.release(entry);
        }
    }

    /**
     * Whether {@link #close()} or {@link #toArray} has run.
     *
     * @return true once closed
     */
    public boolean isClosed() {
        return closed.get();
    }

    private void checkOpen() {
        if (closed.get()) {
            throw new IllegalStateException(this + " is closed");
        }
    }

    @Override
    public String toString() {
        return "ImportedMemory[" + handle + "]";
    }
}
