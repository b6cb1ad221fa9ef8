package io.datamem.internal;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The C library functions datamem calls, as FFM downcalls. Internal: the bindings are shared by
 * every module through a qualified export.
 *
 * <p>{@code malloc}, {@code calloc}, {@code aligned_alloc} and {@code free} are linked as
 * {@linkplain Linker.Option#critical(boolean) critical} functions: they neither call back into Java
 * nor block for long, so the thread-state transition is skipped. {@code realloc} is not, because it
 * may copy a large block.
 */
public final class Libc {

    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup LIBC = LINKER.defaultLookup();

    // Each handle is linked on first use, in a holder class of its own: the first link in a JVM costs
    // about 130 ms (the FFM machinery's own start), each one after about 12 ms, and a program's first
    // array needs only malloc and free (docs/decisions.md, "Cold start")
    private static final class Malloc {
        static final MethodHandle H = critical("malloc", FunctionDescriptor.of(ADDRESS, JAVA_LONG));
    }

    private static final class Calloc {
        static final MethodHandle H = critical("calloc", FunctionDescriptor.of(ADDRESS, JAVA_LONG, JAVA_LONG));
    }

    private static final class AlignedAlloc {
        static final MethodHandle H = critical("aligned_alloc", FunctionDescriptor.of(ADDRESS, JAVA_LONG, JAVA_LONG));
    }

    private static final class Free {
        static final MethodHandle H = critical("free", FunctionDescriptor.ofVoid(ADDRESS));
    }

    private static final class Realloc {
        static final MethodHandle H = LINKER.downcallHandle(symbol("realloc"),
                FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG));
    }

    private static final class MallocUsableSize {
        static final MethodHandle H = critical("malloc_usable_size", FunctionDescriptor.of(JAVA_LONG, ADDRESS));
    }

    private static final class Sysconf {
        static final MethodHandle H = LINKER.downcallHandle(symbol("sysconf"),
                FunctionDescriptor.of(JAVA_LONG, JAVA_INT));
    }

    private static final class PageSize {
        static final long BYTES = fromAuxv();

        /** AT_PAGESZ from the kernel's auxiliary vector (no downcall to link), else {@code sysconf}. */
        private static long fromAuxv() {
            try {
                byte[] auxv = java.nio.file.Files.readAllBytes(java.nio.file.Path.of("/proc/self/auxv"));
                java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(auxv).order(java.nio.ByteOrder.nativeOrder());
                while (b.remaining() >= 16) {
                    long type = b.getLong();
                    long value = b.getLong();
                    if (type == AT_PAGESZ && value > 0 && Long.bitCount(value) == 1) {
                        return value;
                    }
                    if (type == 0) {
                        break;
                    }
                }
            } catch (java.io.IOException | SecurityException | UnsupportedOperationException e) {
                // not Linux's /proc: ask the C library
            }
            return sysconf(SC_PAGESIZE);
        }
    }

    private static final int AT_PAGESZ = 6;
    private static final int SC_PAGESIZE = 30; // Linux
    private static final int SC_NPROCESSORS_ONLN = 84; // Linux

    private Libc() {
    }

    /**
     * Looks a symbol up in the C library.
     *
     * @param name the symbol
     * @return its address
     * @throws UnsatisfiedLinkError if the C library has no such symbol
     */
    public static MemorySegment symbol(String name) {
        return LIBC.find(name).orElseThrow(() -> new UnsatisfiedLinkError("C library symbol not found: " + name));
    }

    private static MethodHandle critical(String name, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(symbol(name), descriptor, Linker.Option.critical(false));
    }

    /**
     * {@code malloc(byteSize)}.
     *
     * @param byteSize bytes, not negative
     * @return the block or NULL
     */
    public static MemorySegment malloc(long byteSize) {
        try {
            return (MemorySegment) Malloc.H.invokeExact(byteSize);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code calloc(count, elementByteSize)}.
     *
     * @param count           elements
     * @param elementByteSize bytes per element
     * @return the zeroed block or NULL
     */
    public static MemorySegment calloc(long count, long elementByteSize) {
        try {
            return (MemorySegment) Calloc.H.invokeExact(count, elementByteSize);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code aligned_alloc(byteAlignment, byteSize)} (glibc accepts any size).
     *
     * @param byteAlignment a power of two, at least 8
     * @param byteSize      bytes
     * @return the block or NULL
     */
    public static MemorySegment alignedAlloc(long byteAlignment, long byteSize) {
        try {
            return (MemorySegment) AlignedAlloc.H.invokeExact(byteAlignment, byteSize);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code realloc(ptr, byteSize)}.
     *
     * @param ptr      a block from {@link #malloc}, {@link #calloc} or {@link #realloc}, or NULL
     * @param byteSize the new size, greater than 0 (glibc frees on 0)
     * @return the block or NULL (then {@code ptr} is untouched)
     */
    public static MemorySegment realloc(MemorySegment ptr, long byteSize) {
        try {
            return (MemorySegment) Realloc.H.invokeExact(ptr, byteSize);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code free(ptr)}.
     *
     * @param ptr a block or NULL
     */
    public static void free(MemorySegment ptr) {
        try {
            Free.H.invokeExact(ptr);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code malloc_usable_size(ptr)}.
     *
     * @param ptr a live block
     * @return the bytes usable in the block, at least its requested size
     */
    public static long mallocUsableSize(MemorySegment ptr) {
        try {
            return (long) MallocUsableSize.H.invokeExact(ptr);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code sysconf(name)}.
     *
     * @param name a {@code _SC_*} constant
     * @return the value, or -1
     */
    public static long sysconf(int name) {
        try {
            return (long) Sysconf.H.invokeExact(name);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * The system page size.
     *
     * @return bytes, for example 4096
     */
    public static long pageSize() {
        return PageSize.BYTES;
    }

    /**
     * The number of processors online.
     *
     * @return the count
     */
    public static int onlineProcessors() {
        return (int) sysconf(SC_NPROCESSORS_ONLN);
    }

    /**
     * Turns a throwable from {@code invokeExact} into something to throw.
     *
     * @param t the throwable
     * @return an unchecked throwable wrapping or being {@code t}
     */
    public static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException("native call failed", t);
    }
}
