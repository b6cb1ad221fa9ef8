package io.datamem.spi;

import io.datamem.MemoryTraits;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.Supplier;

/** The {@link ReleasingAllocator} that {@link ReleasingAllocator#of} returns. */
final class Releasing implements ReleasingAllocator {

    private static final VarHandle RELEASED;

    static {
        try {
            RELEASED = MethodHandles.lookup().findVarHandle(Releasing.class, "released", boolean.class);
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

    Releasing(String handlerName, Supplier<String> what, MemoryTraits traits, Runnable release) {
        this.handlerName = handlerName;
        this.what = what;
        this.traits = traits;
        this.release = release;
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
    @Override
    public boolean isReleased() {
        return released;
    }
}
