package io.datamem;

import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.testing.Nep49SampleAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * NumPy's {@code numpy/_core/tests/test_mem_policy.py}, scenario by scenario, in its Java meaning.
 *
 * <p>NumPy's context-local {@code PyDataMem_SetHandler} maps to a {@link ScopedValue} binding
 * ({@link DataMem#callWith}); its process-wide default to {@link DataMem#setDefaultHandler}. One
 * deliberate difference: NumPy's {@code get_handler_name(view)} is {@code None}, ours reports the
 * base's handler (the one that will free the memory) and {@code ownsData()} is false.
 */
class MemPolicyTest {

    private Nep49SampleAllocator sample;
    private DataMemHandler secret;

    @BeforeEach
    void setUp() {
        sample = new Nep49SampleAllocator();
        secret = new DataMemHandler("secret_data_allocator", 1, sample);
        DataMem.setDefaultHandler(null);
    }

    @AfterEach
    void tearDown() {
        DataMem.setDefaultHandler(null);
        assertEquals(List.of(), sample.violations(), "every free and realloc came with the allocated size");
        assertEquals(0, sample.liveBlocks(), "the sample handler got every block back");
    }

    /** test_set_policy. */
    @Test
    void setPolicy() {
        DataMemHandler orig = DataMem.current();
        assertEquals("default_allocator", orig.name());

        NDArray a = NDArray.zeros(DType.INT64, 10);
        NDArray av = a.reshape(2, 5);               // a view: does not own its data
        assertFalse(av.ownsData());
        assertSame(av.base(), a);
        assertEquals("default_allocator", a.handler().name());
        assertEquals(1, a.handler().version());
        assertSame(a.handler(), av.handler(), "a view reports its base's handler");

        DataMemHandler previous = DataMem.setDefaultHandler(secret);
        assertSame(orig, previous, "setDefaultHandler returns the previous handler");
        NDArray b = NDArray.zeros(DType.INT64, 10);
        NDArray bv = b.reshape(2, 5);
        assertFalse(bv.ownsData());
        assertEquals("secret_data_allocator", b.handler().name());
        assertEquals(1, b.handler().version());
        assertTrue(Nep49SampleAllocator.headerText(MemorySegment.ofAddress(b.address()))
                .startsWith("originally allocated 80"), "b's data went through the sample's calloc");

        assertSame(secret, DataMem.setDefaultHandler(null), "PyDataMem_SetHandler(NULL)");
        assertEquals("default_allocator", DataMem.current().name());

        // NumPy rejects a capsule not named 'mem_handler'; the Java equivalent is the record's validation.
        assertThrows(NullPointerException.class, () -> new DataMemHandler("x", 1, null));
        a.close();
        b.close();
    }

    /** test_default_policy_singleton. */
    @Test
    void defaultPolicySingleton() {
        DataMemHandler orig = DataMem.setDefaultHandler(null);
        assertEquals("default_allocator", DataMem.current().name());
        DataMemHandler def1 = DataMem.setDefaultHandler(null);
        assertEquals("default_allocator", DataMem.current().name());
        DataMemHandler def2 = DataMem.setDefaultHandler(orig);
        assertSame(def1, def2);
        assertSame(def2, DataMem.builtinDefault());
        assertSame(DataMem.builtinDefault(), DataMem.handler("default_allocator"));
        assertSame(DataMem.builtinDefault(), DataMem.createHandler("default_allocator"));
    }

    /** test_policy_propagation: views of views. */
    @Test
    void policyPropagation() {
        DataMemHandler orig = DataMem.current();
        NDArray base = NDArray.zeros(DType.INT64, 10);
        NDArray view = base.slice(io.datamem.array.Slice.all());
        NDArray viewOfView = view.reshape(2, 5);
        assertFalse(viewOfView.ownsData());
        assertFalse(view.ownsData());
        assertTrue(base.ownsData());
        assertSame(view, viewOfView.base());
        assertSame(base, view.base());
        assertSame(orig, viewOfView.handler());
        assertSame(orig, base.handler());
        base.close();
        assertThrows(IllegalStateException.class, () -> viewOfView.getLong(0, 0), "closing the base invalidates views");
    }

    /**
     * test_context_locality: two concurrent contexts; a policy set in one is not seen by the other,
     * and the parent is unaffected by both. Virtual threads play the asyncio tasks.
     */
    @Test
    void contextLocality() throws Exception {
        DataMemHandler orig = DataMem.current();
        CountDownLatch event = new CountDownLatch(1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread t1 = Thread.ofVirtual().start(() -> DataMem.runWith(secret, () -> {
            check(failure, "secret_data_allocator", DataMem.current().name());
            event.countDown();
        }));
        Thread t2 = Thread.ofVirtual().start(() -> {
            try {
                event.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            check(failure, orig.name(), DataMem.current().name()); // not affected by the parallel context
            DataMem.runWith(secret, () -> check(failure, "secret_data_allocator", DataMem.current().name()));
        });
        t1.join();
        t2.join();
        assertNull(failure.get(), () -> String.valueOf(failure.get()));
        assertSame(orig, DataMem.current(), "the parent context is not affected by child policy changes");
    }

    /** test_thread_locality: threads do not inherit the parent's binding. */
    @Test
    void threadLocality() throws Exception {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        DataMem.runWith(secret, () -> {
            CountDownLatch event = new CountDownLatch(1);
            Thread t1 = new Thread(() -> {
                check(failure, "default_allocator", DataMem.current().name()); // not inherited
                DataMem.runWith(DataMem.builtinDefault(), event::countDown);
            });
            Thread t2 = new Thread(() -> {
                try {
                    event.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                check(failure, "default_allocator", DataMem.current().name());
            });
            t1.start();
            t2.start();
            try {
                t1.join();
                t2.join();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            assertSame(secret, DataMem.current(), "the parent thread is not affected");
        });
        assertNull(failure.get(), () -> String.valueOf(failure.get()));
    }

    /**
     * test_new_policy: run array manipulation under the sample policy, then restore; arrays made
     * before and after report their own handlers.
     */
    @Test
    void newPolicy() {
        NDArray a = NDArray.empty(DType.FLOAT64, 10);
        assertEquals("default_allocator", a.handler().name());
        DataMem.runWith(secret, () -> {
            NDArray b = NDArray.empty(DType.FLOAT64, 10);
            assertEquals("secret_data_allocator", b.handler().name());
            b.fill(1.5);
            b.resize(40);
            NDArray c = b.reshape(4, 10).transpose().copy();
            assertEquals("secret_data_allocator", c.handler().name());
            assertEquals(1.5, c.getDouble(0, 0));
            assertEquals(0.0, c.getDouble(9, 3));
            c.close();
            b.close();
        });
        NDArray c = NDArray.empty(DType.FLOAT64, 10);
        assertEquals("default_allocator", c.handler().name());
        a.close();
        c.close();
    }

    /**
     * Arrays created under a handler are freed by it after the scope ended and the default changed.
     */
    @Test
    void arraysOutliveTheirScopeAndAreFreedByTheirHandler() {
        NDArray a = DataMem.callWith(secret, () -> NDArray.zeros(DType.INT32, 1000));
        DataMem.setDefaultHandler(DataMem.builtinDefault());
        DataMem.runWith(DataMem.builtinDefault(), () -> {
            a.resize(5000);                      // realloc through secret, not the bound default
            assertEquals(1, sample.liveBlocks());
            assertEquals(20_000, sample.liveBytes());
            a.close();                           // free through secret with 20000
        });
        assertEquals(0, sample.liveBlocks());
    }

    /**
     * test_switch_owner / test_owner_is_base: foreign memory wrapped without a handler is never
     * freed by datamem; its owner frees it.
     */
    @Test
    void foreignMemoryIsNeverFreedByTheWrongAllocator() {
        AtomicBoolean ownerFreed = new AtomicBoolean();
        MemorySegment raw = io.datamem.internal.Libc.malloc(20);
        try (Arena owner = Arena.ofConfined()) {
            MemorySegment buf = raw.reinterpret(20, owner, s -> {
                io.datamem.internal.Libc.free(s);   // warn_on_free: the owner's own destructor
                ownerFreed.set(true);
            });
            NDArray a = DataMem.callWith(secret, () -> NDArray.wrap(buf, DType.UINT8, 20));
            assertNull(a.handler(), "get_handler_name(a) is None");
            assertFalse(a.ownsData());
            a.setLong(255, 19);
            a.close();                         // does not free: no handler owns it
            assertFalse(ownerFreed.get());
            assertEquals(255, buf.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 19) & 0xFF);
            assertThrows(IllegalStateException.class, () -> a.getLong(0));
        }
        assertTrue(ownerFreed.get(), "the base object freed the memory");
        assertEquals(0, sample.liveBlocks(), "the sample handler never saw the block");
    }

    /** Ownership can only be taken by naming the handler that frees: adopt. */
    @Test
    void adoptedMemoryIsFreedThroughTheNamedHandlerExactlyOnce() {
        MemorySegment block = sample.malloc(64);
        NDArray a = NDArray.adopt(secret, block, 64, DType.FLOAT64, new long[] {8}, null, 0);
        assertTrue(a.ownsData());
        assertSame(secret, a.handler());
        a.close();
        a.close();
        assertEquals(0, sample.liveBlocks());
    }

    /** Many threads each with their own scoped handler, allocating and freeing concurrently. */
    @Test
    void manyThreadsWithTheirOwnScopedHandlersKeepExactAccounting() throws Exception {
        int threads = 8;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        Nep49SampleAllocator[] allocators = new Nep49SampleAllocator[threads];
        DataMemHandler[] handlers = new DataMemHandler[threads];
        for (int i = 0; i < threads; i++) {
            allocators[i] = new Nep49SampleAllocator();
            handlers[i] = new DataMemHandler("thread-" + i, 1, allocators[i]);
        }
        CountDownLatch start = new CountDownLatch(1);
        List<Future<Integer>> results = new java.util.ArrayList<>();
        for (int i = 0; i < threads; i++) {
            DataMemHandler h = handlers[i];
            results.add(pool.submit(() -> {
                start.await();
                return DataMem.callWith(h, () -> {
                    int made = 0;
                    for (int k = 0; k < 300; k++) {
                        try (NDArray x = NDArray.zeros(DType.FLOAT32, 1 + k % 50, 7)) {
                            if (x.handler() != h || DataMem.current() != h) {
                                throw new AssertionError("saw another thread's handler");
                            }
                            x.setDouble(k, 0, 0);
                            x.resize(2 + k % 40, 7);
                            made++;
                        }
                    }
                    return made;
                });
            }));
        }
        start.countDown();
        for (Future<Integer> f : results) {
            assertEquals(300, f.get(1, TimeUnit.MINUTES));
        }
        pool.shutdown();
        for (Nep49SampleAllocator a : allocators) {
            assertEquals(List.of(), a.violations());
            assertEquals(0, a.liveBlocks());
            assertEquals(0, a.liveBytes());
        }
        assertEquals("default_allocator", DataMem.current().name());
    }

    private static void check(AtomicReference<Throwable> failure, String expected, String actual) {
        if (!expected.equals(actual)) {
            failure.compareAndSet(null, new AssertionError("expected handler " + expected + " but saw " + actual));
        }
    }
}
