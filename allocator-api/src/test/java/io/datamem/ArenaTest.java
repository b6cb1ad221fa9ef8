package io.datamem;

import io.datamem.testing.CountingAllocator;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Handlers as {@link Arena}s: FFM APIs allocate through datamem. */
class ArenaTest {

    private final CountingAllocator counting = new CountingAllocator(LibcAllocator.INSTANCE);
    private final DataMemHandler h = DataMemHandler.of("arena-test", counting);

    @Test
    void anyFfmApiTakingASegmentAllocatorAllocatesThroughTheHandler() {
        try (Arena arena = h.openArena()) {
            SegmentAllocator allocator = arena;
            MemorySegment s = allocator.allocateFrom("hello");
            assertEquals("hello", s.getString(0));
            MemorySegment big = allocator.allocate(ValueLayout.JAVA_DOUBLE, 1000);
            assertEquals(8000, big.byteSize());
            assertEquals(0, big.address() % 8);
            assertEquals(2, counting.allocations());
        }
        assertEquals(0, counting.liveBytes());
    }

    @Test
    void overAlignedRequestsAreHonouredAndFreedWithTheirPaddedSize() {
        try (Arena arena = h.openArena()) {
            for (long alignment = 1; alignment <= (1 << 21); alignment <<= 1) {
                MemorySegment s = arena.allocate(10, alignment);
                assertEquals(0, s.address() % alignment, "alignment " + alignment);
                assertEquals(10, s.byteSize());
            }
            MemorySegment zero = arena.allocate(0);
            assertEquals(0, zero.byteSize());
        }
        assertEquals(0, counting.liveBlocks());
    }

    @Test
    void confinedArenasBelongToTheirThreadAndBadArgumentsAreRejected() throws Exception {
        Arena arena = DataMem.callWith(h, DataMem::openArena);
        AtomicReference<Throwable> seen = new AtomicReference<>();
        Thread t = Thread.ofPlatform().start(() -> {
            try {
                arena.allocate(8);
            } catch (Throwable e) {
                seen.set(e);
            }
        });
        t.join();
        assertInstanceOf(WrongThreadException.class, seen.get());
        assertTrue(seen.get().getMessage().contains("'arena-test'"), seen.get().getMessage());
        assertEquals(0, counting.allocations(), "refused before the allocator was called");
        assertThrows(IllegalArgumentException.class, () -> arena.allocate(-1));
        assertThrows(IllegalArgumentException.class, () -> arena.allocate(8, 3));
        assertThrows(IllegalArgumentException.class, () -> arena.allocate(8, 0));
        arena.close();
        IllegalStateException closed = assertThrows(IllegalStateException.class, () -> arena.allocate(8));
        assertTrue(closed.getMessage().contains("'arena-test'"), closed.getMessage());
        assertThrows(IllegalStateException.class, arena::close);
        assertEquals(0, counting.allocations(), "no failure path reached the allocator");
    }

    @Test
    void exhaustionIsTheJdkArenasOutOfMemoryErrorNamingTheHandlerAndTheBytes() {
        HandlerSegmentAllocatorTest.Exhausted exhausted = new HandlerSegmentAllocatorTest.Exhausted();
        DataMemHandler none = DataMemHandler.of("exhausted-arena", exhausted);
        for (Arena arena : new Arena[] {none.openArena(), none.openSharedArena()}) {
            try (arena) {
                OutOfMemoryError e = assertThrows(OutOfMemoryError.class, () -> arena.allocate(4096));
                assertTrue(e.getMessage().contains("'exhausted-arena'") && e.getMessage().contains("4096 bytes"),
                        e.getMessage());
                OutOfNativeMemoryException cause = assertInstanceOf(OutOfNativeMemoryException.class, e.getCause());
                assertEquals(4096, cause.byteSize());
                assertEquals("", cause.summary(), "allocator-api alone installs no FailureDiagnostics service");
                assertTrue(cause.snapshotFile().isEmpty());
                assertEquals("handler 'exhausted-arena' could not allocate 4096 bytes (alignment 16, calloc returned"
                        + " NULL): out of native memory", cause.getMessage());
                OutOfMemoryError padded = assertThrows(OutOfMemoryError.class, () -> arena.allocate(100, 1 << 12));
                assertEquals(100 + (1 << 12) - 1, ((AllocationException) padded.getCause()).byteSize(),
                        "the cause names the padded request the allocator saw");
                assertEquals(1 << 12, ((AllocationException) padded.getCause()).byteAlignment());
            }
        }
        assertEquals(4, exhausted.calls);
        try (Arena arena = h.openArena()) {
            OutOfMemoryError huge = assertThrows(OutOfMemoryError.class, () -> arena.allocate(Long.MAX_VALUE));
            assertTrue(huge.getMessage().contains("'arena-test'"), huge.getMessage());
            assertEquals(0, counting.allocations(), "a size past the address space never reaches the allocator");
        }
    }

    @Test
    void sharedArenasAcceptAllocationsFromAnyThread() throws Exception {
        try (Arena arena = h.openSharedArena()) {
            Thread[] threads = new Thread[4];
            for (int i = 0; i < threads.length; i++) {
                threads[i] = Thread.ofPlatform().start(() -> {
                    for (int k = 0; k < 500; k++) {
                        arena.allocate(64, 64).set(ValueLayout.JAVA_LONG, 0, k);
                    }
                });
            }
            for (Thread t : threads) {
                t.join();
            }
            assertEquals(2000, counting.liveBlocks());
        }
        assertEquals(0, counting.liveBlocks());
    }

    /** allocate racing close: every block is either refused or freed by the close, never lost. */
    @Test
    void allocationsRacingACloseAreEitherRefusedOrFreedByIt() throws Exception {
        for (int round = 0; round < 500; round++) {
            Arena arena = h.openSharedArena();
            java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
            Thread[] allocators = new Thread[2];
            java.util.concurrent.atomic.AtomicLong handedOut = new java.util.concurrent.atomic.AtomicLong();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            for (int i = 0; i < allocators.length; i++) {
                allocators[i] = Thread.ofPlatform().start(() -> {
                    try {
                        go.await();
                        for (int k = 0; k < 10_000; k++) {
                            arena.allocate(32, k % 2 == 0 ? 8 : 256);   // with and without padding
                            handedOut.incrementAndGet();
                        }
                    } catch (IllegalStateException closed) {
                        if (!closed.getMessage().contains("closed")) {
                            failure.set(closed);
                        }
                    } catch (Throwable t) {
                        failure.set(t);
                    }
                });
            }
            go.countDown();
            long wanted = 50 + round % 50;       // close while both threads are allocating
            while (handedOut.get() < wanted && allocators[0].isAlive() && allocators[1].isAlive()) {
                Thread.onSpinWait();
            }
            arena.close();
            for (Thread t : allocators) {
                t.join();
            }
            assertEquals(null, failure.get());
            assertEquals(0, counting.liveBlocks(), "round " + round + ": " + handedOut.get() + " handed out");
        }
    }
}
