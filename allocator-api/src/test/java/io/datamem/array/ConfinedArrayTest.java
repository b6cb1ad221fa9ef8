package io.datamem.array;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.testing.CountingAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Arrays confined to a thread: cheap to close, unusable elsewhere, freed safely when leaked. */
class ConfinedArrayTest {

    private final CountingAllocator counting = new CountingAllocator(DataMem.builtinDefault().allocator());
    private final DataMemHandler h = DataMemHandler.of("confined-test", counting);

    @AfterEach
    void everythingFreed() throws InterruptedException {
        awaitFreed();
        assertEquals(0, counting.liveBlocks());
    }

    private void awaitFreed() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (counting.liveBlocks() > 0 && System.nanoTime() < deadline) {
            System.gc();
            Thread.sleep(20);
        }
    }

    private NDArray zeros(long... shape) {
        return DataMem.callWith(h, () -> NDArray.zeros(DType.FLOAT64, shape));
    }

    private static Throwable onAnotherThread(Runnable r) throws Exception {
        AtomicReference<Throwable> seen = new AtomicReference<>();
        Thread t = Thread.ofPlatform().start(() -> {
            try {
                r.run();
            } catch (Throwable e) {
                seen.set(e);
            }
        });
        t.join();
        return seen.get();
    }

    @Test
    void aConfinedArrayWorksOnItsThreadAndClosesThere() {
        try (NDArray a = zeros(100).confined()) {
            assertTrue(a.isConfined());
            assertSame(a, a.confined(), "confining again on the same thread is a no-op");
            a.setDouble(2.5, 99);
            assertEquals(2.5, a.getDouble(99));
            NDArray view = a.reshape(10, 10);
            assertTrue(view.isConfined());
            assertEquals(2.5, view.getDouble(9, 9));
            a.resize(200);
            assertEquals(2.5, a.getDouble(99));
        }
    }

    @Test
    void otherThreadsCannotReachCloseOrResizeItsMemory() throws Exception {
        NDArray a = zeros(16).confined();
        a.setDouble(1, 0);
        MemorySegment seg = a.segment();
        assertInstanceOf(WrongThreadException.class, onAnotherThread(() -> a.getDouble(0)));
        assertInstanceOf(WrongThreadException.class, onAnotherThread(() -> seg.get(ValueLayout.JAVA_DOUBLE, 0)));
        Throwable close = onAnotherThread(a::close);
        assertInstanceOf(WrongThreadException.class, close);
        assertTrue(close.getMessage().contains("only that thread may close or resize it"), close.getMessage());
        assertFalse(a.isClosed(), "a refused close leaves the array open");
        assertInstanceOf(WrongThreadException.class, onAnotherThread(() -> a.resize(32)));
        assertEquals(1.0, a.getDouble(0), "a refused resize changes nothing");
        a.close();
        assertThrows(IllegalStateException.class, () -> seg.get(ValueLayout.JAVA_DOUBLE, 0));
    }

    @Test
    void untouchedConfinedMemoryMayBeClosedAnywhereAndFirstAccessElsewhereIsRefused() throws Exception {
        NDArray a = zeros(8).confined();
        Throwable first = onAnotherThread(() -> a.getDouble(0));
        assertInstanceOf(WrongThreadException.class, first);
        assertTrue(first.getMessage().contains("is confined to thread"), first.getMessage());
        assertEquals(null, onAnotherThread(a::close), "nothing was reached: no segment to invalidate");
        assertTrue(a.isClosed());
    }

    @Test
    void confiningIsRefusedOnceSharedSegmentsExistAndForForeignMemory() throws Exception {
        try (NDArray shared = zeros(4)) {
            shared.segment();                       // a segment that may have gone to any thread
            assertThrows(IllegalStateException.class, shared::confined);
        }
        try (NDArray touchedHere = zeros(4)) {
            touchedHere.setDouble(1, 0);            // only this thread's local segment exists
            assertSame(touchedHere, touchedHere.confined());
            assertEquals(1, touchedHere.getDouble(0));
        }
        try (NDArray a = zeros(4).confined()) {
            assertInstanceOf(IllegalStateException.class, onAnotherThread(a::confined));
        }
        NDArray wrapped = NDArray.wrap(MemorySegment.ofArray(new byte[8]), DType.INT8, 8);
        assertThrows(IllegalStateException.class, wrapped::confined);
        NDArray closed = zeros(1);
        closed.close();
        assertThrows(IllegalStateException.class, closed::confined);
    }

    @Test
    void aLeakedConfinedArrayOfAnEndedThreadIsFreed() throws Exception {
        long before = NDArray.leakCount();
        CompletableFuture<MemorySegment> kept = new CompletableFuture<>();
        Thread owner = Thread.ofPlatform().start(() -> {
            NDArray a = zeros(1000).confined();
            a.setDouble(7, 0);
            kept.complete(a.segment());        // the segment outlives the array object
            NDArray b = zeros(1000).confined();
            b.setDouble(1, 0);                 // reached, then dropped with nothing else kept
        });
        owner.join();
        MemorySegment segment = kept.get();
        awaitFreed();
        // Both were confined to a thread that has ended: no thread can reach either block any more, not
        // even through the segment kept here (it is confined to that thread)
        assertEquals(before + 2, NDArray.leakCount());
        MemorySegment kept2 = segment;
        assertThrows(WrongThreadException.class, () -> kept2.get(ValueLayout.JAVA_DOUBLE, 0));
    }
}
