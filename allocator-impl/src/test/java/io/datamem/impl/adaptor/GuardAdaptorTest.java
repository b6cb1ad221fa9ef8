package io.datamem.impl.adaptor;

import io.datamem.impl.internal.adaptor.GuardAdaptorImpl;
import io.datamem.impl.internal.adaptor.StatisticsAdaptorImpl;
import io.datamem.DataMemHandler;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.impl.Rss;
import io.datamem.impl.internal.cpu.AlignedAllocator;
import io.datamem.internal.Libc;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every violation the guard catches, committed on purpose, and what its report says. */
class GuardAdaptorTest {

    private final StatisticsAdaptorImpl upstream = StatisticsAdaptorImpl.of(AlignedAllocator.of(64));
    private final GuardAdaptorImpl guard = GuardAdaptorImpl.of(upstream);

    private static String hex(MemorySegment p) {
        return "0x" + Long.toHexString(p.address());
    }

    private static void assertMentions(String text, String... parts) {
        for (String p : parts) {
            assertTrue(text.contains(p), () -> "'" + p + "' missing from: " + text);
        }
    }

    @Test
    void wrongSizeFreeIsRefusedAndTheBlockStaysLive() {
        MemorySegment p = guard.malloc(100);
        GuardViolationException e = assertThrows(GuardViolationException.class, () -> guard.free(p, 99));
        Misuse v = e.misuse();
        assertEquals(Misuse.Kind.WRONG_SIZE, v.kind());
        assertEquals(p.address(), v.address());
        assertEquals(99, v.byteSize());
        assertEquals(100, v.allocatedByteSize());
        assertEquals("free", v.operation());
        assertMentions(e.getMessage(), "WRONG_SIZE", hex(p), "free(" + hex(p) + ", 99)", "block of 100 bytes",
                "1 bytes too small");
        assertEquals(1, guard.liveCount(), "the block is still the caller's");
        guard.free(p, 100);
        assertEquals(List.of(v), guard.violations());
        guard.drainQuarantine();
        assertEquals(0, upstream.currentBytes());
    }

    @Test
    void wrongSizeReallocIsRefused() {
        MemorySegment p = guard.malloc(64);
        Misuse v = assertThrows(GuardViolationException.class, () -> guard.realloc(p, 65, 128)).misuse();
        assertEquals(Misuse.Kind.WRONG_SIZE, v.kind());
        assertEquals(65, v.byteSize());
        assertEquals(64, v.allocatedByteSize());
        assertMentions(v.toString(), "realloc(" + hex(p) + ", 65, 128)", "1 bytes too large");
        guard.free(p, 64);
    }

    @Test
    void doubleFreeIsCaughtWithTheFirstFree() {
        MemorySegment p = guard.malloc(48);
        guard.free(p, 48);
        Misuse v = assertThrows(GuardViolationException.class, () -> guard.free(p, 48)).misuse();
        assertEquals(Misuse.Kind.DOUBLE_FREE, v.kind());
        assertEquals(p.address(), v.address());
        assertEquals(48, v.byteSize());
        assertEquals(48, v.allocatedByteSize());
        assertMentions(v.toString(), "DOUBLE_FREE at " + hex(p), "free(" + hex(p) + ", 48)", "block of 48 bytes",
                "already freed by thread '" + Thread.currentThread().getName() + "'");
        assertThrows(GuardViolationException.class, () -> guard.realloc(p, 48, 96));
        assertEquals(2, guard.violations().size());
        guard.drainQuarantine();
        assertEquals(0, upstream.currentBytes(), "nothing was freed twice upstream");
        assertEquals(1, upstream.frees());
    }

    @Test
    void foreignPointersAreNeverTouched() {
        MemorySegment libc = Libc.malloc(64);
        try {
            Misuse v = assertThrows(GuardViolationException.class, () -> guard.free(libc, 64)).misuse();
            assertEquals(Misuse.Kind.FOREIGN_POINTER, v.kind());
            assertEquals(libc.address(), v.address());
            assertEquals(64, v.byteSize());
            assertEquals(-1, v.allocatedByteSize());
            assertMentions(v.toString(), "FOREIGN_POINTER at " + hex(libc), "free(" + hex(libc) + ", 64)",
                    "no block at " + hex(libc));
        } finally {
            Libc.free(libc);
        }
        // Addresses nothing maps: the guard must report them, not read them.
        MemorySegment wild = MemorySegment.ofAddress(0x10);
        assertEquals(Misuse.Kind.FOREIGN_POINTER,
                assertThrows(GuardViolationException.class, () -> guard.free(wild, 8)).misuse().kind());
        MemorySegment kernel = MemorySegment.ofAddress(0xffff_8000_0000_0000L);
        assertEquals(Misuse.Kind.FOREIGN_POINTER,
                assertThrows(GuardViolationException.class, () -> guard.realloc(kernel, 8, 16)).misuse().kind());
        MemorySegment p = guard.malloc(32);
        MemorySegment inside = MemorySegment.ofAddress(p.address() + 8);
        assertEquals(Misuse.Kind.FOREIGN_POINTER,
                assertThrows(GuardViolationException.class, () -> guard.free(inside, 24)).misuse().kind());
        guard.free(p, 32);
        guard.drainQuarantine();
        assertEquals(1, upstream.frees(), "only the real block went upstream");
        assertEquals(0, upstream.currentBytes());
    }

