package io.datamem.cuda.internal;

import io.datamem.impl.os.LiveBlocks;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Free checks of the CUDA allocators (the shared {@link LiveBlocks} with its plain wording), without a GPU. */
class LiveBlocksTest {

    @Test
    void wrongSizesDoubleFreesAndForeignPointersAreRefusedAndChangeNothing() {
        LiveBlocks<Long> live = LiveBlocks.sizes("cuda:device=0");
        live.add(0x1000, 100L);
        live.add(0x2000, 0L);
        assertEquals(2, live.count());
        assertEquals(100, live.sizeOf(0x1000));
        String wrong = assertThrows(IllegalArgumentException.class, () -> live.remove(0x1000, 99, "free"))
                .getMessage();
        assertEquals("cuda:device=0: free(0x1000, 99): the block was allocated with 100 bytes (expected: that size)",
                wrong);
        assertThrows(IllegalArgumentException.class, () -> live.check(0x1000, 101, "realloc"));
        String foreign = assertThrows(IllegalArgumentException.class, () -> live.remove(0x3000, 8, "free"))
                .getMessage();
        assertTrue(foreign.contains("not a live block of this allocator"), foreign);
        assertEquals(2, live.count(), "refusals change nothing");
        live.check(0x1000, 100, "realloc");
        live.remove(0x1000, 100, "free");
        String twice = assertThrows(IllegalArgumentException.class, () -> live.remove(0x1000, 100, "free"))
                .getMessage();
        assertTrue(twice.contains("a double free or a foreign pointer"), twice);
        live.remove(0x2000, 0, "free");
        assertEquals(0, live.count());
        assertEquals(-1, live.sizeOf(0x2000));
    }
}
