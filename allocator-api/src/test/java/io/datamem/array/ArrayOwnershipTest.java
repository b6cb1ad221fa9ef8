package io.datamem.array;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.testing.CountingAllocator;
import io.datamem.testing.Nep49SampleAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * An array belongs to the thread that created it until it is shared: other threads' element access
 * is refused, saying how to share; once shared, every thread kind reaches it; a close from another
 * thread than the owner never frees a block the owner may be reading; resizes happen on the owner.
 * Races run for thousands of rounds over memory that is poisoned when freed, so that a read of
 * freed memory shows.
 */
class ArrayOwnershipTest {

    private final Nep49SampleAllocator sample = new Nep49SampleAllocator();
    private final CountingAllocator counting = new CountingAllocator(sample);
    private final DataMemHandler h = DataMemHandler.of("ownership-test", counting);
    /** Poisons every block it frees (0xFF bytes: a NaN as a double), so a read of freed memory shows. */
    private final DataMemHandler poisoning = DataMemHandler.of("poisoning", new ArrayLifecycleSafetyTest.Watching(
            counting, (address, byteSize) -> MemorySegment.ofAddress(address).reinterpret(byteSize).fill((byte) 0xFF)));

    @AfterEach
    void nothingLeaked() throws InterruptedException {
        for (int i = 0; i < 200 && counting.liveBlocks() > 0; i++) {
            NDArray.reclaim();
            Thread.sleep(5);
        }
        assertEquals(List.of(), sample.violations());
        assertEquals(0, counting.liveBlocks());
    }

    private NDArray zeros(DataMemHandler handler, DType dtype, long... shape) {
        return DataMem.callWith(handler, () -> NDArray.zeros(dtype, shape));
    }

