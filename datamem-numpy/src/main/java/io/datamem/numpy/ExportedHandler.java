package io.datamem.numpy;

import io.datamem.DataMemHandler;
import io.datamem.numpy.internal.Export;

import java.lang.foreign.MemorySegment;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A datamem handler exported as a native {@code PyDataMem_Handler} ({@link PyDataMem#export}).
 *
 * <p><b>Lifetime.</b> The struct ({@link #struct()}) stays valid for the rest of the process, and
 * so do the upcall stubs its functions point to (one set, shared by every export): C may keep the
 * address for as long as it likes (NumPy keeps the capsule in its context variable while the
 * handler is installed, and in every array allocated through it), and calling it is never a crash.
 * {@link #close()} ends the export's service, not the struct's validity:
 *
 * <ul>
 * <li>after {@code close()}, {@code malloc}, {@code calloc} and {@code realloc} return
 *     {@code NULL} (NumPy raises {@code MemoryError}), counted in
 *     {@link ExportStatistics#refusedAfterClose()};</li>
 * <li>blocks C still holds stay valid and are freed through the handler, with their recorded size,
 *     when C frees them: closing while NumPy holds arrays is safe;</li>
 * <li>once closed and without live blocks, the export is no longer kept reachable on C's behalf:
 *     when it is garbage-collected, later calls through its struct are counted by
 *     {@link PyDataMem#strayCalls()} and do nothing.</li>
 * </ul>
 *
 * <p>Uninstall the handler from NumPy (set back the previous one) before closing it, and close it
 * when done: an export that is never closed stays reachable, with its handler, for the life of the
 * process. What an export keeps after it was closed and collected is its 168-byte struct.
 *
 * <p>Thread safety: every method may be called from any thread; the native functions may be
 * called concurrently with them and with each other.
 */
public final class ExportedHandler implements AutoCloseable {

    private final Export export;

    ExportedHandler(Export export) {
        this.export = export;
    }

    /**
     * The handler whose memory C gets.
     *
     * @return the handler
     */
    public DataMemHandler handler() {
        return export.handler();
    }

    /**
     * The native {@code PyDataMem_Handler}, {@link PyDataMem#HANDLER_LAYOUT}-sized. Valid for the
     * life of the process, before and after {@link #close()}.
     *
     * @return the struct
     */
    public MemorySegment struct() {
        return export.struct();
    }

    /**
     * The struct's address, the pointer to wrap in a capsule named {@value PyDataMem#CAPSULE_NAME}.
     *
     * @return the address
     */
    public long address() {
        return export.struct().address();
    }

    /**
     * The name as C reads it from the struct: the handler's name, or, when that takes all 127
     * UTF-8 bytes datamem allows, its longest prefix of at most
     * {@value PyDataMem#MAX_NATIVE_NAME_BYTES} bytes that ends at a character boundary (the field
     * is {@code char name[127]} and needs its terminating NUL).
     *
     * @return the native name
     */
    public String nativeName() {
        return export.nativeName();
    }

    /**
     * Whether {@link #close()} was called.
     *
     * @return whether closed
     */
    public boolean isClosed() {
        return export.isClosed();
    }

    /**
     * Blocks C holds.
     *
     * @return the count
     */
    public long liveBlocks() {
        return export.liveBlocks();
    }

    /**
     * Bytes C holds, as recorded when the blocks were allocated or last resized.
     *
     * @return bytes
     */
    public long liveBytes() {
        return export.liveBytes();
    }

    /**
     * The size recorded for a block C holds: what it was allocated or last resized with (NumPy's
     * {@code realloc} does not pass it; the export's table keeps it).
     *
     * @param address the block's address
     * @return its size, or empty if no live block of this export starts there
     */
    public OptionalLong liveBlockSize(long address) {
        long size = export.sizeOf(address);
        return size < 0 ? OptionalLong.empty() : OptionalLong.of(size);
    }

    /**
     * What C did with the struct so far.
     *
     * @return the figures, read one after the other (not one atomic snapshot)
     */
    public ExportStatistics statistics() {
        return new ExportStatistics(export.liveBlocks(), export.liveBytes(), export.allocations(),
                export.reallocations(), export.frees(), export.failedAllocations(), export.refusedAfterClose(),
                export.sizeMismatches(), export.foreignFrees(), export.doubleFrees(), export.foreignReallocs(),
                export.upcallErrors());
    }

    /**
     * The last thing that went wrong in a native call: a refused or failed allocation, a foreign or
     * double free, an exception the handler threw.
     *
     * @return a description, or empty if nothing went wrong
     */
    public Optional<String> lastAnomaly() {
        return Optional.ofNullable(export.lastAnomaly());
    }

    /**
     * Stops serving allocations; blocks C still holds are freed through the handler when C frees
     * them. Never throws, never frees the struct or the stubs. Idempotent.
     */
    @Override
    public void close() {
        export.close();
    }

    @Override
    public String toString() {
        return export + (isClosed() ? " (closed, " : " (") + liveBlocks() + " live blocks)";
    }
}
