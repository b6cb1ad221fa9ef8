package io.datamem.arrow;

import io.datamem.DataMemAllocator;
import io.datamem.MemoryTraits;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.atomic.AtomicBoolean;

import static java.lang.foreign.ValueLayout.ADDRESS;

/**
 * The allocator of handler {@code arrow}: it frees the one imported array it was made for by
 * calling the producer's {@code release} on the struct datamem moved it into, exactly once, then
 * frees that struct; it allocates nothing.
 */
final class ArrowImport implements DataMemAllocator {

    /** {@code void (*release)(struct ArrowXxx*)}, the function pointer passed first. */
    static final MethodHandle CALL_RELEASE = Linker.nativeLinker().downcallHandle(FunctionDescriptor.ofVoid(ADDRESS));

    private final MemorySegment moved;
    private final MemoryTraits traits;
    private final AtomicBoolean released = new AtomicBoolean();

    /**
     * @param moved  the {@code ArrowArray} datamem moved the producer's struct into (freed here)
     * @param traits the memory's traits
     */
    ArrowImport(MemorySegment moved, MemoryTraits traits) {
        this.moved = moved;
        this.traits = traits;
    }

    /** Calls a struct's release callback if it is set (the callback marks it released). */
    static void callRelease(MemorySegment struct, long releaseOffset) {
        MemorySegment release = struct.get(ADDRESS, releaseOffset);
        if (release.address() == 0) {
            return;
        }
        try {
            CALL_RELEASE.invokeExact(release, MemorySegment.ofAddress(struct.address()));
        } catch (Throwable t) {
            if (t instanceof RuntimeException r) {
                throw r;
            }
            if (t instanceof Error e) {
                throw e;
            }
            throw new IllegalStateException(t);
        }
    }

    private UnsupportedOperationException refuse(String operation) {
        return new UnsupportedOperationException("handler '" + ArrowCData.HANDLER_NAME + "' cannot " + operation
                + ": it only releases the Arrow array it imported, through the producer's release callback");
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
     * Refuses: the producer's memory cannot be resized.
     *
     * @throws UnsupportedOperationException always
     */
    @Override
    public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        throw refuse("reallocate");
    }

    /** Calls the producer's release callback the first time; later calls do nothing. */
    @Override
    public void free(MemorySegment ptr, long byteSize) {
        if (released.compareAndSet(false, true)) {
            try {
                callRelease(moved, 64);
            } finally {
                ArrowExports.free(moved);
            }
        }
    }

    @Override
    public MemoryTraits traits() {
        return traits;
    }
}
