package io.datamem.numpy;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.datamem.DataMemHandler;
import io.datamem.MemoryTraits;
import io.datamem.testing.FuzzArena;
import java.nio.charset.StandardCharsets;

/**
 * Fuzz target for the NEP 49 handler struct import ({@link PyDataMem#importHandler}): the
 * fuzzer's bytes are a {@code PyDataMem_Handler} (name[127], version, allocator{ctx, malloc,
 * calloc, realloc, free}) at the start of a {@link FuzzArena}, {@code ctx} pointing into the
 * arena and each function NULL or a no-op the harness made. The functions are never called.
 * Only the documented {@link IllegalArgumentException} may escape; an imported handler's name
 * is the struct's name field up to its NUL.
 */
class HandlerStructFuzzTest {

    private static final long CTX = 128;

    @FuzzTest
    void importHandler(byte[] input) {
        try (FuzzArena arena = new FuzzArena(input)) {
            arena.pointer(CTX);
            for (long f = CTX + 8; f <= CTX + 32; f += 8) {
                arena.function(f);
            }
            DataMemHandler h;
            try {
                h = PyDataMem.importHandler(arena.at(0), MemoryTraits.host(16));
            } catch (IllegalArgumentException refused) {
                return;
            }
            byte[] name = h.name().getBytes(StandardCharsets.UTF_8);
            assertEquals(0, arena.memory().get(java.lang.foreign.ValueLayout.JAVA_BYTE, name.length),
                    "the name's bytes end at a NUL");
            assertEquals(1, h.version());
        }
    }
}
