package io.datamem.spi;

import io.datamem.DataMemAllocator;
import io.datamem.MemoryTraits;

import java.util.Objects;
import java.util.function.Supplier;

/**
 * The allocator of an array over memory another owner made (a DLPack producer, an Arrow producer,
 * another process): it allocates nothing, and its {@code free} hands the memory back to its owner
 * by running a release action exactly once, from any thread; later frees do nothing. This is what
 * an import protocol passes to {@link io.datamem.array.NDArray#adopt} with a handler of its own
 * name, so that closing the array (or its collection) releases the foreign memory.
 *
 * <p>{@code malloc}, {@code calloc} and {@code realloc} throw {@link UnsupportedOperationException}
 * naming the handler and what it releases: the owner's memory cannot be allocated or resized here.
 * {@code free} runs the release action the first time, whatever its arguments, and propagates what
 * the action throws; later calls do nothing. {@code traits()} are the traits given to
 * {@link #of}. Thread-safe.
 */
public interface ReleasingAllocator extends DataMemAllocator {

    /**
     * An allocator that releases foreign memory once.
     *
     * @param handlerName the name of the handler it goes in, for messages
     * @param what        what it releases and how, for the refusals' messages (called only then):
     *                    "the DLPack tensor 0x... it imported, through the producer's deleter"
     * @param traits      the memory's traits
     * @param release     what {@code free} runs, once; an exception it throws propagates from
     *                    that {@code free} (the memory counts as released all the same)
     * @return the allocator
     * @throws NullPointerException if an argument is null
     */
    static ReleasingAllocator of(String handlerName, Supplier<String> what, MemoryTraits traits,
                                        Runnable release) {
        return new Releasing(Objects.requireNonNull(handlerName, "handlerName"),
                Objects.requireNonNull(what, "what"), Objects.requireNonNull(traits, "traits"),
                Objects.requireNonNull(release, "release"));
    }

    /**
     * Whether {@code free} has run the release action.
     *
     * @return true once released
     */
    boolean isReleased();
}
