package io.datamem;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Scoped bindings, the process default, and carrying bindings into other threads. */
class ScopingTest {

    private final DataMemHandler a = DataMemHandler.of("scope-a", LibcAllocator.INSTANCE);
    private final DataMemHandler b = DataMemHandler.of("scope-b", LibcAllocator.INSTANCE);

    @AfterEach
    void reset() {
        DataMem.setDefaultHandler(null);
    }

    @Test
    void bindingsNestAndAreRestoredOnExitAndOnException() {
        assertFalse(DataMem.isScoped());
        DataMem.runWith(a, () -> {
            assertSame(a, DataMem.current());
            assertTrue(DataMem.isScoped());
            DataMem.runWith(b, () -> assertSame(b, DataMem.current()));
            assertSame(a, DataMem.current());
            assertThrows(IllegalStateException.class, () -> DataMem.runWith(b, () -> {
                throw new IllegalStateException("boom");
            }));
            assertSame(a, DataMem.current());
        });
        assertSame(DataMem.builtinDefault(), DataMem.current());
    }

    @Test
    void callWithReturnsAndPropagatesCheckedExceptions() {
        assertEquals("scope-a", DataMem.callWith(a, () -> DataMem.current().name()));
        Exception e = assertThrows(Exception.class, () -> DataMem.<String, Exception>callWith(a, () -> {
            throw new java.io.IOException("io");
        }));
        assertEquals("io", e.getMessage());
    }

    @Test
    void scopedBindingWinsOverTheDefaultAndTheDefaultIsUnchanged() {
        DataMem.setDefaultHandler(b);
        DataMem.runWith(a, () -> assertSame(a, DataMem.current()));
        assertSame(b, DataMem.current());
        assertSame(b, DataMem.defaultHandler());
    }

    @Test
    void nullArgumentsAreRejected() {
        assertThrows(NullPointerException.class, () -> DataMem.runWith(null, () -> { }));
        assertThrows(NullPointerException.class, () -> DataMem.runWith(a, null));
        assertThrows(NullPointerException.class, () -> DataMem.callWith(null, () -> 1));
        assertThrows(NullPointerException.class, () -> DataMem.propagate(null));
        assertThrows(NullPointerException.class, () -> DataMem.propagating(null));
    }

    @Test
    void executorTasksSeeTheBindingOnlyThroughPropagation() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            DataMem.runWith(a, () -> {
                try {
                    String plain = pool.submit(() -> DataMem.current().name()).get();
                    assertEquals("default_allocator", plain, "a plain task does not inherit the binding");
                    Callable<String> wrapped = DataMem.propagateCall(() -> DataMem.current().name());
                    assertEquals("scope-a", pool.submit(wrapped).get());
                    CompletableFuture<String> f = new CompletableFuture<>();
                    DataMem.propagating(pool).execute(() -> f.complete(DataMem.current().name()));
                    assertEquals("scope-a", f.get(10, TimeUnit.SECONDS));
                    String[] seen = new String[1];
                    Thread t = Thread.ofVirtual().start(DataMem.propagate(() -> seen[0] = DataMem.current().name()));
                    t.join();
                    assertEquals("scope-a", seen[0], "a virtual thread sees it through propagate");
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });
            // Captured at wrap time, not at run time.
            Runnable captured = DataMem.callWith(b, () -> DataMem.propagate(() ->
                    assertSame(b, DataMem.current())));
            DataMem.runWith(a, captured);
            // Wrapped outside any binding: runs with no binding, sees the default in force when it runs.
            Runnable unbound = DataMem.propagate(() -> assertSame(a, DataMem.current()));
            DataMem.setDefaultHandler(a);
            pool.submit(unbound).get();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void setDefaultHandlerReturnsThePreviousAndNullResets() {
        assertSame(DataMem.builtinDefault(), DataMem.setDefaultHandler(a));
        assertSame(a, DataMem.setDefaultHandler(b));
        assertSame(b, DataMem.setDefaultHandler(null));
        assertSame(DataMem.builtinDefault(), DataMem.current());
    }
}
