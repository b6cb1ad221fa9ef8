package io.datamem;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The handler record's validation: precise messages for every violation. */
class DataMemHandlerTest {

    private static final DataMemAllocator A = LibcAllocator.INSTANCE;

    @Test
    void acceptsTheLongestName() {
        String name = "n".repeat(127);
        assertEquals(name, new DataMemHandler(name, 1, A).name());
        assertEquals(1, DataMemHandler.of("x", A).version());
    }

    @Test
    void rejectsNamesLongerThan127Utf8Bytes() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new DataMemHandler("n".repeat(128), 1, A));
        assertEquals("name: '" + "n".repeat(128) + "' is 128 UTF-8 bytes (expected: at most 127)", e.getMessage());
        // 64 characters, 128 bytes in UTF-8
        String twoByte = "é".repeat(64);
        e = assertThrows(IllegalArgumentException.class, () -> new DataMemHandler(twoByte, 1, A));
        assertEquals("name: '" + twoByte + "' is 128 UTF-8 bytes (expected: at most 127)", e.getMessage());
    }

    @Test
    void rejectsBlankNullAndNulNames() {
        assertEquals("name: '' (expected: not blank)",
                assertThrows(IllegalArgumentException.class, () -> new DataMemHandler("", 1, A)).getMessage());
        assertEquals("name: '  ' (expected: not blank)",
                assertThrows(IllegalArgumentException.class, () -> new DataMemHandler("  ", 1, A)).getMessage());
        assertEquals("name", assertThrows(NullPointerException.class, () -> new DataMemHandler(null, 1, A))
                .getMessage());
        assertEquals("name: 'a\\0b' (expected: no NUL character)",
                assertThrows(IllegalArgumentException.class, () -> new DataMemHandler("a\0b", 1, A)).getMessage());
    }

    @Test
    void rejectsVersionsBelowOneAndNullAllocators() {
        assertEquals("version: 0 (expected: >= 1)",
                assertThrows(IllegalArgumentException.class, () -> new DataMemHandler("x", 0, A)).getMessage());
        assertEquals("version: -3 (expected: >= 1)",
                assertThrows(IllegalArgumentException.class, () -> new DataMemHandler("x", -3, A)).getMessage());
        assertEquals("allocator", assertThrows(NullPointerException.class, () -> new DataMemHandler("x", 1, null))
                .getMessage());
    }

    @Test
    void traitsValidateTheirComponents() {
        assertEquals("byteAlignment: 3 (expected: a power of two)", assertThrows(IllegalArgumentException.class,
                () -> MemoryTraits.host(3)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> new MemoryTraits(MemoryKind.DEVICE,
                new Device(DeviceType.CUDA, 0), true, 256, 4096));
        assertThrows(IllegalArgumentException.class, () -> new Device(DeviceType.CUDA, -1));
        assertEquals(DeviceType.ONE_API, DeviceType.ofCode(14));
        assertThrows(IllegalArgumentException.class, () -> DeviceType.ofCode(5));
    }
}
