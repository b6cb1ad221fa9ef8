package io.datamem;

import io.datamem.internal.Messages;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * NEP 49's {@code PyDataMem_Handler}: a named, versioned allocator.
 *
 * <p>A handler is what {@link DataMem#current()} returns and what every array captures when it is
 * created; the array reallocates and frees through it for the rest of its life, whatever is bound
 * or set as default by then. Handlers are meant to live as long as the memory they allocated:
 * build them once and keep them.
 *
 * <p>A handler plugs into the FFM API in two ways. It is a {@link SegmentAllocator} itself: pass it
 * wherever the JDK takes one ({@code Linker} downcalls that return a struct by value,
 * {@code allocateFrom}, jextract bindings), and each segment it hands out is freed through it, with
 * its exact size, once the segment is unreachable, as {@link Arena#ofAuto()}'s are
 * ({@link #allocate(long, long)}). And it is a factory of {@link Arena}s ({@link #openArena()},
 * {@link #openSharedArena()}) whose {@code close()} frees every segment at once.
 *
 * @param name      the handler's name: not blank, at most 127 UTF-8 bytes (NEP 49's
 *                  {@code char name[127]}), no NUL character
 * @param version   the version of the allocator interface, at least 1 (NEP 49's is 1)
 * @param allocator the allocator
 */
public record DataMemHandler(String name, int version, DataMemAllocator allocator) implements SegmentAllocator {

    /** The longest name in UTF-8 bytes, as NEP 49's {@code char name[127]}. */
    public static final int MAX_NAME_BYTES = 127;

    /**
     * Validates the components.
     *
     * @throws NullPointerException     if {@code name} or {@code allocator} is null
     * @throws IllegalArgumentException if {@code name} is blank, longer than {@value #MAX_NAME_BYTES}
     *                                  UTF-8 bytes or contains a NUL character, or if
     *                                  {@code version} is below 1
     */
    public DataMemHandler {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(allocator, "allocator");
        if (name.isBlank()) {
            throw new IllegalArgumentException("name: " + Messages.quote(name) + " (expected: not blank)");
        }
        // A UTF-8 byte is at most 3 per char of UTF-16: short names need no encoding to be checked.
        int bytes = name.length() <= MAX_NAME_BYTES / 3 ? 0 : name.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_NAME_BYTES) {
            throw new IllegalArgumentException("name: " + Messages.quote(name) + " is " + bytes
                    + " UTF-8 bytes (expected: at most " + MAX_NAME_BYTES + ")");
        }
        if (name.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("name: " + Messages.quote(name.replace("\0", "\\0"))
                    + " (expected: no NUL character)");
        }
        if (version < 1) {
            throw new IllegalArgumentException("version: " + version + " (expected: >= 1)");
        }
    }

    /**
     * A version-1 handler.
     *
     * @param name      the name
     * @param allocator the allocator
     * @return {@code new DataMemHandler(name, 1, allocator)}
     * @throws NullPointerException     if {@code name} or {@code allocator} is null
     * @throws IllegalArgumentException if {@code name} is not a valid handler name
     */
    public static DataMemHandler of(String name, DataMemAllocator allocator) {
        return new DataMemHandler(name, 1, allocator);
    }

    /**
     * The allocator's traits.
     *
     * @return {@code allocator().traits()}
     */
    public MemoryTraits traits() {
        return allocator.traits();
    }

    /**
     * Allocates a zeroed segment through this handler's allocator, freed through it (with the exact
     * size allocated) once the segment and every segment derived from it are unreachable, as the
     * segments of {@link Arena#ofAuto()} are. Any thread may use the segment. This is what every
     * default method of {@link SegmentAllocator} ({@code allocate(layout)},
     * {@code allocateFrom(...)}) and every FFM API given this handler as its allocator calls.
     *
     * <p>An alignment larger than the allocator guarantees ({@link MemoryTraits#byteAlignment()}) is
     * honoured by over-allocating {@code byteAlignment - 1} bytes. A size of zero gives a zero-length
     * segment with an address of its own. Failures are those of the JDK's arenas: see
     * {@link #openArena()}. For memory freed at a point of your choosing, use {@link #openArena()}.
     *
     * @param byteSize      the segment's size in bytes
     * @param byteAlignment the segment's alignment in bytes, a power of two
     * @return the segment
     * @throws IllegalArgumentException      if {@code byteSize} is negative or {@code byteAlignment}
     *                                       is not a positive power of two
     * @throws UnsupportedOperationException if the handler's memory is not host-accessible
     * @throws OutOfMemoryError              if the allocator returned {@code NULL} or a limit refused
     *                                       the request (the cause is the {@link AllocationException}
     *                                       an array would have thrown), or the size with its
     *                                       alignment padding exceeds
     *                                       {@link DataMemAllocator#MAX_BYTE_SIZE}; the message names
     *                                       this handler and the byte count
     */
    @Override
    public MemorySegment allocate(long byteSize, long byteAlignment) {
        return HandlerArena.allocateAuto(this, byteSize, byteAlignment);
    }

    /**
     * Opens a confined arena that allocates through this handler: {@code allocate(byteSize,
     * byteAlignment)} calls this handler's allocator (over-allocating when the alignment asked for
     * exceeds the allocator's), returns zeroed memory as the JDK's arenas do, and {@code close()}
     * frees every segment through this handler with its size.
     *
     * <p>The arena fails as the JDK's do. Its {@code allocate} throws
     * {@link IllegalArgumentException} for a negative size or an alignment that is not a power of
     * two, {@link WrongThreadException} on another thread than the owner (before the allocator is
     * called), {@link IllegalStateException} once closed, and {@link OutOfMemoryError} when the
     * memory cannot be had: the allocator returned {@code NULL}, a limit refused (the error's cause
     * is the {@link OutOfNativeMemoryException} or {@link LimitExceededException} an array would
     * have thrown), or the size with its padding exceeds {@link DataMemAllocator#MAX_BYTE_SIZE}. The
     * error's message names this handler and the byte count.
     *
     * @return a new confined arena, owned by the calling thread
     * @throws UnsupportedOperationException if the handler's memory is not host-accessible
     */
    public Arena openArena() {
        return new HandlerArena(this, Arena.ofConfined(), false);
    }

    /**
     * Opens a shared arena that allocates through this handler, as {@link #openArena()} does (and
     * fails as it does); any thread may allocate from it and close it.
     *
     * @return a new shared arena
     * @throws UnsupportedOperationException if the handler's memory is not host-accessible
     */
    public Arena openSharedArena() {
        return new HandlerArena(this, Arena.ofShared(), true);
    }

    @Override
    public String toString() {
        return "DataMemHandler[" + name + " v" + version + "]";
    }
}
