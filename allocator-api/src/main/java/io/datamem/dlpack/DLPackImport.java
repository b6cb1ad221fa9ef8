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
