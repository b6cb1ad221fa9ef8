package io.datamem.array;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.buffer.BufferFlags;
import io.datamem.buffer.BufferView;
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
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Workspaces: blocks bumped in a region and reclaimed when their scope ends; the region learns its
 * size; arrays that outlive their scope, or reach another thread, are refused on every path; scopes
 * nest and end in order; races between a scope's end and other threads never reach reused memory.
 */
class WorkspaceTest {

    private final Nep49SampleAllocator sample = new Nep49SampleAllocator();
    private final CountingAllocator counting = new CountingAllocator(sample);
    private final DataMemHandler upstream = DataMemHandler.of("ws-upstream", counting);
    private final Workspace workspace = Workspace.over("workspace(ws-upstream)", counting, Workspace.Options.DEFAULTS);
    private final DataMemHandler ws = DataMemHandler.of("workspace(ws-upstream)", workspace);

    @AfterEach
    void noScopeLeftOpen() {
        assertNull(ThreadHome.mine().scope, "every scope a test opened was closed");
        assertEquals(List.of(), sample.violations());
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

    @Test
    void aLongScopeKeepsOnlyItsOpenArrays() {
        try (Workspace.Scope s = Workspace.open(ws)) {
            DataMem.runWith(ws, () -> {
                NDArray kept = NDArray.zeros(DType.FLOAT64, 4);
                for (int i = 0; i < 100_000; i++) {   // temporaries, closed at once
                    try (NDArray t = NDArray.empty(DType.FLOAT64, 8)) {
                        t.setDouble(i, 0);
                    }
                }
                assertEquals(1, s.tracked(), "closed temporaries are forgotten");
                for (int i = 0; i < 100_000; i++) {   // pairs closed out of order
                    NDArray a = NDArray.empty(DType.FLOAT64, 8);
                    NDArray b = NDArray.empty(DType.FLOAT64, 8);
                    a.close();
                    b.close();
                }
                assertTrue(s.tracked() <= 64, "closed arrays are dropped as the list grows: " + s.tracked());
                assertEquals(32, workspace.figures().currentCycleBytes(), "both of each pair went back: only the"
                        + " kept array's 32 bytes are in use");
                assertEquals(1, workspace.figures().spills(), "one chunk served the whole scope");
                kept.setDouble(1.0, 3);
                assertEquals(1.0, kept.getDouble(3));
            });
        }
    }

    @Test
    void theFirstCycleLearnsItsSizeAndLaterCyclesCallTheUpstreamNoMore() {
        Workspace.run(ws, () -> {
            for (int i = 0; i < 10; i++) {
                NDArray.zeros(DType.FLOAT64, 100).setDouble(i, 3);   // 800 bytes each, never closed
            }
        });
        Workspace.Figures first = workspace.figures();
        assertEquals(1, first.cycles());
        assertEquals(1, first.spills(), "the first cycle took a chunk (64 KiB) as it went");
        assertTrue(first.lastCycleBytes() >= 8000, first.toString());
        assertTrue(first.regionBytes() >= first.lastCycleBytes(), "a region that fits it: " + first);
        long callsBefore = counting.allocations();
        for (int cycle = 0; cycle < 5; cycle++) {
            Workspace.run(ws, () -> {
                for (int i = 0; i < 10; i++) {
                    NDArray a = NDArray.zeros(DType.FLOAT64, 100);
                    assertEquals(0.0, a.getDouble(5), "zeros in a reused region");
                    a.setDouble(7, 5);
                }
            });
        }
        assertEquals(callsBefore, counting.allocations(), "steady cycles make no call to the upstream");
        Workspace.Figures after = workspace.figures();
        assertEquals(6, after.cycles());
        assertEquals(1, after.spills());
        assertEquals(0, after.currentCycleBytes());
        assertEquals(first.largestCycleBytes(), after.largestCycleBytes());
        try (Workspace.Scope open = Workspace.open(ws)) {
            DataMem.callWith(ws, () -> NDArray.zeros(DType.INT8, 1));
            assertFalse(workspace.trim(), "a scope is open");
        }
        long live = counting.liveBlocks();
        assertTrue(workspace.trim());
        assertEquals(live - 1, counting.liveBlocks(), "the region went back");
        assertEquals(0, workspace.figures().regionBytes());
    }

    @Test
    void anArrayThatOutlivesItsScopeIsRefusedOnEveryPath() {
        NDArray[] kept = new NDArray[2];
        MemorySegment[] segment = new MemorySegment[1];
        Workspace.run(ws, () -> {
            kept[0] = NDArray.zeros(DType.FLOAT64, 4, 4);
            kept[1] = kept[0].select(0, 1);   // a view
            segment[0] = kept[0].segment();
            kept[0].setDouble(1, 1, 1);
        });
        for (NDArray a : kept) {
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> a.getDouble(new long[a.ndim()]));
            assertTrue(e.getMessage().contains("workspace scope") && e.getMessage().contains("has ended"),
                    e.getMessage());
            assertThrows(IllegalStateException.class, a::segment);
            assertThrows(IllegalStateException.class, a::address);
            assertThrows(IllegalStateException.class, () -> a.getBuffer(BufferFlags.FULL_RO));
            assertThrows(IllegalStateException.class, a::hold);
            assertThrows(IllegalStateException.class, a::toDoubleArray);
            assertTrue(a.isClosed());
        }
        assertThrows(IllegalStateException.class, () -> kept[0].setDouble(2, 0, 0));
        assertThrows(IllegalStateException.class, () -> segment[0].get(ValueLayout.JAVA_DOUBLE, 0),
                "a segment obtained in the scope dies with it");
        kept[0].close();   // closing it now does nothing
    }

