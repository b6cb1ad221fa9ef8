package io.datamem.array;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.buffer.BufferFlags;
import io.datamem.buffer.BufferView;
import io.datamem.dlpack.DLPack;
import io.datamem.testing.CountingAllocator;
import io.datamem.testing.Nep49SampleAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The array lifecycle under misuse: every path that hands out an address, a segment, a view or an
 * export goes through one check, so a stale view, a closed base, a closed foreign arena or an
 * export racing a close becomes an exception, never an export of freed memory. The allocator below
 * fails the test if a block is freed while something handed out over it is still usable.
 */
class ArrayLifecycleSafetyTest {

    private final Nep49SampleAllocator sample = new Nep49SampleAllocator();
    private final CountingAllocator counting = new CountingAllocator(sample);
    /** Blocks with an export held (address to count): freeing one of them is the bug. */
    private final ConcurrentHashMap<Long, Integer> exported = new ConcurrentHashMap<>();
    private final List<String> violations = new ArrayList<>();
    private final DataMemHandler h = DataMemHandler.of("safety-test", new Watching(counting, (address, byteSize) -> {
        if (exported.containsKey(address)) {
            synchronized (violations) {
                violations.add("free or realloc of 0x" + Long.toHexString(address) + " while an export of it is held");
            }
        }
    }));

    /** Forwards to an upstream, telling a watcher of every block about to be freed or moved (also used by LocalSegmentTest). */
    record Watching(DataMemAllocator upstream, java.util.function.BiConsumer<Long, Long> beforeRelease)
            implements DataMemAllocator {

        @Override
        public MemorySegment malloc(long byteSize) {
            return upstream.malloc(byteSize);
        }

        @Override
        public MemorySegment calloc(long count, long elementByteSize) {
            return upstream.calloc(count, elementByteSize);
        }

        @Override
        public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
            beforeRelease.accept(ptr.address(), oldByteSize);
            return upstream.realloc(ptr, oldByteSize, newByteSize);
        }

