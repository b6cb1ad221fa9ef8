package io.datamem.arrow;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.datamem.array.NDArray;
import io.datamem.buffer.BufferException;
import io.datamem.testing.FuzzArena;
import java.lang.foreign.MemorySegment;

/**
 * Fuzz targets for the Arrow C Data and C Device Data imports
 * ({@link ArrowCData#importArray}, {@link ArrowCData#importDeviceArray}). The fuzzer's bytes fill
 * a {@link FuzzArena} holding, at fixed offsets, an {@code ArrowSchema} (0), an
 * {@code ArrowArray} or {@code ArrowDeviceArray} (128), a child schema (256) and a child array
 * (384); the harness points every pointer into the arena: {@code children} at one-entry tables
 * naming the child structs, {@code buffers} at two-entry tables whose entries point anywhere in
 * the arena, strings anywhere (they end in the arena's zero tail), release callbacks at a
 * counting no-op, and {@code metadata} at a blob in the specification's binary format rebuilt
 * from the fuzzer's bytes at 1024 (so the lengths it states stay inside the arena). A bool
 * array's bitmap is read by the import: its offset and length are cut to the arena's bits. Only
 * the documented refusals ({@link BufferException}, {@link IllegalArgumentException}) may
 * escape; an imported array closes.
 */
class ArrowImportFuzzTest {

    private static final long SCHEMA = 0;
    private static final long ARRAY = 128;
    private static final long CHILD_SCHEMA = 256;
    private static final long CHILD_ARRAY = 384;
    private static final long SCHEMA_CHILDREN = 512;
    private static final long ARRAY_CHILDREN = 520;
    private static final long BUFFERS = 528;
    private static final long CHILD_BUFFERS = 544;
    private static final long METADATA = 1024;

    @FuzzTest
    void importArray(byte[] input) {
        run(input, false);
    }

    @FuzzTest
    void importDeviceArray(byte[] input) {
        run(input, true);
    }

    private static void run(byte[] input, boolean device) {
        try (FuzzArena arena = new FuzzArena(input)) {
            schema(arena, SCHEMA, SCHEMA_CHILDREN, CHILD_SCHEMA);
            schema(arena, CHILD_SCHEMA, -1, -1);
            array(arena, ARRAY, ARRAY_CHILDREN, CHILD_ARRAY, BUFFERS);
            array(arena, CHILD_ARRAY, -1, -1, CHILD_BUFFERS);
            NDArray imported;
            try {
                imported = device ? ArrowCData.importDeviceArray(arena.at(SCHEMA), arena.at(ARRAY))
                        : ArrowCData.importArray(arena.at(SCHEMA), arena.at(ARRAY));
            } catch (BufferException | IllegalArgumentException refused) {
                return;
            }
            imported.shape();
            imported.close();
        }
    }

    private static void schema(FuzzArena arena, long at, long childrenTable, long child) {
        MemorySegment m = arena.memory();
        long format = arena.pointer(at);
        arena.pointer(at + 8);                            // name
        if (m.get(JAVA_LONG, at + 16) != 0) {             // metadata
            m.set(JAVA_LONG, at + 16, m.address() + METADATA);
            metadata(m);
        }
        table(arena, at + 40, childrenTable, child);      // children
        arena.pointer(at + 48);                           // dictionary
        arena.function(at + 56);                          // release
        arena.pointer(at + 64);                           // private_data
        if (at == SCHEMA && format >= 0 && m.get(JAVA_BYTE, format) == 'b' && m.get(JAVA_BYTE, format + 1) == 0) {
            long bits = 8L * (FuzzArena.SPAN / 2);
            m.set(JAVA_LONG, ARRAY, Long.remainderUnsigned(m.get(JAVA_LONG, ARRAY), bits));
            m.set(JAVA_LONG, ARRAY + 16, Long.remainderUnsigned(m.get(JAVA_LONG, ARRAY + 16), bits));
        }
    }

    private static void array(FuzzArena arena, long at, long childrenTable, long child, long buffers) {
        MemorySegment m = arena.memory();
        if (m.get(JAVA_LONG, at + 40) != 0) {             // buffers: a two-entry table
            m.set(JAVA_LONG, at + 40, m.address() + buffers);
            arena.pointer(buffers);
            arena.pointer(buffers + 8);
        }
        table(arena, at + 48, childrenTable, child);      // children
        arena.pointer(at + 56);                           // dictionary
        arena.function(at + 64);                          // release
        arena.pointer(at + 72);                           // private_data
    }

    /** A children field: NULL, or a one-entry table at {@code table} whose entry is NULL or {@code child}. */
    private static void table(FuzzArena arena, long field, long table, long child) {
        MemorySegment m = arena.memory();
        if (m.get(JAVA_LONG, field) == 0) {
            return;
        }
        if (table < 0) {
            m.set(JAVA_LONG, field, 0);
            return;
        }
        m.set(JAVA_LONG, field, m.address() + table);
        if (m.get(JAVA_LONG, table) != 0) {
            m.set(JAVA_LONG, table, m.address() + child);
        }
    }

    /** Rewrites the bytes at {@link #METADATA} as a well-formed blob: n (0..3) pairs of lengths 0..255. */
    private static void metadata(MemorySegment m) {
        int n = Byte.toUnsignedInt(m.get(JAVA_BYTE, METADATA)) % 4;
        m.set(JAVA_INT_UNALIGNED, METADATA, n);
        long at = METADATA + 4;
        for (int i = 0; i < 2 * n; i++) {
            int len = Byte.toUnsignedInt(m.get(JAVA_BYTE, at));
            m.set(JAVA_INT_UNALIGNED, at, len);
            at += 4 + len;
        }
    }
}
