package io.datamem.spi;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.MemoryTraits;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The allocator of imported memory: it allocates nothing and releases once, from any thread. */
class ReleasingAllocatorTest {

    private static final MemoryTraits TRAITS = DataMem.builtinDefault().traits();

    @Test
    void itRefusesToAllocateAndBuildsItsMessageOnlyThen() {
        AtomicInteger described = new AtomicInteger();
        ReleasingAllocator a = ReleasingAllocator.of("imported", () -> {
            described.incrementAndGet();
            return "the test's block";
        }, TRAITS, () -> { });
        assertEquals(0, described.get(), "no message is built before a refusal");
        assertEquals("handler 'imported' cannot allocate: it only releases the test's block",
                assertThrows(UnsupportedOperationException.class, () -> a.malloc(8)).getMessage());
        assertThrows(UnsupportedOperationException.class, () -> a.calloc(1, 8));
        assertTrue(assertThrows(UnsupportedOperationException.class, () -> a.realloc(MemorySegment.NULL, 0, 8))
                .getMessage().contains("cannot reallocate"));
        assertEquals(3, described.get());
        assertSame(TRAITS, a.traits());
        assertThrows(NullPointerException.class, () -> ReleasingAllocator.of(null, () -> "", TRAITS, () -> { }));
        assertThrows(NullPointerException.class, () -> ReleasingAllocator.of("x", null, TRAITS, () -> { }));
        assertThrows(NullPointerException.class, () -> ReleasingAllocator.of("x", () -> "", null, () -> { }));
        assertThrows(NullPointerException.class, () -> ReleasingAllocator.of("x", () -> "", TRAITS, null));
    }

    @Test
    void racingFreesReleaseExactlyOnce() throws Exception {
        for (int round = 0; round < 2000; round++) {
            AtomicInteger releases = new AtomicInteger();
            ReleasingAllocator a = ReleasingAllocator.of("imported", () -> "a block", TRAITS, releases::incrementAndGet);
            CyclicBarrier start = new CyclicBarrier(2);
            Thread other = Thread.ofPlatform().start(() -> {
                try {
                    start.await();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                a.free(MemorySegment.NULL, 0);
            });
            start.await();
            a.free(MemorySegment.NULL, 0);
            other.join();
            assertEquals(1, releases.get(), "round " + round);
            assertTrue(a.isReleased());
        }
    }

    @Test
    void anArrayOverItReleasesOnCloseAndAFailingReleaseStillCountsAsReleased() {
        AtomicInteger releases = new AtomicInteger();
        try (NDArray owner = NDArray.zeros(DType.FLOAT64, 4)) {
            ReleasingAllocator a = ReleasingAllocator.of("imported", () -> "a view", TRAITS, releases::incrementAndGet);
            NDArray imported = NDArray.adopt(new DataMemHandler("imported", 1, a),
                    MemorySegment.ofAddress(owner.address()), 32, DType.FLOAT64, new long[] {4}, null, 0);
            assertFalse(a.isReleased());
            imported.close();
            assertEquals(1, releases.get());
        }
        ReleasingAllocator failing = ReleasingAllocator.of("imported", () -> "a block", TRAITS, () -> {
            throw new IllegalStateException("the owner refused");
        });
        assertEquals("the owner refused", assertThrows(IllegalStateException.class,
                () -> failing.free(MemorySegment.NULL, 0)).getMessage());
        assertTrue(failing.isReleased());
        failing.free(MemorySegment.NULL, 0);                // once: the action does not run again
    }
}
