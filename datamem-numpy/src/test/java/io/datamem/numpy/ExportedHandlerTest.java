package io.datamem.numpy;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.testing.CountingAllocator;
import io.datamem.testing.NativeToolchain;
import io.datamem.testing.Nep49SampleAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A Java handler exported as a native {@code PyDataMem_Handler}, called as C calls it: the struct's
 * contents, the live-block table behind NumPy's size-less {@code realloc}, every error path
 * (foreign, double and mis-sized frees, overflow, a handler that throws, calls after close), and
 * calls from native threads the JVM has never seen. None of them may end the JVM.
 */
class ExportedHandlerTest {

    @TempDir
    Path dir;

    private final Nep49SampleAllocator sample = new Nep49SampleAllocator();
    private final CountingAllocator counting = new CountingAllocator(sample);
    private final DataMemHandler handler = DataMemHandler.of("counting-export", counting);

    @AfterEach
    void sizesWereRight() {
        assertEquals(List.of(), sample.violations(), "every free and realloc reached the handler with its size");
    }

    @Test
    void structHoldsNameVersionCtxAndFourFunctions() {
        assertEquals(168, PyDataMem.HANDLER_LAYOUT.byteSize());
        assertEquals(128, PyDataMem.HANDLER_LAYOUT.byteOffset(PathElement.groupElement("allocator")));
        assertEquals(127, PyDataMem.HANDLER_LAYOUT.byteOffset(PathElement.groupElement("version")));
        assertEquals(40, PyDataMem.ALLOCATOR_LAYOUT.byteSize());
        assertEquals("mem_handler", PyDataMem.CAPSULE_NAME);
        DataMemHandler v3 = new DataMemHandler("counting-export", 3, counting);
        try (ExportedHandler e = PyDataMem.export(v3)) {
            MemorySegment s = e.struct();
            assertEquals(168, s.byteSize());
            assertEquals(s.address(), e.address());
            assertEquals("counting-export", s.getString(0));
            assertEquals(0, s.get(JAVA_BYTE, "counting-export".length()), "NUL-terminated");
            assertEquals(1, s.get(JAVA_BYTE, 127), "version 1: the struct's layout, whatever the handler's version");
            for (String f : List.of("ctx", "malloc", "calloc", "realloc", "free")) {
                long offset = PyDataMem.HANDLER_LAYOUT.byteOffset(PathElement.groupElement("allocator"),
                        PathElement.groupElement(f));
                assertNotEquals(0, s.get(ADDRESS, offset).address(), f + " is set");
            }
            assertEquals("counting-export", e.nativeName());
            assertEquals(v3, e.handler());
        }
    }

    @Test
    void mallocCallocReallocFreeReachTheHandlerWithRecordedSizes() {
        try (ExportedHandler e = PyDataMem.export(handler)) {
            StructCalls c = new StructCalls(e.struct());
            long p = c.malloc(100);
            assertNotEquals(0, p);
            StructCalls.bytes(p, 100).fill((byte) 7);
            long z = c.calloc(250, 4);
            for (byte b : StructCalls.bytes(z, 1000).toArray(JAVA_BYTE)) {
                assertEquals(0, b);
            }
            assertEquals(2, e.liveBlocks());
            assertEquals(1100, e.liveBytes());
            assertEquals(1100, counting.liveBytes());

            long q = c.realloc(p, 5000);            // no old size from C: the table has it
            assertNotEquals(0, q);
            assertEquals(7, StructCalls.bytes(q, 100).get(JAVA_BYTE, 99), "data kept");
            assertEquals(5000 + 1000, e.liveBytes());
            long r = c.realloc(0, 64);              // realloc(NULL, n) allocates
            assertNotEquals(0, r);

            c.free(q, 5000);
            c.free(z, 1000);
            c.free(r, 64);
            c.free(0, 0);                           // free(NULL) does nothing
            ExportStatistics s = e.statistics();
            assertEquals(new ExportStatistics(0, 0, 3, 1, 3, 0, 0, 0, 0, 0, 0, 0), s);
            assertEquals(0, counting.liveBlocks());
            assertTrue(e.lastAnomaly().isEmpty(), () -> e.lastAnomaly().orElseThrow());
        }
    }

