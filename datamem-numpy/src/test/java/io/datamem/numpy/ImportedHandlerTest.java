package io.datamem.numpy;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.MemoryTraits;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.testing.CountingAllocator;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Arrays;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A native {@code PyDataMem_Handler} imported as a datamem handler: NEP 49's own sample
 * ({@code shift_alloc}, compiled from C at test time) under {@link NDArray}s, and hostile structs,
 * each refused with an {@link IllegalArgumentException} that says what is wrong.
 */
class ImportedHandlerTest {

    @TempDir
    static Path dir;

    private static ShiftAlloc sample;

    @BeforeAll
    static void compile() {
        sample = ShiftAlloc.compile(dir);
    }

    @Test
    void nep49SampleHandlerServesArrays() {
        sample.reset();
        DataMemHandler shift = PyDataMem.importHandler(sample.handlerStruct());
        assertEquals("secret_data_allocator", shift.name());
        assertEquals(1, shift.version());
        assertEquals(MemoryTraits.host(16), shift.traits());
        assertTrue(shift.allocator().toString().contains("secret_data_allocator"));

        NDArray a = DataMem.callWith(shift, () -> NDArray.zeros(DType.FLOAT64, 100, 10));
        assertSame(shift, a.handler());
        assertEquals(1, sample.liveBlocks());
        assertEquals(8000, sample.liveBytes(), "C recorded the array's size in its header");
        String header = MemorySegment.ofAddress(a.address() - 64).reinterpret(64).getString(0);
        assertEquals("originally allocated 8000 via zero", header);
        a.setDouble(4.5, 99, 9);
        a.resize(200, 10);                       // realloc in C
        assertEquals(4.5, a.getDouble(99, 9));
        assertEquals(16000, sample.liveBytes());
        NDArray b = DataMem.callWith(shift, () -> NDArray.empty(DType.INT32, 7));
        assertEquals(2, sample.liveBlocks());
        a.close();
        b.close();
        assertEquals(0, sample.liveBlocks());
        assertEquals(0, sample.violations(), sample::lastViolation);
    }

    @Test
    void declaredTraitsAreReported() {
        MemoryTraits t = MemoryTraits.host(64);
        assertEquals(t, PyDataMem.importHandler(sample.handlerStruct(), t).traits());
    }

