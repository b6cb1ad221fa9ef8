package io.datamem.dlpack;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.datamem.array.NDArray;
import io.datamem.buffer.BufferException;
import io.datamem.testing.FuzzArena;
import java.lang.foreign.ValueLayout;

/**
 * Fuzz targets for {@link DLPack#fromDLPack}: the fuzzer's bytes are a {@code DLManagedTensor}
 * (legacy) or {@code DLManagedTensorVersioned} at the start of a {@link FuzzArena}, its
 * {@code data}, {@code shape}, {@code strides} and {@code manager_ctx} pointing into the arena
 * and its deleter NULL or a counting no-op. Only the documented refusals may escape
 * ({@link BufferException}, {@link IllegalArgumentException}); a rejected tensor's deleter is
 * not called, an imported one's exactly once when the array closes. The array's data is never
 * read (the struct may claim any extent).
 */
class DLPackImportFuzzTest {

    /** Offset of {@code dl_tensor} in the versioned struct. */
    private static final long VERSIONED_TENSOR = 32;

    @FuzzTest
    void legacy(byte[] input) {
        importOnce(input, false);
    }

    @FuzzTest
    void versioned(byte[] input) {
        importOnce(input, true);
    }

    private static void importOnce(byte[] input, boolean versioned) {
        try (FuzzArena arena = new FuzzArena(input)) {
            long t = versioned ? VERSIONED_TENSOR : 0;
            arena.pointer(t);          // data
            arena.pointer(t + 24);     // shape
            arena.pointer(t + 32);     // strides
            arena.pointer(versioned ? 8 : 48);  // manager_ctx
            arena.function(versioned ? 16 : 56); // deleter
            boolean hasDeleter = arena.memory().get(ValueLayout.JAVA_LONG, versioned ? 16 : 56) != 0;
            long before = FuzzArena.releases();
            NDArray array;
            try {
                array = DLPack.fromDLPack(arena.at(0), versioned);
            } catch (BufferException | IllegalArgumentException refused) {
                assertEquals(before, FuzzArena.releases(), "a rejected tensor's deleter was called");
                return;
            }
            array.shape();
            array.close();
            assertEquals(before + (hasDeleter ? 1 : 0), FuzzArena.releases(), "deleter calls after close");
        }
    }
}