    @Test
    void theLiveBlockTableKeepsEverySizeThroughGrowthAndDeletion() {
        // thousands of blocks in the table's stripes: each grows several times, and frees in an
        // order other than allocation's shift entries back along their probe runs
        try (ExportedHandler e = PyDataMem.export(handler)) {
            StructCalls c = new StructCalls(e.struct());
            int n = 5000;
            long[] blocks = new long[n];
            long bytes = 0;
            for (int i = 0; i < n; i++) {
                blocks[i] = c.malloc(8 + i);
                bytes += 8 + i;
            }
            assertEquals(n, e.liveBlocks());
            assertEquals(bytes, e.liveBytes());
            for (int i = 0; i < n; i += 2) {       // every other one, then a realloc of the rest
                c.free(blocks[i], 8 + i);
                bytes -= 8 + i;
                assertTrue(e.liveBlockSize(blocks[i]).isEmpty());
            }
            for (int i = 1; i < n; i += 2) {
                assertEquals(8 + i, e.liveBlockSize(blocks[i]).orElseThrow(), "the size of block " + i);
                blocks[i] = c.realloc(blocks[i], 16 + i);
                bytes += 8;
            }
            assertEquals(n / 2, e.liveBlocks());
            assertEquals(bytes, e.liveBytes());
            for (int i = n - 1; i > 0; i -= 2) {
                c.free(blocks[i], 16 + i);
            }
            c.free(blocks[1], 17);                   // the last one freed, again: told from a foreign free
            ExportStatistics s = e.statistics();
            assertEquals(new ExportStatistics(0, 0, n, n / 2, n, 0, 0, 0, 0, 1, 0, 0), s);
            assertEquals(0, counting.liveBlocks());
        }
    }

    @Test
    void mallocOfZeroIsAUniqueBlockAndOverflowIsNull() {
        try (ExportedHandler e = PyDataMem.export(handler)) {
            StructCalls c = new StructCalls(e.struct());
            long a = c.malloc(0);
            long b = c.malloc(0);
            assertNotEquals(0, a, "malloc(0) returns what the handler returns: a unique pointer");
            assertNotEquals(a, b);
            assertEquals(0, c.calloc(1L << 40, 1L << 40), "nelem * elsize overflows");
            assertEquals(0, c.calloc(-1, 2), "SIZE_MAX * 2");
            assertEquals(0, c.malloc(-1), "malloc(SIZE_MAX)");
            assertEquals(0, c.malloc(DataMemAllocator.MAX_BYTE_SIZE + 1));
            assertEquals(0, c.malloc(1L << 50), "the handler's own NULL (1 PiB)");
            assertEquals(0, c.realloc(a, -8), "realloc to SIZE_MAX - 7");
            assertEquals(2, e.liveBlocks(), "a failed realloc keeps the block");
            c.free(a, 0);
            c.free(b, 0);
            ExportStatistics s = e.statistics();
            assertEquals(6, s.failedAllocations(), s::toString);
            assertEquals(0, s.upcallErrors());
            assertEquals(0, counting.liveBlocks());
        }
    }

    @Test
    void aWrongFreeSizeIsCountedAndTheRecordedSizeIsUsed() {
        try (ExportedHandler e = PyDataMem.export(handler)) {
            StructCalls c = new StructCalls(e.struct());
            long p = c.malloc(80);
            c.free(p, 0);                           // NumPy does this for some shapes with a 0
            assertEquals(1, e.statistics().sizeMismatches());
            assertEquals(0, counting.liveBytes(), "freed with its 80 bytes (the sample checks the size)");
        }
    }

    @Test
    void foreignAndDoubleFreesAreRecordedAndIgnored() {
        try (ExportedHandler e = PyDataMem.export(handler); Arena arena = Arena.ofConfined()) {
            StructCalls c = new StructCalls(e.struct());
            MemorySegment foreign = arena.allocate(64);
            foreign.fill((byte) 3);
            c.free(foreign.address(), 64);
            assertEquals(3, foreign.get(JAVA_BYTE, 63), "a foreign block is left alone");
            long p = c.malloc(32);
            c.free(p, 32);
            c.free(p, 32);                          // double free
            assertEquals(0, c.realloc(p, 64), "realloc of a freed block is refused");
            assertEquals(0, c.realloc(foreign.address(), 64), "realloc of a foreign block is refused");
            ExportStatistics s = e.statistics();
            assertEquals(1, s.foreignFrees(), s::toString);
            assertEquals(1, s.doubleFrees(), s::toString);
            assertEquals(2, s.foreignReallocs(), s::toString);
            assertEquals(1, s.frees());
            assertEquals(0, counting.liveBlocks());
            assertEquals(1, counting.frees(), "the handler saw one free");
            assertTrue(e.lastAnomaly().orElseThrow().contains("not a live block"), e.lastAnomaly()::orElseThrow);
        }
    }

