package io.datamem;

import io.datamem.internal.HandlerArena;
import io.datamem.internal.Messages;

import java.lang.foreign.Arena;
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
 * <p>A handler is also a factory of {@link Arena}s ({@link #openArena()}, {@link #openSharedArena()})
 * so that every FFM API taking an {@code Arena} or a {@link java.lang.foreign.SegmentAllocator}
 * (jextract bindings among them) allocates through it.
 *
 * @param name      the handler's name: not blank, at most 127 UTF-8 bytes (NEP 49's
 *                  {@code char name[127]}), no NUL character
 * @param version   the version of the allocator interface, at least 1 (NEP 49's is 1)
 * @param allocator the allocator
 */
public record DataMemHandler(String name, int version, DataMemAllocator allocator) {

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
        int bytes = name.getBytes(StandardCharsets.UTF_8).length;
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
     * Opens a confined arena that allocates through this handler: {@code allocate(byteSize,
     * byteAlignment)} calls this handler's allocator (over-allocating when the alignment asked for
     * exceeds the allocator's), returns zeroed memory as the JDK's arenas do, and {@code close()}
     * frees every segment through this handler with its size.
     *
     * @return a new confined arena, owned by the calling thread
     * @throws UnsupportedOperationException if the handler's memory is not host-accessible
     */
    public Arena openArena() {
        return new HandlerArena(this, Arena.ofConfined());
    }

    /**
     * Opens a shared arena that allocates through this handler, as {@link #openArena()} does; any
     * thread may allocate from it and close it.
     *
     * @return a new shared arena
     * @throws UnsupportedOperationException if the handler's memory is not host-accessible
     */
    public Arena openSharedArena() {
        return new HandlerArena(this, Arena.ofShared());
    }

    @Override
    public String toString() {
        return "DataMemHandler[" + name + " v" + version + "]";
    }
}
