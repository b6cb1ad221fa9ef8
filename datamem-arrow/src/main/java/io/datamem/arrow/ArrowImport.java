package io.datamem.arrow;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;

/**
 * Calls producers' release callbacks: what an imported array's
 * {@link io.datamem.spi.ReleasingAllocator} runs once (on the struct datamem moved the producer's
 * into), and what {@link ArrowCData#releaseArray} and {@link ArrowCData#releaseSchema} run.
 */
final class ArrowImport {

    /** {@code void (*release)(struct ArrowXxx*)}, the function pointer passed first. */
    static final MethodHandle CALL_RELEASE = Linker.nativeLinker().downcallHandle(FunctionDescriptor.ofVoid(ADDRESS));

    private ArrowImport() {
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
}