    @Test
    void arraysOfAScopeBelongToItsThread() throws Exception {
        try (Workspace.Scope s = Workspace.open(ws)) {
            NDArray a = DataMem.callWith(ws, () -> NDArray.zeros(DType.INT32, 8));
            IllegalStateException share = assertThrows(IllegalStateException.class, a::share);
            assertTrue(share.getMessage().contains("cannot be shared"), share.getMessage());
            Throwable t = on(() -> a.getLong(0));
            assertTrue(t instanceof WrongThreadException, String.valueOf(t));
            Throwable closing = on(s::close);
            assertTrue(closing instanceof WrongThreadException && closing.getMessage().contains("thread that opened"),
                    String.valueOf(closing));
            assertFalse(s.isClosed());
            assertThrows(UnsupportedOperationException.class, () -> a.resize(16));
            a.setLong(3, 2);
            assertEquals(3, a.getLong(2));
        }
    }

    @Test
    void scopesNestAndEndInOrder() {
        Workspace regioned = Workspace.over("ws-regioned", counting, new Workspace.Options(1 << 16, 1.25));
        DataMemHandler rws = DataMemHandler.of("ws-regioned", regioned);
        Workspace.Scope outer = Workspace.open(rws);
        try {
            NDArray a = DataMem.callWith(rws, () -> NDArray.zeros(DType.FLOAT64, 8));
            Workspace.Scope inner = Workspace.open(rws);
            NDArray b;
            long bAddress;
            try {
                b = DataMem.callWith(rws, () -> NDArray.zeros(DType.FLOAT64, 8));
                bAddress = b.address();
                assertTrue(bAddress > a.address(), "the inner scope bumps after the outer");
                IllegalStateException e = assertThrows(IllegalStateException.class, outer::close);
                assertTrue(e.getMessage().contains("close the inner scope first"), e.getMessage());
                assertFalse(a.isClosed());
            } finally {
                inner.close();
            }
            assertTrue(b.isClosed());
            assertFalse(a.isClosed(), "the outer scope's arrays live on");
            NDArray c = DataMem.callWith(rws, () -> NDArray.zeros(DType.FLOAT64, 8));
            assertEquals(bAddress, c.address(), "the inner scope's memory went back");
            outer.close();
            assertTrue(a.isClosed() && c.isClosed());
            inner.close();   // idempotent
        } finally {
            outer.close();
        }
    }