    @Test
    void writePastTheEndIsCaughtOnFree() {
        MemorySegment p = guard.malloc(100);
        MemorySegment wide = p.reinterpret(101);
        wide.set(ValueLayout.JAVA_BYTE, 100, (byte) 0x41); // one byte past the end
        Misuse v = assertThrows(GuardViolationException.class, () -> guard.free(p, 100)).misuse();
        assertEquals(Misuse.Kind.OVERRUN, v.kind());
        assertEquals(p.address(), v.address());
        assertEquals(100, v.byteSize());
        assertEquals(100, v.allocatedByteSize());
        assertMentions(v.toString(), "OVERRUN at " + hex(p), "block of 100 bytes", "written past its end",
                "byte 100 (red-zone byte 0", "is 0x41, expected 0xfd");
        assertEquals(0, guard.liveCount(), "an overrun block is still freed: the red zone absorbed the write");
        guard.drainQuarantine();
        assertEquals(0, upstream.currentBytes());
    }

    @Test
    void reallocOfAnOverrunBlockChecksBeforeMovingAndAllocatesNothing() {
        MemorySegment p = guard.malloc(100);
        p.reinterpret(101).set(ValueLayout.JAVA_BYTE, 100, (byte) 0x41);
        long allocations = upstream.allocations();
        GuardViolationException e = assertThrows(GuardViolationException.class, () -> guard.realloc(p, 100, 4000));
        assertEquals(Misuse.Kind.OVERRUN, e.misuse().kind());
        assertEquals("realloc", e.misuse().operation());
        assertEquals(allocations, upstream.allocations(), "nothing was allocated for the move");
        assertEquals(0, guard.liveCount(), "no new block is live, and the old one is freed");
        assertEquals(Misuse.Kind.DOUBLE_FREE,
                assertThrows(GuardViolationException.class, () -> guard.free(p, 100)).misuse().kind());
        guard.drainQuarantine();
        assertEquals(0, upstream.currentBytes(), "nothing leaked");
    }

    @Test
    void checkFindsOverrunsInEveryLiveBlockOnceAndUnderrunsToo() {
        MemorySegment a = guard.malloc(10);
        MemorySegment b = guard.calloc(4, 8);
        MemorySegment c = guard.malloc(64);
        assertEquals(List.of(), guard.check(), "clean blocks");
        a.reinterpret(13).set(ValueLayout.JAVA_BYTE, 12, (byte) 7);
        MemorySegment.ofAddress(c.address() - 1).reinterpret(1).set(ValueLayout.JAVA_BYTE, 0, (byte) 0);
        List<Misuse> found = guard.check();
        assertEquals(2, found.size(), found.toString());
        Misuse over = found.stream().filter(v -> v.address() == a.address()).findFirst().orElseThrow();
        assertEquals(Misuse.Kind.OVERRUN, over.kind());
        assertEquals("check", over.operation());
        assertMentions(over.toString(), "byte 12 (red-zone byte 2", "is 0x07");
        Misuse under = found.stream().filter(v -> v.address() == c.address()).findFirst().orElseThrow();
        assertEquals(Misuse.Kind.UNDERRUN, under.kind());
        assertMentions(under.toString(), "written before its start", "canary");
        assertEquals(List.of(), guard.check(), "each block is reported once");
        guard.free(a, 10); // already reported: the free goes through
        guard.free(b, 32);
        guard.free(c, 64);
        assertEquals(2, guard.violations().size());
        assertMentions(guard.report(), "2 guard violation(s)", "OVERRUN", "UNDERRUN");
    }

    @Test
    void writesAfterFreeAreCaughtInQuarantine() {
        MemorySegment p = guard.malloc(40);
        MemorySegment stale = p.reinterpret(40);
        guard.free(p, 40);
        assertEquals(GuardAdaptorImpl.FREED_BYTE, stale.get(ValueLayout.JAVA_BYTE, 0), "freed memory is poisoned");
        stale.set(ValueLayout.JAVA_BYTE, 5, (byte) 1); // use after free, while quarantined
        List<Misuse> found = guard.check();
        assertEquals(1, found.size());
        Misuse v = found.getFirst();
        assertEquals(Misuse.Kind.USE_AFTER_FREE, v.kind());
        assertEquals(p.address(), v.address());
        assertMentions(v.toString(), "block of 40 bytes", "written after it was freed: byte 5 is 0x01");
        assertEquals(1, guard.drainQuarantine());
        assertEquals(1, guard.violations().size(), "reported once");
    }

