package io.datamem.internal;

import io.datamem.testing.Rounds;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ExportSlotsTest {

    @Test
    void aTokenReleasesOnceAndAStaleOrForgedOneNothing() {
        ExportSlots slots = new ExportSlots(32, 2, 2);
        Object holder = new Object();
        long token = slots.acquire(holder);
        assertNotEquals(-1, token);
        assertEquals(1, slots.live());
        assertSame(holder, slots.peek(token));
        assertNull(slots.release(token + (2L << 32)), "another generation");
        assertNull(slots.release(token ^ (1L << 32)), "an even generation");
        assertNull(slots.release((token & 0xFFFF_FFFF_0000_0000L) | 1000), "an index out of range");
        assertNull(slots.release(-1), "a negative index");
        assertSame(holder, slots.release(token));
        assertNull(slots.release(token), "a second release");
        assertNull(slots.peek(token));
        assertEquals(0, slots.live());
        long again = slots.acquire(holder);
        assertEquals((int) token, (int) again, "the slot is reused");
        assertNull(slots.release(token), "the first token stays stale once its slot is reused");
        assertSame(holder, slots.release(again));
    }

    @Test
    void blocksAreFoundByAddressOnly() {
        ExportSlots slots = new ExportSlots(64, 2, 3);
        List<Long> tokens = new ArrayList<>();
        Set<Long> addresses = new HashSet<>();
        for (int i = 0; i < 12; i++) {
            long t = slots.acquire(i);
            tokens.add(t);
            long a = slots.address(t);
            assertTrue(addresses.add(a), "distinct blocks");
            assertEquals(t, slots.tokenAt(a));
            assertEquals(-1, slots.tokenAt(a + 8), "inside a block");
        }
        assertEquals(-1, slots.acquire("full"), "every slot of every slab is taken");
        assertEquals(-1, slots.tokenAt(0));
        assertEquals(-1, slots.tokenAt(12345));
        long first = slots.address(tokens.get(0));
        assertEquals(0, slots.release(tokens.get(0)));
        assertEquals(-1, slots.tokenAt(first), "a released block is not live");
        for (int i = 1; i < 12; i++) {
            assertEquals(i, slots.release(tokens.get(i)));
        }
        assertEquals(0, slots.live());
        assertEquals(12, slots.capacity());
    }

    @Test
    void releaseIsExactlyOnceUnderRaces() throws Exception {
        ExportSlots slots = new ExportSlots(16, 4, 64);
        int threads = 4;
        int rounds = 5000;
        AtomicInteger won = new AtomicInteger();
        long[] shared = new long[1];
        List<Throwable> failures = Rounds.run(threads, rounds, () -> shared[0] = slots.acquire(new Object()), null,
                t -> {
                    long token = shared[0];
                    if (slots.release(token) != null) {
                        won.incrementAndGet();
                    }
                    // other slots taken and given back meanwhile, by every thread
                    long mine = slots.acquire(Boolean.TRUE);
                    assertSame(Boolean.TRUE, slots.release(mine));
                });
        assertTrue(failures.isEmpty(), failures::toString);
        assertEquals(rounds, won.get(), "each token released by exactly one thread");
        assertEquals(0, slots.live(), "nothing leaked");
    }
}