    @Test
    void aHeldExportKeepsTheScopeOpen() {
        Workspace.Scope s = Workspace.open(ws);
        NDArray a = DataMem.callWith(ws, () -> NDArray.zeros(DType.FLOAT64, 8));
        BufferView v = a.getBuffer(BufferFlags.FULL_RO);
        IllegalStateException e = assertThrows(IllegalStateException.class, s::close);
        assertTrue(e.getMessage().contains("still held"), e.getMessage());
        assertFalse(a.isClosed(), "refused: nothing changed");
        a.setDouble(1, 0);
        v.release();
        s.close();
        assertTrue(a.isClosed());
    }

    @Test
    void mallocOutsideAScopeIsRefusedAndTheScopeSeesEveryArrayFreedThroughItsHandler() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> DataMem.callWith(ws, () -> NDArray.zeros(DType.FLOAT64, 2)));
        assertTrue(e.getMessage().contains("no workspace scope is open"), e.getMessage());
        CountingAllocator above = new CountingAllocator(workspace);   // an adaptor over the workspace
        DataMemHandler counted = DataMemHandler.of("workspace+counted", above);
        Workspace.run(counted, () -> {
            NDArray.zeros(DType.FLOAT64, 4).close();
            NDArray.zeros(DType.FLOAT64, 4);          // left open: the scope closes it
            assertEquals(1, above.liveBlocks());
        });
        assertEquals(0, above.liveBlocks(), "the adaptor above saw every block freed");
    }

    @Test
    void aScopeEndingWhileAnotherThreadTriesToExportNeverHandsOutReusedMemory() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            for (int round = 0; round < 2_000; round++) {
                Workspace.Scope s = Workspace.open(ws);
                NDArray a = DataMem.callWith(ws, () -> NDArray.zeros(DType.FLOAT64, 8));
                CountDownLatch go = new CountDownLatch(1);
                Future<Object> export = pool.submit(() -> {
                    go.await();
                    try {
                        return a.hold();
                    } catch (IllegalStateException closed) {
                        return closed;
                    }
                });
                go.countDown();
                boolean ended;
                try {
                    s.close();
                    ended = true;
                } catch (IllegalStateException held) {
                    ended = false;
                }
                Object got = export.get();
                if (got instanceof NDArray.Hold hold) {
                    assertFalse(ended, "round " + round + ": the scope ended under a hold");
                    hold.close();
                    s.close();
                } else {
                    assertTrue(ended, "round " + round + ": neither won");
                }
                assertTrue(s.isClosed() && a.isClosed());
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aWorkspaceNamedByItsHandlerComposes() {
        DataMemHandler named = DataMem.handler("workspace(default_allocator):initial=64k,growth=2");
        Workspace w = (Workspace) named.allocator();
        assertEquals(new Workspace.Options(65536, 2.0), w.options());
        double sum = Workspace.call(named, () -> {
            NDArray a = NDArray.zeros(DType.FLOAT64, 1000);
            a.fill(1.5);
            return a.toDoubleArray()[999];
        });
        assertEquals(1.5, sum);
        assertEquals(65536, w.figures().regionBytes(), "the initial region sufficed");
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                () -> DataMem.handler("workspace(default_allocator):growth=0.5"));
        assertTrue(bad.getMessage().contains("growth"), bad.getMessage());
        List<NDArray> views = new ArrayList<>();
        Workspace.run(named, () -> views.add(NDArray.zeros(DType.UINT8, 3).reshape(3, 1)));
        assertSame(named, views.get(0).handler());
        assertTrue(views.get(0).isClosed());
    }
}