        @Override
        public void free(MemorySegment ptr, long byteSize) {
            beforeRelease.accept(ptr.address(), byteSize);
            upstream.free(ptr, byteSize);
        }
    }

    @AfterEach
    void nothingFreedUnderAnExportNothingLeaked() {
        assertEquals(List.of(), violations);
        assertEquals(List.of(), sample.violations());
        assertEquals(0, counting.liveBlocks(), "every array closed and freed exactly once");
    }

    private NDArray zeros(long... shape) {
        return DataMem.callWith(h, () -> NDArray.zeros(DType.FLOAT64, shape));
    }

    /** Every operation that hands out memory, on an array that must refuse them all. */
    private static void refusesEverything(NDArray stale, String message) {
        List<Function<NDArray, Object>> operations = List.of(
                NDArray::address,
                NDArray::segment,
                a -> a.getBuffer(BufferFlags.FULL_RO),
                a -> a.getBuffer(BufferFlags.SIMPLE),
                a -> DLPack.toDLPack(a, 1),
                a -> DLPack.toDLPack(a, 0),
                a -> a.whileHeld(() -> fail("the action ran on an array that must refuse it")),
                NDArray::hold,
                a -> a.reshape(-1),
                a -> a.slice(Slice.all()),
                NDArray::transpose,
                NDArray::asReadOnly,
                NDArray::copy,
                a -> a.getDouble(new long[a.ndim()]),
                a -> {
                    a.setDouble(1, new long[a.ndim()]);
                    return null;
                });
        for (Function<NDArray, Object> op : operations) {
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> op.apply(stale));
            assertTrue(e.getMessage().contains(message), e.getMessage());
        }
        assertTrue(stale.isClosed());
    }

    @Test
    void aViewMadeBeforeItsBaseWasResizedRefusesEveryPath() {
        NDArray base = zeros(8);
        NDArray view = base.reshape(8);
        NDArray touched = base.reshape(2, 4);
        touched.setDouble(1, 0, 0);                // one view has a segment, the other has none yet
        base.resize(1 << 16);                      // moves the block (the sample allocator always moves)
        refusesEverything(view, "no longer valid: the owning array was resized");
        assertThrows(IllegalStateException.class, () -> touched.address());
        assertThrows(IllegalStateException.class, () -> touched.getBuffer(BufferFlags.FULL_RO));
        assertThrows(IllegalStateException.class, () -> touched.getDouble(0, 0));
        NDArray fresh = base.reshape(-1);          // a view made now is fine
        fresh.setDouble(2, 0);
        assertEquals(2, base.getDouble(0));
        base.close();
    }

    @Test
    void whileHeldRefusesCloseAndResizeUntilTheActionReturns() {
        NDArray base = zeros(8);
        NDArray view = base.reshape(2, 4);
        long address = view.whileHeld(() -> {
            IllegalStateException close = assertThrows(IllegalStateException.class, base::close);
            assertTrue(close.getMessage().contains("export"), close.getMessage());
            assertThrows(IllegalStateException.class, () -> base.resize(64));
            assertFalse(base.isClosed());
            return view.address();
        });
        assertEquals(base.address(), address);
        RuntimeException thrown = new RuntimeException("from the action");
        assertEquals(thrown, assertThrows(RuntimeException.class, () -> base.whileHeld(() -> {
            throw thrown;
        })));
        base.resize(64);                           // both pins were released, the throwing one too
        base.close();
        assertThrows(NullPointerException.class, () -> base.whileHeld(null));
        assertThrows(IllegalStateException.class, () -> base.whileHeld(() -> 1));
    }

    @Test
    void aPinHoldsTheMemoryAndTheArrayUntilItIsClosedOnce() {
        NDArray base = zeros(8);
        NDArray view = base.reshape(2, 4);
        NDArray.Hold first = view.hold();
        NDArray.Hold second = base.hold();
        exported.put(base.address(), 2);
        assertFalse(first.isReleased());
        IllegalStateException close = assertThrows(IllegalStateException.class, base::close);
        assertTrue(close.getMessage().contains("still held"), close.getMessage());
        assertThrows(IllegalStateException.class, () -> base.resize(64));
        first.close();
        first.close();                             // a second release does nothing: one pin is still held
        assertTrue(first.isReleased());
        assertTrue(first.toString().contains("released"), first.toString());
        assertThrows(IllegalStateException.class, base::close);
        second.close();
        exported.remove(base.address());
        base.resize(64);
        base.close();
        assertThrows(IllegalStateException.class, base::hold);
        assertThrows(IllegalStateException.class, view::hold);
        second.close();                            // after the close too
    }

    @Test
    void aPinnedArrayDroppedByJavaKeepsItsMemory() throws Exception {
        NDArray.Hold pin = zeros(1024).hold();       // the array itself is unreachable but through the pin
        for (int i = 0; i < 5; i++) {
            System.gc();
            Thread.sleep(10);
            for (int j = 0; j < 64; j++) {
                zeros(16).close();                 // gives reclamation a chance to run
            }
        }
        assertEquals(1, counting.liveBlocks(), "the pinned array's block is still allocated");
        pin.close();
        pin = null;                                // now nothing reaches the array
        for (int i = 0; i < 50 && counting.liveBlocks() > 0; i++) {
            System.gc();
            Thread.sleep(20);
            zeros(16).close();
        }
        assertEquals(0, counting.liveBlocks(), "released and dropped, the array was reclaimed");
    }

    @Test
    void viewsOfAClosedBaseRefuseEveryPath() {
        NDArray base = zeros(16);
        NDArray view = base.reshape(4, 4).slice(Slice.all(), Slice.range(0, 2)).transpose().slice(Slice.all());
        assertFalse(view.ownsData());
        base.close();
        refusesEverything(view, "is closed: its memory was freed through handler 'safety-test'");
    }

    @Test
    void arraysOverAForeignSegmentLiveOnlyAsLongAsItsArena() {
        Arena arena = Arena.ofShared();
        MemorySegment s = arena.allocate(64, 8);
        NDArray wrapped = NDArray.wrap(s, DType.FLOAT64, 8);
        NDArray view = wrapped.reshape(2, 4);
        wrapped.setDouble(3, 1);
        assertFalse(wrapped.isClosed());
        arena.close();
        refusesEverything(wrapped, "no longer alive");
        refusesEverything(view, "no longer alive");
    }

    @Test
    void heapSegmentsAreNeverExportedToNativeCode() {
        NDArray heap = NDArray.wrap(MemorySegment.ofArray(new double[8]), DType.FLOAT64, 8);
        heap.setDouble(1.5, 2);
        assertEquals(1.5, heap.getDouble(2), "Java-side access works");
        UnsupportedOperationException address = assertThrows(UnsupportedOperationException.class, heap::address);
        assertTrue(address.getMessage().contains("Java heap segment"), address.getMessage());
        assertThrows(UnsupportedOperationException.class, () -> DLPack.toDLPack(heap, 1));
        try (Arena arena = Arena.ofConfined(); BufferView view = heap.getBuffer(BufferFlags.FULL_RO)) {
            UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
                    () -> view.toNative(arena));
            assertTrue(e.getMessage().contains("Java heap segment"), e.getMessage());
        }
        assertEquals(0, DLPack.outstandingExports());
        heap.close();
    }

    @Test
    void adoptValidatesEveryArgument() {
        MemorySegment block = counting.malloc(64);
        try {
            IllegalArgumentException nul = assertThrows(IllegalArgumentException.class, () -> NDArray.adopt(h,
                    MemorySegment.NULL, 64, DType.FLOAT64, new long[] {8}, null, 0));
            assertTrue(nul.getMessage().startsWith("block: NULL for 8 element(s)"), nul.getMessage());
            IllegalArgumentException negative = assertThrows(IllegalArgumentException.class, () -> NDArray.adopt(h,
                    block, -8, DType.FLOAT64, new long[] {0}, null, 0));
            assertTrue(negative.getMessage().startsWith("allocatedByteSize: -8"), negative.getMessage());
            assertThrows(IllegalArgumentException.class, () -> NDArray.adopt(h, MemorySegment.ofArray(new byte[64]),
                    64, DType.FLOAT64, new long[] {8}, null, 0));
            assertThrows(IllegalArgumentException.class, () -> NDArray.adopt(h, block, 63, DType.FLOAT64,
                    new long[] {8}, null, 0));
            assertThrows(IllegalArgumentException.class, () -> NDArray.adopt(h, block, 64, DType.FLOAT64,
                    new long[] {8}, null, 8));
        } finally {
            counting.free(block, 64);   // ownership stayed with the caller every time
        }
        NDArray empty = NDArray.adopt(h, MemorySegment.NULL, 0, DType.FLOAT64, new long[] {0, 3}, null, 0);
        assertEquals(0, empty.size(), "no element, no memory: NULL is fine (DLPack allows it)");
        empty.close();
    }

    /** A spinning start: each of two racing tasks calls this, and both go on within nanoseconds. */
    private static void startTogether(AtomicInteger arrived) {
        arrived.incrementAndGet();
        while (arrived.get() < 2) {
            Thread.onSpinWait();
        }
    }

    /**
     * Exports {@code view} as DLPack ({@code kind} 0), a buffer view (1) or a bare pin (2), noting
     * the block as exported; or the refusal.
     */
    private Object exportOrRefusal(NDArray view, int kind, long block) {
        try {
            Object handedOut = kind == 0 ? DLPack.toDLPack(view, 1)
                    : kind == 1 ? view.getBuffer(BufferFlags.FULL_RO) : view.hold();
            exported.merge(block, 1, Integer::sum);
            return handedOut;
        } catch (IllegalStateException e) {
            return e;
        }
    }

    /**
     * Races an export of {@code view} (see {@link #exportOrRefusal}) against {@code rival} on two
     * threads of {@code pool} started together.
     *
     * @return the export's result and the rival's (null, or the {@link IllegalStateException} it threw)
     */
    private Object[] race(ExecutorService pool, NDArray view, int kind, long block, Runnable rival)
            throws Exception {
        return race(pool, view, kind, block, rival, false);
    }

    /** As above; with {@code rivalHere}, the rival runs on the calling thread (an owner-only operation). */
    private Object[] race(ExecutorService pool, NDArray view, int kind, long block, Runnable rival, boolean rivalHere)
            throws Exception {
        AtomicInteger arrived = new AtomicInteger();
        Future<Object> export = pool.submit(() -> {
            startTogether(arrived);
            return exportOrRefusal(view, kind, block);
        });
        java.util.concurrent.Callable<Object> other = () -> {
            startTogether(arrived);
            try {
                rival.run();
                return null;
            } catch (IllegalStateException e) {
                return e;
            }
        };
        Object otherResult = rivalHere ? other.call() : pool.submit(other).get();
        return new Object[] {export.get(), otherResult};
    }

    /** Releases what {@link #exportOrRefusal} handed out. */
    private static void releaseExport(Object handedOut) {
        if (handedOut instanceof BufferView v) {
            v.release();
        } else if (handedOut instanceof NDArray.Hold pin) {
            pin.close();
        } else {
            DLPack.release((MemorySegment) handedOut, true);
        }
    }

    /**
     * An export and a close of the same memory race for many rounds. Each round either exports
     * (then the close is refused while the export is held, and the block is never freed under it)
     * or closes first (then the export throws); both succeeding would hand out freed memory.
     */
    @Test
    void exportsRacingACloseEitherPinFirstOrFail() throws Exception {
        int rounds = 10_000;
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            int[] outcomes = new int[2];
            for (int round = 0; round < rounds; round++) {
                NDArray base = zeros(16);
                NDArray view = base.reshape(4, 4);
                if (round % 2 == 0) {
                    view.setDouble(1, 0, 0);            // half the rounds with a segment made, half without
                }
                int kind = round % 3;                 // DLPack, a buffer view, a bare pin
                long block = base.address();
                Object[] results = race(pool, view, kind, block, base::close);
                Object exportResult = results[0];
                Object closeResult = results[1];
                if (exportResult instanceof IllegalStateException e) {
                    assertTrue(e.getMessage().contains("closed"), e.getMessage());
                    assertTrue(closeResult == null, "round " + round + ": the export failed (" + e.getMessage()
                            + "), so the close must have succeeded, but it threw " + closeResult);
                    outcomes[0]++;
                } else {
                    // The export pinned first; the close may have been refused, or may not have run yet.
                    if (closeResult instanceof IllegalStateException refused) {
                        assertTrue(refused.getMessage().contains("still held"), refused.getMessage());
                    } else {
                        fail("round " + round + ": the close succeeded although an export was handed out");
                    }
                    assertFalse(base.isClosed());
                    double read = base.getDouble(0);
                    assertEquals(round % 2 == 0 ? 1.0 : 0.0, read, "the exported memory is still the array's");
                    exported.remove(block);
                    releaseExport(exportResult);
                    base.close();
                    outcomes[1]++;
                }
                assertTrue(base.isClosed());
            }
            assertEquals(rounds, outcomes[0] + outcomes[1]);
            assertEquals(0, DLPack.outstandingExports());
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * An export and a resize of the same memory race for many rounds. Exactly one wins each round:
     * the export (the resize is then refused while it is held, and the block stays where it is) or
     * the resize (the export then throws: the view it was asked of is stale). Both winning would
     * hand out a block the resize moves; both losing would refuse a resize for an export that was
     * never handed out.
     */
    @Test
    void exportsRacingAResizeHaveExactlyOneWinner() throws Exception {
        int rounds = 20_000;
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            int[] outcomes = new int[2];
            for (int round = 0; round < rounds; round++) {
                NDArray base = zeros(16);
                base.setDouble(7, 3);
                // Exported through a view made before the race, whose generation is fixed: after a
                // resize it is stale (the owner itself follows its memory to the new block)
                NDArray view = base.reshape(4, 4);
                int kind = round % 3;                 // DLPack, a buffer view, a bare pin
                long block = base.address();
                Object[] results = race(pool, view, kind, block, () -> base.resize(32), true);
                Object exportResult = results[0];
                Object resizeResult = results[1];
                if (exportResult instanceof IllegalStateException e) {
                    assertTrue(e.getMessage().contains("resized") || e.getMessage().contains("no longer valid"),
                            e.getMessage());
                    assertTrue(resizeResult == null, "round " + round + ": the export failed, so the resize must"
                            + " have succeeded, but it threw " + resizeResult);
                    outcomes[0]++;
                } else {
                    if (resizeResult instanceof IllegalStateException refused) {
                        assertTrue(refused.getMessage().contains("still held"), refused.getMessage());
                    } else {
                        fail("round " + round + ": the resize succeeded although an export was handed out");
                    }
                    assertEquals(block, base.address(), "the exported block did not move");
                    assertEquals(16, base.size());
                    exported.remove(block);
                    releaseExport(exportResult);
                    outcomes[1]++;
                }
                assertEquals(7.0, base.getDouble(3), "the data survived whichever won");
                base.close();
            }
            assertEquals(rounds, outcomes[0] + outcomes[1]);
            assertEquals(0, DLPack.outstandingExports());
        } finally {
            pool.shutdownNow();
        }
    }

    /** A segment handed out before a close is dead before its memory goes back to the allocator. */
    @Test
    void memoryIsNeverReturnedWhileASegmentCanReachIt() {
        List<MemorySegment> handedOut = new ArrayList<>();
        List<String> freedWhileReachable = new ArrayList<>();
        DataMemHandler watching = DataMemHandler.of("watching", new Watching(counting, (address, byteSize) -> {
            for (MemorySegment s : handedOut) {
                if (s.address() >= address && s.address() < address + byteSize && s.scope().isAlive()) {
                    freedWhileReachable.add("0x" + Long.toHexString(s.address()));
                }
            }
        }));
        for (int i = 0; i < 200; i++) {
            NDArray a = DataMem.callWith(watching, () -> NDArray.zeros(DType.FLOAT64, 32));
            NDArray v = a.reshape(4, 8);
            handedOut.clear();
            handedOut.add(a.segment());
            handedOut.add(v.segment());
            if (i % 2 == 0) {
                a.resize(64);
                assertThrows(IllegalStateException.class, () -> handedOut.getFirst().get(ValueLayout.JAVA_DOUBLE, 0));
                handedOut.clear();
                handedOut.add(a.segment());
            }
            a.close();
            for (MemorySegment s : handedOut) {
                assertThrows(IllegalStateException.class, () -> s.get(ValueLayout.JAVA_DOUBLE, 0));
            }
        }
        assertEquals(List.of(), freedWhileReachable);
    }
}
