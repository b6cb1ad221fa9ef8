package org.example.scratchdev;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.OptionalLong;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Caller mistakes the scratch device's block table turns into clear {@link IllegalArgumentException}s
 * instead of heap corruption: wrong sizes, double frees, foreign pointers, copies out of bounds,
 * streams the device does not have. Each refused call changes nothing.
 */
class ScratchMistakesTest {

    private static final ScratchDevice DEVICE = ScratchDevice.of(0);

    private final ScratchAllocator a = DEVICE.allocator("scratchdev");
    private long blocksBefore;

    @BeforeEach
    void count() {
        blocksBefore = DEVICE.liveBlocks();
    }

    @AfterEach
    void nothingLeaked() {
        assertEquals(blocksBefore, DEVICE.liveBlocks(), "every block of the test was freed once");
    }

    private static void assertMessage(IllegalArgumentException e, String... parts) {
        for (String part : parts) {
            assertTrue(e.getMessage().contains(part), "'" + part + "' in: " + e.getMessage());
        }
    }

    @Test
    void aFreeWithTheWrongSizeIsRefusedAndTheBlockStaysLive() {
        MemorySegment p = a.malloc(128);
        ScratchTests.write(DEVICE, p, 0, new byte[] {1, 2, 3});
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> a.free(p, 64));
        assertMessage(e, "handler 'scratchdev'", "free(0x" + Long.toHexString(p.address()) + ", 64)", "128 bytes",
                "not 64");
        e = assertThrows(IllegalArgumentException.class, () -> a.realloc(p, 100, 200));
        assertMessage(e, "realloc(", "128 bytes", "not 100");
        assertArrayEquals(new byte[] {1, 2, 3}, ScratchTests.read(DEVICE, p, 0, 3), "the block is untouched");
        a.free(p, 128);
    }

    @Test
    void aSecondFreeIsRefusedAndFreesNothing() {
        MemorySegment p = a.malloc(32);
        a.free(p, 32);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> a.free(p, 32));
        assertMessage(e, "is not a live block of scratchdev:0", "freed already");
        assertThrows(IllegalArgumentException.class, () -> a.realloc(p, 32, 64), "nor resized once freed");
        assertThrows(IllegalArgumentException.class, () -> ScratchTests.read(DEVICE, p, 0, 1),
                "nor read once freed");
    }

    @Test
    void foreignPointersAreRefused() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment host = arena.allocate(64);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> a.free(host, 64));
            assertMessage(e, "is not a live block of scratchdev:0", "never allocated on this device");
        }
        ScratchAllocator other = ScratchDevice.of(1).allocator("scratchdev:1");
        MemorySegment q = other.malloc(64);
        try {
            assertThrows(IllegalArgumentException.class, () -> a.free(q, 64), "another device's block");
            assertThrows(IllegalArgumentException.class, () -> DEVICE.copyToHost(q, 0, MemorySegment.ofArray(
                    new byte[8]), 8), "another device's block is not this device's memory");
        } finally {
            other.free(q, 64);
        }
        MemorySegment p = a.malloc(64);
        assertThrows(IllegalArgumentException.class, () -> a.free(MemorySegment.ofAddress(p.address() + 16), 48),
                "a pointer inside a block is not a block");
        DEVICE.allocator("another handler").free(p, 64);   // any allocator of the device may free it
    }

    @Test
    void sizesAndNullAreCheckedBeforeAnything() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> a.malloc(-7));
        assertMessage(e, "handler 'scratchdev'", "malloc(-7)", "byteSize -7");
        e = assertThrows(IllegalArgumentException.class, () -> a.calloc(3, -2));
        assertMessage(e, "calloc(3, -2)", "elementByteSize -2");
        e = assertThrows(IllegalArgumentException.class, () -> a.realloc(MemorySegment.NULL, 8, 16));
        assertMessage(e, "oldByteSize 8 for NULL");
        assertThrows(IllegalArgumentException.class, () -> a.free(MemorySegment.NULL, -1));
        a.free(MemorySegment.NULL, 0);
    }

    @Test
    void copiesStayInsideOneLiveBlock() {
        MemorySegment p = a.malloc(100);
        MemorySegment q = a.malloc(100);
        try {
            byte[] in = new byte[100];
            for (int i = 0; i < in.length; i++) {
                in[i] = (byte) i;
            }
            ScratchTests.write(DEVICE, p, 0, in);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> ScratchTests.read(DEVICE, p, 50, 51));
            assertMessage(e, "copyToHost of bytes", "is not inside a live block of scratchdev:0",
                    "0x" + Long.toHexString(p.address()) + " of 100 bytes");
            assertThrows(IllegalArgumentException.class, () -> ScratchTests.write(DEVICE, p, 99, new byte[2]));
            assertThrows(IllegalArgumentException.class, () -> ScratchTests.read(DEVICE, p, -1, 1));
            assertThrows(IllegalArgumentException.class, () -> DEVICE.copyToHost(p, 0, MemorySegment.ofArray(
                    new byte[10]), 20), "the host target is too small");
            assertThrows(IllegalArgumentException.class, () -> DEVICE.copyWithinDevice(p, 0, q, 1, 100));
            assertThrows(IllegalArgumentException.class,
                    () -> DEVICE.copyToHost(MemorySegment.ofAddress(p.address() + 40), 0,
                            MemorySegment.ofArray(new byte[61]), 61), "a pointer inside a block, past its end");
            DEVICE.interchange().copyWithinDevice(p, 10, q, 0, 90);
            byte[] out = ScratchTests.read(DEVICE, MemorySegment.ofAddress(q.address() + 5), 0, 10);
            assertArrayEquals(new byte[] {15, 16, 17, 18, 19, 20, 21, 22, 23, 24}, out,
                    "a pointer inside a block is fine within its bounds");
            assertArrayEquals(new byte[0], ScratchTests.read(DEVICE, p, 100, 0), "an empty range at the end");
        } finally {
            a.free(p, 100);
            a.free(q, 100);
        }
    }

    @Test
    void streamsArePositiveOrNone() {
        MemorySegment p = a.malloc(8);
        try {
            ScratchInterchange hook = DEVICE.interchange();
            int before = hook.synchronizations().size();
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> hook.synchronize(p, OptionalLong.of(0)));
            assertMessage(e, "stream: 0", "scratchdev:0");
            assertThrows(IllegalArgumentException.class, () -> hook.synchronize(p, OptionalLong.of(-5)));
            hook.synchronize(p, OptionalLong.of(3));
            hook.synchronize(p, OptionalLong.empty());
            assertEquals(java.util.List.of(OptionalLong.of(3), OptionalLong.empty()),
                    hook.synchronizations().subList(before, before + 2));
        } finally {
            a.free(p, 8);
        }
    }

    @Test
    void exhaustionLeavesTheBlockToTheCaller() {
        MemorySegment p = a.calloc(16, 4);
        assertArrayEquals(new byte[64], ScratchTests.read(DEVICE, p, 0, 64));
        assertEquals(0, a.realloc(p, 64, 1L << 50).address());
        assertEquals(0, a.malloc(1L << 50).address());
        MemorySegment q = a.realloc(p, 64, 32);
        assertArrayEquals(new byte[32], ScratchTests.read(DEVICE, q, 0, 32));
        a.free(q, 32);
    }
}