    @Test
    void freshBlocksArePoisonedAndCallocIsZero() {
        MemorySegment p = guard.malloc(16);
        assertEquals(GuardAdaptorImpl.UNINITIALISED_BYTE, p.reinterpret(16).get(ValueLayout.JAVA_BYTE, 15));
        MemorySegment z = guard.calloc(2, 8);
        assertEquals(0, z.reinterpret(16).get(ValueLayout.JAVA_LONG, 8));
        guard.free(p, 16);
        guard.free(z, 16);
        assertEquals(List.of(), guard.violations());
    }

    @Test
    void reallocMovesKeepsDataAndRetiresTheOldBlock() {
        MemorySegment p = guard.malloc(8);
        p.reinterpret(8).set(ValueLayout.JAVA_LONG, 0, 42L);
        MemorySegment q = guard.realloc(p, 8, 4096);
        assertTrue(q.address() != p.address(), "realloc always moves under the guard");
        assertEquals(42L, q.reinterpret(8).get(ValueLayout.JAVA_LONG, 0));
        assertEquals(Misuse.Kind.DOUBLE_FREE,
                assertThrows(GuardViolationException.class, () -> guard.free(p, 8)).misuse().kind());
        guard.free(q, 4096);
        assertEquals(0, guard.liveCount());
    }

    @Test
    void recordModeNeverThrowsAndStillFreesCorrectly() {
        GuardAdaptorImpl g = GuardAdaptorImpl.builder(upstream).onViolation(GuardAdaptorImpl.OnViolation.RECORD)
                .quarantineBytes(0).redZoneBytes(8).build();
        MemorySegment p = g.malloc(100);
        g.free(p, 7);                                   // wrong size: freed with its real size
        g.free(p, 100);                                 // double free: ignored
        assertEquals(0, g.realloc(MemorySegment.ofAddress(0x1000), 8, 16).address(), "bad realloc: NULL");
        assertEquals(List.of(Misuse.Kind.WRONG_SIZE, Misuse.Kind.DOUBLE_FREE,
                Misuse.Kind.FOREIGN_POINTER), g.violations().stream().map(Misuse::kind).toList());
        assertEquals(0, upstream.currentBytes(), "freed once, upstream, with the guard's real total");
        assertEquals(1, upstream.frees());
    }

    @Test
    void arraysWorkUnderTheGuardAndItKeepsTheAlignment() {
        GuardAdaptorImpl g = GuardAdaptorImpl.of(AlignedAllocator.of(4096));
        assertEquals(4096, g.traits().byteAlignment());
        DataMemHandler h = DataMemHandler.of("aligned:4096+guard", g);
        NDArray a = io.datamem.DataMem.callWith(h, () -> NDArray.zeros(DType.FLOAT64, 1000));
        assertEquals(0, a.address() % 4096);
        a.resize(3000);
        a.setDouble(1.5, 2999);
        a.close();
        assertEquals(0, g.liveCount());
        assertEquals(List.of(), g.check());
        assertFalse(g.violations().iterator().hasNext());
        assertEquals("no violations\n", g.report());
    }

    @Test
    void aHugeAlignmentFillsOnlyAFixedRegionOfTheHeader() {
        org.junit.jupiter.api.Assumptions.assumeTrue(Rss.available(), "needs /proc/self/status");
        GuardAdaptorImpl g = GuardAdaptorImpl.of(AlignedAllocator.of(256L << 20));
        long before = Rss.bytes();
        MemorySegment p = g.malloc(1);
        long grown = Rss.bytes() - before;
        assertEquals(0, p.address() % (256L << 20), "the guard keeps the upstream's alignment");
        assertTrue(grown < (16L << 20), "malloc(1) made " + grown + " bytes resident");
        p.reinterpret(2).set(ValueLayout.JAVA_BYTE, 1, (byte) 1);
        MemorySegment.ofAddress(p.address() - 20).reinterpret(1).set(ValueLayout.JAVA_BYTE, 0, (byte) 1);
        List<Misuse> found = g.check();
        assertEquals(List.of(Misuse.Kind.OVERRUN, Misuse.Kind.UNDERRUN),
                found.stream().map(Misuse::kind).toList(), "both ends are still guarded");
        g.free(p, 1);
        g.drainQuarantine();
        assertEquals(0, g.liveCount());
    }

    @Test
    void badSettingsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> GuardAdaptorImpl.builder(upstream).redZoneBytes(0));
        assertThrows(IllegalArgumentException.class, () -> GuardAdaptorImpl.builder(upstream).quarantineBytes(-1));
        assertThrows(NullPointerException.class, () -> GuardAdaptorImpl.of(null));
    }
}
