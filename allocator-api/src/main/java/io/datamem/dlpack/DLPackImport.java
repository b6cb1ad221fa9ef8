package io.datamem.dlpack;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;

/**
 * Calls producers' deleters: what an imported tensor's {@link io.datamem.spi.ReleasingAllocator}
 * runs once, and what {@link DLPack#release} runs.
 */
final class DLPackImport {

    /** {@code void (*deleter)(void *self)}, the function pointer passed first. */
    static final MethodHandle CALL_DELETER =
            Linker.nativeLinker().downcallHandle(FunctionDescriptor.ofVoid(ADDRESS));

    private DLPackImport() {
    }

    /**
     * What an imported tensor's allocator runs once: its deleter, called on {@code self}; and, for
     * messages, what it releases. One object for both, made per import.
     */
    static final class Deleter implements Runnable, java.util.function.Supplier<String> {
        private final MemorySegment deleter;
        private final long self;

        Deleter(MemorySegment deleter, long self) {
            this.deleter = deleter;
            this.self = self;
        }

        @Override
        public void run() {
            callDeleter(deleter, MemorySegment.ofAddress(self));
        }

        @Override
        public String get() {
            return "the DLPack tensor 0x" + Long.toHexString(self) + " it imported, through the producer's deleter";
        }
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
}
