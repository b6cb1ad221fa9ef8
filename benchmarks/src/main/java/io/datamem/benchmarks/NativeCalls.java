package io.datamem.benchmarks;

import io.datamem.benchmarks.report.Trace;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The benchmarks' own native calls, independent of datamem's bindings: the C library's
 * {@code malloc}/{@code free} (linked as datamem links them, critical), {@code mmap},
 * {@code madvise} and {@code munmap} for ordinary 4 KiB pages, and the C baseline library built
 * from {@code src/main/c/dmbench.c}.
 */
public final class NativeCalls {

    /** The system property naming the C baseline library ({@code libdmbench.so}). */
    public static final String LIBRARY_PROPERTY = "datamem.bench.library";

    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup LIBC = LINKER.defaultLookup();

    private static final MethodHandle MALLOC = critical("malloc", FunctionDescriptor.of(ADDRESS, JAVA_LONG));
    private static final MethodHandle FREE = critical("free", FunctionDescriptor.ofVoid(ADDRESS));
    private static final MethodHandle MMAP = LINKER.downcallHandle(libc("mmap"),
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG));
    private static final MethodHandle MUNMAP = LINKER.downcallHandle(libc("munmap"),
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle MADVISE = LINKER.downcallHandle(libc("madvise"),
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT));

    private static final int PROT_READ_WRITE = 0x3;
    private static final int MAP_PRIVATE_ANONYMOUS = 0x02 | 0x20;
    private static final int MADV_NOHUGEPAGE = 15;

    private NativeCalls() {
    }

    private static MemorySegment libc(String name) {
        return LIBC.find(name).orElseThrow(() -> new UnsatisfiedLinkError("C library symbol not found: " + name));
    }

    private static MethodHandle critical(String name, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(libc(name), descriptor, Linker.Option.critical(false));
    }

    /**
     * {@code malloc(byteSize)} through a downcall of our own.
     *
     * @param byteSize bytes
     * @return the block or NULL
     */
    public static MemorySegment malloc(long byteSize) {
        try {
            return (MemorySegment) MALLOC.invokeExact(byteSize);
        } catch (Throwable t) {
            throw sneaky(t);
        }
    }

    /**
     * {@code free(ptr)} through a downcall of our own.
     *
     * @param ptr a block or NULL
     */
    public static void free(MemorySegment ptr) {
        try {
            FREE.invokeExact(ptr);
        } catch (Throwable t) {
            throw sneaky(t);
        }
    }

    /**
     * An anonymous private mapping on ordinary pages: {@code mmap} then
     * {@code madvise(MADV_NOHUGEPAGE)}, so that it stays on base pages whatever the transparent
     * huge page mode.
     *
     * @param byteSize bytes, a multiple of the page size
     * @return the mapping's address
     * @throws IllegalStateException if the kernel refuses
     */
    public static long mapBasePages(long byteSize) {
        try {
            long address = (long) MMAP.invokeExact(0L, byteSize, PROT_READ_WRITE, MAP_PRIVATE_ANONYMOUS, -1, 0L);
            if (address == -1L) {
                throw new IllegalStateException("mmap of " + byteSize + " bytes failed");
            }
            int r = (int) MADVISE.invokeExact(address, byteSize, MADV_NOHUGEPAGE);
            if (r != 0) {
                int u = (int) MUNMAP.invokeExact(address, byteSize);
                throw new IllegalStateException("madvise(MADV_NOHUGEPAGE) failed" + (u != 0 ? "; munmap too" : ""));
            }
            return address;
        } catch (Throwable t) {
            throw sneaky(t);
        }
    }

    /**
     * {@code munmap}.
     *
     * @param address  a mapping from {@link #mapBasePages}
     * @param byteSize its size
     * @throws IllegalStateException if the kernel refuses
     */
    public static void unmap(long address, long byteSize) {
        try {
            int r = (int) MUNMAP.invokeExact(address, byteSize);
            if (r != 0) {
                throw new IllegalStateException("munmap of " + byteSize + " bytes at 0x" + Long.toHexString(address)
                        + " failed");
            }
        } catch (Throwable t) {
            throw sneaky(t);
        }
    }

    /**
     * The C baseline library, loaded on first use.
     */
    public static final class CBaseline {

        private static final MethodHandle MALLOC_FREE_LOOP;
        private static final MethodHandle NOTHING;
        private static final MethodHandle TRACE;

        static {
            Path library = library();
            SymbolLookup lookup = SymbolLookup.libraryLookup(library, Arena.global());
            MALLOC_FREE_LOOP = LINKER.downcallHandle(find(lookup, "dm_bench_malloc_free"),
                    FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG), Linker.Option.critical(false));
            TRACE = LINKER.downcallHandle(find(lookup, "dm_bench_trace"), FunctionDescriptor.of(JAVA_LONG, ADDRESS,
                    ADDRESS, JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_INT), Linker.Option.critical(false));
            NOTHING = LINKER.downcallHandle(find(lookup, "dm_bench_nothing"),
                    FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG), Linker.Option.critical(false));
        }

        private CBaseline() {
        }

        private static Path library() {
            String named = System.getProperty(LIBRARY_PROPERTY);
            Path p = Path.of(named != null ? named : "benchmarks/target/native/libdmbench.so");
            if (!Files.isRegularFile(p)) {
                throw new IllegalStateException("the C baseline library " + p.toAbsolutePath() + " is missing: build it"
                        + " with ./mvnw -B -Pbench -DskipTests package -pl benchmarks -am (needs gcc), or run"
                        + " benchmarks/run, which does; -D" + LIBRARY_PROPERTY + "=PATH names another");
            }
            return p;
        }

        private static MemorySegment find(SymbolLookup lookup, String name) {
            return lookup.find(name).orElseThrow(() -> new UnsatisfiedLinkError(name + " not found in libdmbench"));
        }

        /**
         * Allocates and frees a block {@code iterations} times with glibc, in C.
         *
         * @param byteSize   bytes per block
         * @param iterations pairs
         * @return the allocations that failed
         */
        public static long mallocFreeLoop(long byteSize, long iterations) {
            try {
                return (long) MALLOC_FREE_LOOP.invokeExact(byteSize, iterations);
            } catch (Throwable t) {
                throw sneaky(t);
            }
        }

        /**
         * Replays a trace with glibc, in C ({@code dm_bench_trace}; see {@link Trace#replay}).
         *
         * @param sizes  int64 sizes, window + steps of them
         * @param slots  int32 slots, steps of them
         * @param window live blocks
         * @param steps  steps
         * @param live   scratch room for window pointers
         * @param touch  0, 1 or 2, as {@link Trace#replay} takes it
         * @return the allocations that failed
         */
        public static long trace(MemorySegment sizes, MemorySegment slots, long window, long steps, MemorySegment live,
                                 int touch) {
            try {
                return (long) TRACE.invokeExact(sizes, slots, window, steps, live, touch);
            } catch (Throwable t) {
                throw sneaky(t);
            }
        }

        /**
         * An empty C function: the cost of one critical downcall.
         *
         * @param a a number
         * @param b another
         * @return their sum
         */
        public static long nothing(long a, long b) {
            try {
                return (long) NOTHING.invokeExact(a, b);
            } catch (Throwable t) {
                throw sneaky(t);
            }
        }
    }

    static RuntimeException sneaky(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }
}