    @Test
    void theStructIsReadOnceWhenImported() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment copy = arena.allocate(PyDataMem.HANDLER_LAYOUT);
            copy.copyFrom(sample.handlerStruct().reinterpret(168));
            DataMemHandler h = PyDataMem.importHandler(copy);
            copy.fill((byte) 0);                  // C may change or free its struct afterwards
            sample.reset();
            MemorySegment p = h.allocator().malloc(10);
            h.allocator().free(p, 10);
            assertEquals("secret_data_allocator", h.name());
            assertEquals(0, sample.violations());
        }
    }

    @Test
    void aJavaHandlerExportedAndImportedBackCallsItselfThroughC() {
        CountingAllocator counting = new CountingAllocator(DataMem.builtinDefault().allocator());
        try (ExportedHandler e = PyDataMem.export(DataMemHandler.of("round-trip", counting))) {
            DataMemHandler back = PyDataMem.importHandler(e.struct());
            assertEquals("round-trip", back.name());
            try (NDArray a = DataMem.callWith(back, () -> NDArray.zeros(DType.INT64, 1000))) {
                a.resize(3000);
                assertEquals(1, e.liveBlocks());
                assertEquals(24000, e.liveBytes());
                assertEquals(24000, counting.liveBytes());
            }
            assertEquals(0, counting.liveBlocks());
            assertEquals(0, e.statistics().sizeMismatches());
        }
    }

    // ---------------------------------------------------------------------------------------------
    // hostile structs

    /** A valid struct (a copy of the sample's), for the tests to spoil. */
    private static MemorySegment validCopy(Arena arena) {
        MemorySegment s = arena.allocate(PyDataMem.HANDLER_LAYOUT);
        s.copyFrom(sample.handlerStruct().reinterpret(PyDataMem.HANDLER_LAYOUT.byteSize()));
        return s;
    }

    private static long offset(String field) {
        return PyDataMem.HANDLER_LAYOUT.byteOffset(PathElement.groupElement("allocator"),
                PathElement.groupElement(field));
    }

    private static String refused(MemorySegment struct) {
        return assertThrows(IllegalArgumentException.class, () -> PyDataMem.importHandler(struct)).getMessage();
    }

    @Test
    void aNullOrHeapStructIsRefused() {
        assertTrue(refused(MemorySegment.NULL).contains("NULL"));
        assertTrue(refused(MemorySegment.ofArray(new byte[168])).contains("native"));
        assertThrows(NullPointerException.class, () -> PyDataMem.importHandler(null));
        try (Arena arena = Arena.ofConfined()) {
            assertThrows(NullPointerException.class, () -> PyDataMem.importHandler(validCopy(arena), null));
        }
    }

    @Test
    void nullFunctionPointersAreRefusedByName() {
        try (Arena arena = Arena.ofConfined()) {
            for (String f : new String[] {"malloc", "calloc", "realloc", "free"}) {
                MemorySegment s = validCopy(arena);
                s.set(ADDRESS, offset(f), MemorySegment.NULL);
                String m = refused(s);
                assertTrue(m.contains("allocator." + f + " is NULL") && m.contains("secret_data_allocator"), m);
            }
            MemorySegment none = validCopy(arena);
            for (String f : new String[] {"malloc", "calloc", "realloc", "free"}) {
                none.set(ADDRESS, offset(f), MemorySegment.NULL);
            }
            String m = refused(none);
            assertTrue(m.contains("allocator.malloc, allocator.calloc, allocator.realloc, allocator.free are NULL"), m);
            MemorySegment nullCtx = validCopy(arena);
            nullCtx.set(ADDRESS, offset("ctx"), MemorySegment.NULL);
            assertEquals("secret_data_allocator", PyDataMem.importHandler(nullCtx).name(),
                    "ctx is the handler's own business: NULL is allowed");
        }
    }

    @Test
    void versionsOtherThanOneAreRefused() {
        try (Arena arena = Arena.ofConfined()) {
            for (int v : new int[] {0, 2, 255}) {
                MemorySegment s = validCopy(arena);
                s.set(JAVA_BYTE, 127, (byte) v);
                String m = refused(s);
                assertTrue(m.contains("version " + v + " (expected: 1"), m);
            }
        }
    }

    @Test
    void namesWithoutNulEmptyOrNotUtf8AreRefused() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment unterminated = validCopy(arena);
            unterminated.asSlice(0, 127).fill((byte) 'x');
            String m = refused(unterminated);
            assertTrue(m.contains("not NUL-terminated within its 127 bytes"), m);

            MemorySegment empty = validCopy(arena);
            empty.asSlice(0, 127).fill((byte) 0);
            assertTrue(refused(empty).contains("name is empty"));

            MemorySegment latin1 = validCopy(arena);
            latin1.asSlice(0, 127).fill((byte) 0);
            latin1.set(JAVA_BYTE, 0, (byte) 'a');
            latin1.set(JAVA_BYTE, 1, (byte) 0xE9);       // é in Latin-1: not UTF-8
            assertTrue(refused(latin1).contains("not valid UTF-8"));

            MemorySegment blank = validCopy(arena);
            blank.asSlice(0, 127).fill((byte) 0);
            blank.asSlice(0, 3).fill((byte) ' ');
            assertTrue(refused(blank).contains("not blank"));

            MemorySegment longest = validCopy(arena);
            byte[] name = new byte[127];
            Arrays.fill(name, 0, 126, (byte) 'n');
            MemorySegment.copy(name, 0, longest, JAVA_BYTE, 0, 127);
            assertEquals("n".repeat(126), PyDataMem.importHandler(longest).name(), "126 bytes and a NUL fit");
        }
    }
}