    @Test
    void exceptionsInsideTheHandlerNeverLeaveTheUpcall() {
        AtomicReference<String> mode = new AtomicReference<>("throw");
        DataMemAllocator hostile = new DataMemAllocator() {
            @Override
            public MemorySegment malloc(long byteSize) {
                return switch (mode.get()) {
                    case "throw" -> throw new IllegalStateException("malloc refuses");
                    case "error" -> throw new OutOfMemoryError("malloc error");
                    case "heap" -> MemorySegment.ofArray(new byte[(int) byteSize]);
                    default -> counting.malloc(byteSize);
                };
            }

            @Override
            public MemorySegment calloc(long count, long elementByteSize) {
                throw new UnsupportedOperationException("calloc refuses");
            }

            @Override
            public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
                throw new IllegalStateException("realloc refuses");
            }

            @Override
            public void free(MemorySegment ptr, long byteSize) {
                counting.free(ptr, byteSize);
                throw new IllegalStateException("free complains after freeing");
            }
        };
        try (ExportedHandler e = PyDataMem.export(DataMemHandler.of("hostile", hostile))) {
            StructCalls c = new StructCalls(e.struct());
            assertEquals(0, c.malloc(10));
            mode.set("error");
            assertEquals(0, c.malloc(10));
            mode.set("heap");
            assertEquals(0, c.malloc(10), "a heap segment is no pointer for C");
            assertEquals(0, c.calloc(10, 1));
            mode.set("ok");
            long p = c.malloc(10);
            assertNotEquals(0, p);
            assertEquals(0, c.realloc(p, 20), "realloc threw: NULL, block kept");
            assertEquals(1, e.liveBlocks());
            c.free(p, 10);
            assertEquals(0, e.liveBlocks(), "the block left the table before the handler threw");
            assertEquals(0, counting.liveBlocks());
            assertEquals(6, e.statistics().upcallErrors(), e.statistics()::toString);
            assertTrue(e.lastAnomaly().orElseThrow().contains("free complains"), e.lastAnomaly()::orElseThrow);
        }
    }

    @Test
    void closingWithLiveBlocksRefusesAllocationsAndStillFreesThem() {
        ExportedHandler e = PyDataMem.export(handler);
        StructCalls c = new StructCalls(e.struct());
        long a = c.malloc(100);
        long b = c.calloc(10, 10);
        e.close();
        e.close();                                   // idempotent
        assertTrue(e.isClosed());
        assertEquals(0, c.malloc(8), "closed: no new memory");
        assertEquals(0, c.calloc(1, 8));
        assertEquals(0, c.realloc(a, 1000), "closed: no resize either");
        assertEquals(0, c.realloc(0, 8));
        assertEquals(2, e.liveBlocks(), "blocks C holds stay valid");
        StructCalls.bytes(a, 100).fill((byte) 1);
        c.free(a, 100);                              // NumPy frees its arrays later: served
        c.free(b, 100);
        assertEquals(0, counting.liveBlocks(), "both freed through the handler after close");
        c.free(b, 100);                              // a double free after close: recorded, ignored
        try (Arena arena = Arena.ofConfined()) {
            c.free(arena.allocate(8).address(), 8);  // a foreign free after close
        }
        ExportStatistics s = e.statistics();
        assertEquals(4, s.refusedAfterClose(), s::toString);
        assertEquals(2, s.frees());
        assertEquals(1, s.doubleFrees());
        assertEquals(1, s.foreignFrees());
        assertEquals(0, s.upcallErrors());
    }

    @Test
    void callsThroughTheStructOfAClosedCollectedExportAreStrayAndHarmless() throws InterruptedException {
        ExportedHandler e = PyDataMem.export(DataMemHandler.of("collected", new CountingAllocator(
                DataMem.builtinDefault().allocator())));
        StructCalls c = new StructCalls(e.struct());
        c.free(c.malloc(8), 8);
        e.close();
        java.lang.ref.WeakReference<ExportedHandler> ref = new java.lang.ref.WeakReference<>(e);
        e = null;
        for (int i = 0; i < 100 && ref.get() != null; i++) {
            System.gc();
            Thread.sleep(10);
        }
        long before = PyDataMem.strayCalls();
        // The struct C kept is still valid memory; its calls now find no export.
        long p = c.malloc(8);
        c.free(12345678L, 8);
        assertEquals(0, p);
        if (ref.get() == null) {
            assertTrue(PyDataMem.strayCalls() >= before + 2, "stray calls counted");
        }
    }

    @Test
    void aNameOf127BytesIsCutToTheLongestPrefixCCanRead() {
        String ascii = "a".repeat(127);
        try (ExportedHandler e = PyDataMem.export(DataMemHandler.of(ascii, counting))) {
            assertEquals("a".repeat(126), e.nativeName());
            assertEquals(e.nativeName(), e.struct().getString(0));
            assertEquals(0, e.struct().get(JAVA_BYTE, 126), "the NUL fits in char name[127]");
            assertEquals(ascii, e.handler().name(), "the Java handler keeps its name");
        }
        String accented = "b".repeat(125) + "é";    // 125 + 2 bytes: the é would be cut in half
        try (ExportedHandler e = PyDataMem.export(DataMemHandler.of(accented, counting))) {
            assertEquals("b".repeat(125), e.nativeName(), "cut at a character boundary");
        }
        String fits = "c".repeat(120) + "é€";      // 120 + 2 + 3 = 125 bytes: kept whole
        try (ExportedHandler e = PyDataMem.export(DataMemHandler.of(fits, counting))) {
            assertEquals(fits, e.nativeName());
            assertEquals(fits, e.struct().getString(0, StandardCharsets.UTF_8));
        }
    }

    @Test
    void nativeThreadsAllocateReallocateAndFreeConcurrently() throws Throwable {
        Path so = NativeToolchain.compileSharedLibrary("native/nep49_driver.c", dir, List.of());
        try (Arena lib = Arena.ofShared(); ExportedHandler e = PyDataMem.export(handler)) {
            SymbolLookup lookup = SymbolLookup.libraryLookup(so, lib);
            MethodHandle drive = Linker.nativeLinker().downcallHandle(lookup.findOrThrow("drive_threads"),
                    FunctionDescriptor.of(JAVA_LONG, ADDRESS, JAVA_INT, JAVA_INT));
            MethodHandle freeOnThread = Linker.nativeLinker().downcallHandle(
                    lookup.findOrThrow("free_on_native_thread"), FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS,
                            JAVA_LONG));
            long errors = (long) drive.invokeExact(e.struct(), 8, 2000);
            assertEquals(0, errors, "no NULL and no lost data in C");
            ExportStatistics s = e.statistics();
            assertEquals(new ExportStatistics(0, 0, 16000, 16000, 16000, 0, 0, 0, 0, 0, 0, 0), s);
            assertEquals(0, counting.liveBlocks());
            assertEquals(16000, counting.allocations());

            // hostile frees from a native thread: foreign, then double
            try (Arena arena = Arena.ofConfined()) {
                int rc = (int) freeOnThread.invokeExact(e.struct(), arena.allocate(16), 16L);
                assertEquals(0, rc);
            }
            StructCalls c = new StructCalls(e.struct());
            long p = c.malloc(16);
            c.free(p, 16);
            assertEquals(0, (int) freeOnThread.invokeExact(e.struct(), MemorySegment.ofAddress(p), 16L));
            assertEquals(1, e.statistics().foreignFrees());
            assertEquals(1, e.statistics().doubleFrees());
        }
    }

    @Test
    void exportsAreIndependent() {
        CountingAllocator other = new CountingAllocator(DataMem.builtinDefault().allocator());
        try (ExportedHandler a = PyDataMem.export(handler);
             ExportedHandler b = PyDataMem.export(DataMemHandler.of("other", other))) {
            assertNotEquals(a.address(), b.address());
            StructCalls ca = new StructCalls(a.struct());
            StructCalls cb = new StructCalls(b.struct());
            long p = ca.malloc(10);
            long q = cb.malloc(20);
            cb.free(p, 10);                          // a's block freed through b: foreign to b
            assertEquals(1, b.statistics().foreignFrees());
            assertEquals(1, a.liveBlocks(), "still a's");
            ca.free(p, 10);
            cb.free(q, 20);
            assertEquals(0, counting.liveBlocks());
            assertEquals(0, other.liveBlocks());
            assertFalse(a.toString().isEmpty());
        }
    }
}
