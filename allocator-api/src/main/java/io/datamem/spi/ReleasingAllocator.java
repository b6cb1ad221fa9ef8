package io.datamem.spi;

import io.datamem.DataMemAllocator;
import io.datamem.MemoryTraits;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * The allocator of an array over memory another owner made (a DLPack producer, an Arrow producer,
 * another process): it allocates nothing, and its {@code free} hands the memory back to its owner
 * by running a release action exactly once, from any thread; later frees do nothing. This is what
 * an import protocol passes to {@link io.datamem.array.NDArray#adopt} with a handler of its own
 * name, so that closing the array (or its collection) releases the foreign memory.
 */
public final class ReleasingAllocator implements DataMemAllocator {

    private static final VarHandle RELEASED;

    static {
        try {
            RELEASED = MethodHandles.lookup().findVarHandle(ReleasingAllocator.class, "released", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final String handlerName;
    private final Supplier<String> what;
    private final MemoryTraits traits;
    private final Runnable release;
    @SuppressWarnings("unused") // through RELEASED
    private volatile boolean released;

    private ReleasingAllocator(String handlerName, Supplier<String> what, MemoryTraits traits, Runnable release) {
        this.handlerName = handlerName;
        this.what = what;
        this.traits = traits;
        this.release = release;
    }

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
    public static ReleasingAllocator of(String handlerName, Supplier<String> what, MemoryTraits traits,
                                        Runnable release) {
        return new ReleasingAllocator(Objects.requireNonNull(handlerName, "handlerName"),
                Objects.requireNonNull(what, "what"), Objects.requireNonNull(traits, "traits"),
                Objects.requireNonNull(release, "release"));
    }

    private UnsupportedOperationException refuse(String operation) {
        return new UnsupportedOperationException("handler '" + handlerName + "' cannot " + operation + ": it only"
                + " releases " + what.get());
    }

    /**
     * Refuses.
     *
     * @throws UnsupportedOperationException always
     */
    @Override
    public MemorySegment malloc(long byteSize) {
        throw refuse("allocate");
    }

    /**
     * Refuses.
     *
     * @throws UnsupportedOperationException always
     */
    @Override
    public MemorySegment calloc(long count, long elementByteSize) {
        throw refuse("allocate");
    }

    /**
     * Refuses: the owner's memory cannot be resized here.
     *
     * @throws UnsupportedOperationException always
     */
    @Override
    public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        throw refuse("reallocate");
    }

    /**
     * Runs the release action the first time; later calls do nothing.
     *
     * @throws RuntimeException what the release action throws, the first time
     */
    @Override
    public void free(MemorySegment ptr, long byteSize) {
        if (RELEASED.compareAndSet(this, false, true)) {
            release.run();
        }
    }

    /**
     * The memory's traits.
     *
     * @return the traits given
     */
    @Override
    public MemoryTraits traits() {
        return traits;
    }

    /**
     * Whether {@code free} has run the release action.
     *
     * @return true once released
     */
    public boolean isReleased() {
        return released;
    }
}
