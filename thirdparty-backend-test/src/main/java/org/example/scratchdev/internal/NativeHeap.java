package org.example.scratchdev.internal;

import io.datamem.spi.Availability;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.Optional;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The scratch device's "hardware": C's {@code aligned_alloc} and {@code free}, bound with the
 * JDK's foreign function API. Bound on first use, so that merely loading the provider touches
 * nothing native.
 */
public final class NativeHeap {

    private NativeHeap() {
    }

    /** The bound functions, or why they could not be bound. */
    private static final class Bound {
        static final MethodHandle ALIGNED_ALLOC;
        static final MethodHandle FREE;
        static final String MISSING;

        static {
            Linker linker = Linker.nativeLinker();
            SymbolLookup libc = linker.defaultLookup();
            Optional<MemorySegment> alloc = libc.find("aligned_alloc");
            Optional<MemorySegment> free = libc.find("free");
            if (alloc.isPresent() && free.isPresent()) {
                ALIGNED_ALLOC = linker.downcallHandle(alloc.get(), FunctionDescriptor.of(ADDRESS, JAVA_LONG, JAVA_LONG));
                FREE = linker.downcallHandle(free.get(), FunctionDescriptor.ofVoid(ADDRESS));
                MISSING = null;
            } else {
                ALIGNED_ALLOC = null;
                FREE = null;
                MISSING = "the C library has no " + (alloc.isEmpty() ? "aligned_alloc" : "free");
            }
        }
    }

    /**
     * Whether the C functions the scratch device needs are there.
     *
     * @return available, or unavailable naming the missing function
     */
    public static Availability availability() {
        return Bound.MISSING == null ? Availability.AVAILABLE
                : Availability.unavailable("scratchdev needs C's aligned_alloc and free: " + Bound.MISSING);
    }

    /**
     * {@code aligned_alloc(alignment, byteSize)}.
     *
     * @param alignment a power of two
     * @param byteSize  a multiple of {@code alignment}, positive
     * @return the block's address, or 0 if the C library has no memory for it
     * @throws IllegalStateException if the C library lacks the function
     */
    public static long alignedAlloc(long alignment, long byteSize) {
        checkBound();
        try {
            return ((MemorySegment) Bound.ALIGNED_ALLOC.invokeExact(alignment, byteSize)).address();
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code free(address)}.
     *
     * @param address what {@link #alignedAlloc} returned
     * @throws IllegalStateException if the C library lacks the function
     */
    public static void free(long address) {
        checkBound();
        try {
            Bound.FREE.invokeExact(MemorySegment.ofAddress(address));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private static void checkBound() {
        if (Bound.MISSING != null) {
            throw new IllegalStateException(availability().reason());
        }
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }
}