    private static Throwable on(Runnable task) throws InterruptedException {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                task.run();
            } catch (Throwable e) {
                failure.set(e);
            }
        });
        t.start();
        t.join();
        return failure.get();
    }

    /** Every element accessor, 1, 2 and N indices, get and set, on an array of shape [2, 3] or [6]. */
    private static List<Consumer<NDArray>> accessors() {
        List<Consumer<NDArray>> all = new ArrayList<>();
        all.add(a -> a.getDouble(1));
        all.add(a -> a.setDouble(1, 1));
        all.add(a -> a.getLong(1));
        all.add(a -> a.setLong(1, 1));
        all.add(a -> a.getDouble(new long[] {1}));
        all.add(a -> a.setDouble(1, new long[] {1}));
        all.add(a -> a.getLong(new long[] {1}));
        all.add(a -> a.setLong(1, new long[] {1}));
        all.add(a -> a.getBoolean(1));
        all.add(a -> a.setBoolean(true, 1));
        all.add(a -> a.getComplex(1));
        all.add(a -> a.setComplex(1, 0, 1));
        all.add(a -> a.fill(2.0));
        all.add(a -> a.toDoubleArray());
        all.add(a -> a.copyFrom(new double[6]));
        return all;
    }

    private static List<Consumer<NDArray>> accessors2() {
        List<Consumer<NDArray>> all = new ArrayList<>();
        all.add(a -> a.getDouble(1, 2));
        all.add(a -> a.setDouble(1, 1, 2));
        all.add(a -> a.getLong(1, 2));
        all.add(a -> a.setLong(1, 1, 2));
        return all;
    }

    private static final DType[] REAL = {DType.BOOL, DType.INT8, DType.UINT16, DType.INT32, DType.UINT64,
            DType.FLOAT16, DType.BFLOAT16, DType.FLOAT32, DType.FLOAT64};

    @Test
    void theOwnerClosesAndFreesAtOnce() {
        NDArray a = zeros(h, DType.FLOAT64, 8);
        assertTrue(a.isConfined());
        assertFalse(a.isShared());
        a.setDouble(2, 3);
        assertEquals(2, a.getDouble(3));
        a.close();
        assertEquals(0, counting.liveBlocks(), "freed by the close itself: no handshake, no wait");
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> a.getDouble(3));
        assertTrue(e.getMessage().contains("is closed") && e.getMessage().contains("ownership-test"), e.getMessage());
    }

    @Test
    void everyAccessorOfEveryDtypeRefusesAnotherThreadUntilShared() throws Exception {
        for (DType dtype : REAL) {
            NDArray a = zeros(h, dtype, 6);
            NDArray m = zeros(h, dtype, 2, 3);
            for (Consumer<NDArray> access : accessors()) {
                Throwable t = on(() -> access.accept(a));
                assertTrue(t instanceof WrongThreadException, dtype + ": " + t);
                assertTrue(t.getMessage().contains("share()") && t.getMessage().contains("belongs to thread"),
                        t.getMessage());
            }
            for (Consumer<NDArray> access : accessors2()) {
                assertTrue(on(() -> access.accept(m)) instanceof WrongThreadException, dtype.toString());
            }
            a.share();
            m.share();
            for (Consumer<NDArray> access : accessors()) {
                assertNull(on(() -> access.accept(a)), dtype.toString());
                access.accept(a);   // and the owner still does
            }
            for (Consumer<NDArray> access : accessors2()) {
                assertNull(on(() -> access.accept(m)), dtype.toString());
                access.accept(m);
            }
            a.close();
            m.close();
        }
    }

    @Test
    void sharedArraysAreReachedFromEveryKindOfThread() throws Exception {
        NDArray a = zeros(h, DType.FLOAT64, 64).share();
        a.setDouble(5, 7);
        assertEquals(5.0, a.getDouble(7));
        // a platform thread, a virtual thread, an executor task, a Parallel worker
        assertNull(on(() -> assertEquals(5.0, a.getDouble(7))));
        Thread v = Thread.ofVirtual().start(() -> a.setDouble(6, 8));
        v.join();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            assertEquals(6.0, pool.submit(() -> a.getDouble(8)).get());
        } finally {
            pool.shutdown();
        }
        Parallel.forRange(0, 64, i -> a.setDouble(i, i));
        for (int i = 0; i < 64; i++) {
            assertEquals(i, a.getDouble(i));
        }
        // a closed shared array refuses on every thread
        a.close();
        Throwable t = on(() -> a.getDouble(1));
        assertTrue(t instanceof IllegalStateException && t.getMessage().contains("is closed"), String.valueOf(t));
        AtomicReference<Throwable> fromVirtual = new AtomicReference<>();
        Thread.ofVirtual().start(() -> {
            try {
                a.getDouble(1);
            } catch (Throwable e) {
                fromVirtual.set(e);
            }
        }).join();
        assertTrue(fromVirtual.get() instanceof IllegalStateException, String.valueOf(fromVirtual.get()));
    }

    @Test
    void parallelSharesWhatItsBodyCapturesAndCreates() {
        NDArray captured = zeros(h, DType.FLOAT64, 100);
        NDArray[] results = new NDArray[100];
        DataMem.runWith(h, () -> Parallel.forRange(0, 100, i -> {
            captured.setDouble(i, i);
            results[(int) i] = NDArray.zeros(DType.FLOAT64, 2);
            results[(int) i].setDouble(i, 1);
        }));
        assertTrue(captured.isShared());
        for (int i = 0; i < 100; i++) {
            assertEquals(i, captured.getDouble(i));
            assertTrue(results[i].isShared(), "made in the loop: the calling thread may use it");
            assertEquals(i, results[i].getDouble(1));
            results[i].close();
        }
        NDArray rows = zeros(h, DType.FLOAT64, 10, 4);
        Parallel.forEachRow(rows, (row, i) -> row.fill((double) i));
        assertTrue(rows.isShared());
        assertEquals(9.0, rows.getDouble(9, 3));
        rows.close();
        captured.close();
    }

    @Test
    void aCloseByAnotherThreadWaitsForABusyOwnerAndIsRefusedMeanwhile() throws Exception {
        NDArray a = zeros(poisoning, DType.FLOAT64, 8);
        a.setDouble(42, 3);
        MemorySegment held = a.hostData();   // an access that passed its checks, about to read
        AtomicBoolean closed = new AtomicBoolean();
        Thread closer = new Thread(() -> {
            a.close();
            closed.set(true);
        });
        closer.start();
        while (!closed.get()) {
            Thread.onSpinWait();   // busy, not blocked: the closer cannot tell this thread is outside an access
        }
        assertEquals(42, held.get(ValueLayout.JAVA_DOUBLE, a.origin + 24), "the block was freed under an access");
        assertEquals(1, counting.liveBlocks());
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> a.getDouble(3));
        assertTrue(e.getMessage().contains("is closed"), e.getMessage());
        closer.join();
        assertEquals(0, NDArray.reclaim());
        assertEquals(0, counting.liveBlocks(), "freed by the owner, outside any access");
    }

    @Test
    void aCloseByAnotherThreadFreesAtOnceWhileTheOwnerIsBlocked() throws Exception {
        NDArray a = zeros(h, DType.FLOAT64, 8);
        Thread owner = Thread.currentThread();
        AtomicReference<Long> liveAfterClose = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(1);
        Thread closer = new Thread(() -> {
            while (owner.getState() != Thread.State.WAITING) {
                Thread.onSpinWait();
            }
            a.close();   // the owner waits below: it cannot be inside an access
            liveAfterClose.set(counting.liveBlocks());
            done.countDown();
        });
        closer.start();
        done.await();
        closer.join();
        assertEquals(0L, liveAfterClose.get(), "freed by the close itself");
        assertTrue(a.isClosed());
    }

    @Test
    void whatWaitsForAnEndedOwnerIsFreedByWhoeverComes() throws Exception {
        NDArray[] made = new NDArray[1];
        assertNull(on(() -> made[0] = zeros(h, DType.FLOAT64, 4)));
        Throwable t = on(() -> made[0].getDouble(0));
        assertTrue(t instanceof WrongThreadException, "its owner ended: still not this thread's");
        made[0].close();   // the owner ended: nothing can be inside an access
        assertEquals(0, counting.liveBlocks());
    }

    @Test
    void sharedArraysClosedWhileOtherThreadsReadNeverHandOutFreedMemory() throws Exception {
        int rounds = 3_000;
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < rounds; round++) {
                NDArray a = zeros(poisoning, DType.FLOAT64, 16);
                a.fill(1.0);
                a.share();
                CountDownLatch started = new CountDownLatch(1);
                Future<String> reader = pool.submit(() -> {
                    started.countDown();
                    try {
                        for (int k = 0; ; k++) {
                            double v = a.getDouble(k & 15);
                            if (v != 1.0) {
                                return "read " + v + " from a closed array";
                            }
                        }
                    } catch (IllegalStateException e) {
                        return e.getMessage().contains("is closed") ? null : e.getMessage();
                    }
                });
                started.await();
                if ((round & 1) == 0) {
                    a.close();
                } else {
                    pool.submit(a::close).get();
                }
                assertNull(reader.get(10, TimeUnit.SECONDS), "round " + round);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void closesRacingEachOtherFreeEachBlockOnce() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < 3_000; round++) {
                NDArray a = zeros(h, DType.FLOAT64, 8);
                if ((round & 1) == 1) {
                    a.share();
                }
                CountDownLatch go = new CountDownLatch(1);
                Future<?> one = pool.submit(() -> {
                    go.await();
                    a.close();
                    return null;
                });
                Future<?> two = pool.submit(() -> {
                    go.await();
                    a.close();
                    return null;
                });
                go.countDown();
                a.close();
                one.get();
                two.get();
                assertTrue(a.isClosed());
            }
        } finally {
            pool.shutdownNow();
        }
        NDArray.reclaim();
        assertEquals(List.of(), sample.violations(), "a block freed twice or with a wrong size");
    }

    @Test
    void onlyTheOwnerResizesAndAResizeHandsTheArrayBackUnshared() throws Exception {
        NDArray a = zeros(h, DType.FLOAT64, 4).share();
        a.setDouble(3, 2);
        NDArray view = a.reshape(2, 2);
        Throwable t = on(() -> a.resize(8));
        assertTrue(t instanceof WrongThreadException && t.getMessage().contains("alone may resize"), String.valueOf(t));
        assertEquals(4, a.size(), "refused: nothing changed");
        assertEquals(3.0, a.getDouble(2));
        a.resize(8);
        assertEquals(3.0, a.getDouble(2));
        assertEquals(0.0, a.getDouble(7), "new elements are zero");
        assertFalse(a.isShared(), "back on its owner thread");
        assertTrue(on(() -> a.getDouble(0)) instanceof WrongThreadException);
        IllegalStateException stale = assertThrows(IllegalStateException.class, () -> view.getDouble(0, 0));
        assertTrue(stale.getMessage().contains("resized"), stale.getMessage());
        a.share();
        assertNull(on(() -> assertEquals(3.0, a.getDouble(2))));
        a.close();
    }

    @Test
    void confinedArraysAreNeverSharedNorClosedElsewhere() throws Exception {
        NDArray a = zeros(h, DType.FLOAT64, 4).confined();
        assertTrue(a.isConfined());
        assertThrows(IllegalStateException.class, a::share);
        Throwable t = on(a::close);
        assertTrue(t instanceof WrongThreadException && t.getMessage().contains("confined"), String.valueOf(t));
        assertFalse(a.isClosed());
        Throwable access = on(() -> a.getDouble(0));
        assertTrue(access.getMessage().contains("can never be shared"), access.getMessage());
        NDArray shared = zeros(h, DType.FLOAT64, 4).share();
        assertThrows(IllegalStateException.class, shared::confined, "shared already");
        assertTrue(on(() -> zeros(h, DType.FLOAT64, 1).confined().close()) == null);
        a.close();
        shared.close();
    }

    @Test
    void segmentSharesTheArrayUnlessItIsConfined() throws Exception {
        NDArray a = zeros(h, DType.FLOAT64, 4);
        MemorySegment s = a.segment();
        assertTrue(a.isShared(), "a segment may go to any thread");
        assertNull(on(() -> s.get(ValueLayout.JAVA_DOUBLE, 0)));
        a.close();
        assertThrows(IllegalStateException.class, () -> s.get(ValueLayout.JAVA_DOUBLE, 0));
        NDArray c = zeros(h, DType.FLOAT64, 4).confined();
        MemorySegment mine = c.segment();
        assertSame(mine.scope(), c.segment().scope(), "made once");
        assertTrue(on(() -> mine.get(ValueLayout.JAVA_DOUBLE, 0)) instanceof WrongThreadException);
        assertTrue(on(c::segment) instanceof WrongThreadException);
        c.close();
        assertThrows(IllegalStateException.class, () -> mine.get(ValueLayout.JAVA_DOUBLE, 0));
    }

    @Test
    void aLeakedArrayOfAWaitingOwnerIsFreedByTheReaper() throws Exception {
        long before = NDArray.leakCount();
        DataMem.runWith(h, () -> {
            for (int i = 0; i < 5; i++) {
                NDArray.zeros(DType.INT8, 1000).setLong(1, 3);
            }
        });
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (counting.liveBlocks() > 0 && System.nanoTime() < deadline) {
            System.gc();
            Thread.sleep(20);   // waiting: the reaper may free what leaked on this thread
        }
        assertEquals(0, counting.liveBlocks());
        assertEquals(before + 5, NDArray.leakCount());
    }

    @Test
    void anExportTakenOnAnotherThreadHoldsTheOwnersClose() throws Exception {
        NDArray a = zeros(h, DType.FLOAT64, 4);
        NDArray.Hold[] hold = new NDArray.Hold[1];
        assertNull(on(() -> hold[0] = a.hold()));
        IllegalStateException e = assertThrows(IllegalStateException.class, a::close);
        assertTrue(e.getMessage().contains("still held"), e.getMessage());
        assertNull(on(hold[0]::close));
        a.close();
        if (counting.liveBlocks() != 0) {
            fail("closed on its owner: freed at once");
        }
    }
}
