package io.datamem.dlpack;

import io.datamem.DataMemAllocator;
import io.datamem.MemoryTraits;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;

/**
 * The allocator of handler {@code dlpack}: it frees the one tensor it was made for by calling the
 * producer's deleter, exactly once, and allocates nothing.
 */
final class DLPackImport implements DataMemAllocator {

    /** {@code void (*deleter)(void *self)}, the function pointer passed first. */
    static final MethodHandle CALL_DELETER =
            Linker.nativeLinker().downcallHandle(FunctionDescriptor.ofVoid(ADDRESS));

    private final MemorySegment managed;
    private final MemorySegment deleter;
    private final MemoryTraits traits;
    private static final VarHandle DELETED;

    static {
        try {
            DELETED = MethodHandles.lookup().findVarHandle(DLPackImport.class, "deleted", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @SuppressWarnings("unused") // through DELETED
    private volatile boolean deleted;

    DLPackImport(MemorySegment managed, MemorySegment deleter, MemoryTraits traits) {
        this.managed = MemorySegment.ofAddress(managed.address());
        this.deleter = deleter;
        this.traits = traits;
    }

    static void callDeleter(MemorySegment deleter, MemorySegment managed) {
        if (deleter.address() == 0) {
            return;
        }
        if (deleter.address() == DLPackExports.DELETER.address()) {
            // A tensor datamem exported, back in this JVM: the same function, without the crossing.
            DLPackExports.delete(managed.address());
            return;
        }
        try {
            CALL_DELETER.invokeExact(deleter, managed);
        } catch (Throwable t) {
            throw io.datamem.internal.Libc.rethrow(t);
        }
    }

    private UnsupportedOperationException refuse(String operation) {
        return new UnsupportedOperationException("handler 'dlpack' cannot " + operation + ": it only releases the"
                + " DLPack tensor 0x" + Long.toHexString(managed.address()) + " it imported, through the producer's"
                + " deleter");
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

    /** Calls the producer's deleter the first time; later calls do nothing. */
    @Override
    public void free(MemorySegment ptr, long byteSize) {
        if (DELETED.compareAndSet(this, false, true)) {
            callDeleter(deleter, managed);
        }
    }

    @Override
    public MemoryTraits traits() {
        return traits;
    }

    boolean isDeleted() {
        return deleted;
    }
}
