package io.datamem.jna;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import io.datamem.MemoryKind;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Memory JNA allocated brought into datamem: a {@code Memory} and a native library's buffer
 * ({@code native/jna_probe.c}) become arrays over the same address, freed through their owner
 * exactly once when the array closes.
 */
class JnaArraysTest {

    private static JnaProbe probe;

    @BeforeAll
    static void compileTheProbe(@TempDir Path dir) {
        probe = JnaProbe.load(dir);
    }

    @Test
    void aJnaMemoryBecomesAnArrayThatClosesIt() {
        Memory memory = new Memory(10 * 8);
        for (int i = 0; i < 10; i++) {
            memory.setDouble(8L * i, i * 0.5);
        }
        NDArray x = JnaArrays.adopt(memory, DType.FLOAT64, 2, 5);
        assertEquals(Pointer.nativeValue(memory), x.address(), "no copy");
        assertEquals(JnaArrays.HANDLER_NAME, x.handler().name());
        assertEquals(MemoryKind.HOST, x.traits().kind());
        assertTrue(x.ownsData());
        assertEquals(3.5, x.getDouble(1, 2));
        x.setDouble(-1.0, 0, 0);
        assertEquals(-1.0, memory.getDouble(0), "one memory, seen from both sides");
        UnsupportedOperationException resize = assertThrows(UnsupportedOperationException.class, () -> x.resize(20));
        assertTrue(resize.getMessage().contains(JnaArrays.HANDLER_NAME), resize.getMessage());
        x.close();
        assertFalse(memory.valid(), "closing the array closed the Memory");
        x.close();   // idempotent
        assertThrows(IllegalStateException.class, () -> JnaArrays.adopt(memory, DType.INT8, 1),
                "a closed Memory is refused");
    }

    @Test
    void aLibrarysBufferIsFreedThroughItsFreeFunctionOnce() {
        int before = probe.jna_probe_buffers_freed();
        Pointer buffer = probe.jna_probe_buffer_new(6);
        AtomicInteger calls = new AtomicInteger();
        NDArray squares = JnaArrays.adopt(buffer, 6 * 8, p -> {
            calls.incrementAndGet();
            probe.jna_probe_buffer_free(p);
        }, DType.INT64, 6);
        assertEquals(Pointer.nativeValue(buffer), squares.address());
        assertArrayEquals(new long[] {0, 1, 4, 9, 16, 25}, squares.toLongArray());
        try (JnaPointer back = JnaPointer.of(squares)) {   // and back to C, still the same memory
            assertEquals(Pointer.nativeValue(buffer), probe.jna_probe_address_of(back.pointer()));
        }
        squares.close();
        squares.close();
        assertEquals(1, calls.get(), "freed once");
        assertEquals(before + 1, probe.jna_probe_buffers_freed());
    }

    @Test
    void aRefusedImportLeavesTheMemoryWithTheCaller() {
        Memory memory = new Memory(16);
        IllegalArgumentException tooLarge = assertThrows(IllegalArgumentException.class,
                () -> JnaArrays.adopt(memory, DType.FLOAT64, 3));
        assertTrue(tooLarge.getMessage().contains("16"), tooLarge.getMessage());
        assertTrue(memory.valid(), "not freed: the caller still owns it");
        memory.close();

        AtomicInteger frees = new AtomicInteger();
        assertThrows(NullPointerException.class,   // JNA's Pointer.NULL is null
                () -> JnaArrays.adopt(Pointer.NULL, 8, p -> frees.incrementAndGet(), DType.INT8, 8));
        assertThrows(IllegalArgumentException.class,
                () -> JnaArrays.adopt(new Pointer(0), 8, p -> frees.incrementAndGet(), DType.INT8, 8));
        assertThrows(IllegalArgumentException.class,
                () -> JnaArrays.adopt(new Pointer(4096), -1, p -> frees.incrementAndGet(), DType.INT8, 0));
        assertEquals(0, frees.get());
    }
}
