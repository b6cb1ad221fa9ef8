package io.datamem.arrow;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

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

    /**
     * What an imported array's allocator runs once when the import took over an {@code ArrowArray}
     * datamem exported (no move): the release by its token; and, for messages, what it releases.
     */
    static final class Taken implements Runnable, java.util.function.Supplier<String> {
        private final long token;

        Taken(long token) {
            this.token = token;
        }

        @Override
        public void run() {
            ArrowExports.releaseToken(token);
        }

        @Override
        public String get() {
            return "the Arrow array it imported (one datamem exported), through its release";
        }
    }

    /**
     * What an imported array's allocator runs once: the release callback of the struct the
     * producer's {@code ArrowArray} was moved into, then gives that struct back; and, for messages,
     * what it releases. One object for both, made per import.
     */
    static final class Moved implements Runnable, java.util.function.Supplier<String> {
        private final MemorySegment struct;
        private final long token;   // the struct's slot in ArrowExports.MOVED, or -1: malloc'd

        Moved(MemorySegment struct, long token) {
            this.struct = struct;
            this.token = token;
        }

        /** Gives the struct back without releasing what it holds (an import that failed). */
        void discard() {
            if (token != -1) {
                ArrowExports.MOVED.release(token);
            } else {
                ArrowExports.free(struct);
            }
        }

        @Override
        public void run() {
            try {
                callRelease(struct, 64);
            } finally {
                discard();
            }
        }

        @Override
        public String get() {
            return "the Arrow array it imported, through the producer's release callback";
        }
    }

    /** Calls a struct's release callback if it is set (the callback marks it released). */
    static void callRelease(MemorySegment struct, long releaseOffset) {
        // Read as a long, not as an ADDRESS segment (see ArrowExports.RELEASE_ARRAY_ADDRESS).
        long release = struct.get(JAVA_LONG, releaseOffset);
        if (release == 0) {
            return;
        }
        // A struct datamem exported, back in this JVM: the same function, without the crossing.
        if (release == ArrowExports.RELEASE_ARRAY_ADDRESS) {
            ArrowExports.releaseAt(struct.address(), false);
            return;
        }
        if (release == ArrowExports.RELEASE_SCHEMA_ADDRESS) {
            ArrowExports.releaseAt(struct.address(), true);
            return;
        }
        try {
            CALL_RELEASE.invokeExact(MemorySegment.ofAddress(release), MemorySegment.ofAddress(struct.address()));
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
