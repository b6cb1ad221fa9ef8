package io.datamem.array;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.buffer.BufferFlags;
import io.datamem.buffer.BufferView;
import io.datamem.testing.CountingAllocator;
import io.datamem.testing.Nep49SampleAllocator;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * How an owner's memory gets back to its allocator without a JDK {@code Cleaner}: the memory is its
 * own phantom reference, kept reachable by its creating thread's registry (see {@link ArrayMemory}).
 * Leaked arrays are freed exactly once, also when their thread has ended; closed arrays leave the
 * registries, also when another thread closed them.
 */
class ArrayReclamationTest {

    /** Frees each block at most once, and says so if asked to free one twice or one it never gave. */
    private static final class ExactlyOnce implements DataMemAllocator {
        final CountingAllocator upstream = new CountingAllocator(new Nep49SampleAllocator());
        final Set<Long> live = ConcurrentHashMap.newKeySet();
        final List<String> violations = new ArrayList<>();
        /**
         * Blocks freed by the reaper, or the cleaner that waits for a leaked array's local segment to
         * be unreachable: arrays of this allocator treated as leaks.
         */
        final java.util.concurrent.atomic.AtomicInteger reaped = new java.util.concurrent.atomic.AtomicInteger();

        @Override
        public MemorySegment malloc(long byteSize) {
            MemorySegment p = upstream.malloc(byteSize);
            live.add(p.address());
            return p;
        }

        @Override
        public MemorySegment calloc(long count, long elementByteSize) {
            MemorySegment p = upstream.calloc(count, elementByteSize);
            live.add(p.address());
            return p;
        }

        @Override
        public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void free(MemorySegment ptr, long byteSize) {
            if (!live.remove(ptr.address())) {
                synchronized (violations) {
                    violations.add("free of 0x" + Long.toHexString(ptr.address()) + ", not live");
                }
                return;
            }
            String by = Thread.currentThread().getName();
            if (by.equals("datamem-array-reaper") || by.equals("datamem-array-cleaner")) {
                reaped.incrementAndGet();
            }
            upstream.free(ptr, byteSize);
        }
    }

    private static void awaitNoLiveBlocks(ExactlyOnce a) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!a.live.isEmpty() && System.nanoTime() < deadline) {
            System.gc();
            Thread.sleep(20);
        }
    }

    @Test
    void arraysLeakedByAThreadThatHasEndedAreStillFreed() throws Exception {
        ExactlyOnce a = new ExactlyOnce();
        DataMemHandler h = DataMemHandler.of("reclaim-ended", a);
        long before = NDArray.leakCount();
        Thread t = Thread.ofPlatform().start(() -> DataMem.runWith(h, () -> {
            for (int i = 0; i < 20; i++) {
                NDArray x = NDArray.empty(DType.FLOAT64, 4);
                if (i % 2 == 0) {
                    x.setDouble(1.0, 0);   // half of them with this thread's local segment made
                }
            }
        }));
        t.join();
        awaitNoLiveBlocks(a);
        assertEquals(Set.of(), a.live, "every leaked array of the ended thread was freed");
        assertEquals(20, a.reaped.get(), "as leaks");
        assertEquals(List.of(), a.violations);
        assertTrue(NDArray.leakCount() >= before + 20);
    }

    @Test
    void arraysLeakedByVirtualThreadsAreStillFreed() throws Exception {
        ExactlyOnce a = new ExactlyOnce();
        DataMemHandler h = DataMemHandler.of("reclaim-virtual", a);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            threads.add(Thread.ofVirtual().start(() -> DataMem.runWith(h, () -> NDArray.zeros(DType.INT32, 3))));
        }
        for (Thread t : threads) {
            t.join();
        }
        awaitNoLiveBlocks(a);
        assertEquals(Set.of(), a.live);
        assertEquals(List.of(), a.violations);
    }

    /**
     * The registry copies its array into a fresh one every {@link ThreadHome#REFRESH_ADDS}
     * adds (to keep the collector's card-marking barrier off the hot path): owners registered before
     * the copies stay registered through them, and are still found and freed when leaked.
     */
    @Test
    void ownersRegisteredBeforeTheRegistryIsCopiedAreStillFreedWhenLeaked() throws Exception {
        ExactlyOnce a = new ExactlyOnce();
        DataMemHandler h = DataMemHandler.of("reclaim-refreshed", a);
        long leaksBefore = NDArray.leakCount();
        AtomicReference<String> failure = new AtomicReference<>();
        Thread t = Thread.ofPlatform().start(() -> DataMem.runWith(h, () -> {
            int before = ThreadHome.mine().size();
            List<NDArray> open = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                open.add(NDArray.empty(DType.FLOAT64, 4));
            }
            for (int i = 0; i < 3 * ThreadHome.REFRESH_ADDS + 5; i++) {
                try (NDArray x = NDArray.empty(DType.FLOAT64, 2)) {
                    x.setDouble(i, 0);
                }
            }
            int held = ThreadHome.mine().size() - before;
            if (held != 30) {
                failure.set("the registry holds " + held + " owners after the copies, not the 30 open ones");
            }
            open.clear();   // the 30 leak: only their registry entries remain
        }));
        t.join();
        assertEquals(null, failure.get());
        awaitNoLiveBlocks(a);
        assertEquals(Set.of(), a.live, "every leaked array registered before the copies was freed");
        assertEquals(30, a.reaped.get(), "as leaks, once each");
        assertEquals(List.of(), a.violations);
        assertTrue(NDArray.leakCount() >= leaksBefore + 30);
    }

    @Test
    void arraysClosedByAnotherThreadLeaveTheCreatorsRegistry() throws Exception {
        ExactlyOnce a = new ExactlyOnce();
        DataMemHandler h = DataMemHandler.of("reclaim-closed-elsewhere", a);
        int registeredBefore = ThreadHome.mine().size();
        for (int round = 0; round < 50; round++) {
            List<NDArray> made = new ArrayList<>();
            DataMem.runWith(h, () -> {
                for (int i = 0; i < 100; i++) {
                    made.add(NDArray.empty(DType.FLOAT64, 2));
                }
            });
            Thread closer = Thread.ofPlatform().start(() -> made.forEach(NDArray::close));
            closer.join();
        }
        DataMem.runWith(h, () -> NDArray.empty(DType.FLOAT64, 2).close());
        // Entries closed elsewhere are swept before the registry grows: it stays near one round's size
        assertTrue(ThreadHome.mine().size() - registeredBefore <= 200,
                "registry holds " + ThreadHome.mine().size());
        assertEquals(Set.of(), a.live, "every block was freed by its close");
        assertEquals(List.of(), a.violations);
    }

    /**
     * Arrays are closed while the garbage collector may find them unreachable (the close is the
     * last use), by their thread or another, for thousands of rounds: each block is freed once, and
     * none is counted as a leak.
     */
    @Test
    void closesRacingTheReaperFreeEachBlockOnce() throws Exception {
        ExactlyOnce a = new ExactlyOnce();
        DataMemHandler h = DataMemHandler.of("reclaim-race", a);
        AtomicReference<NDArray> handOff = new AtomicReference<>();
        Thread closer = Thread.ofPlatform().start(() -> {
            for (int i = 0; i < 5000; ) {
                NDArray x = handOff.getAndSet(null);
                if (x != null) {
                    x.close();
                    i++;
                } else {
                    Thread.onSpinWait();
                }
            }
        });
        DataMem.runWith(h, () -> {
            for (int i = 0; i < 10_000; i++) {
                NDArray x = NDArray.empty(DType.FLOAT64, 8);
                x.setDouble(i, 0);
                if (i % 2 == 0) {
                    x.close();
                } else {
                    while (!handOff.compareAndSet(null, x)) {
                        Thread.onSpinWait();
                    }
                }
                if (i % 1000 == 0) {
                    System.gc();
                }
            }
        });
        closer.join();
        NDArray.reclaim();
        assertEquals(Set.of(), a.live, "every block was freed");
        assertEquals(List.of(), a.violations, "and only once");
        assertEquals(0, a.reaped.get(), "no closed array freed as a leak");
    }

    @Test
    void anExportedArrayLeakedWithItsViewIsFreedAfterBoth() throws Exception {
        ExactlyOnce a = new ExactlyOnce();
        DataMemHandler h = DataMemHandler.of("reclaim-export", a);
        DataMem.runWith(h, () -> {
            NDArray x = NDArray.empty(DType.FLOAT64, 4);
            BufferView v = x.getBuffer(BufferFlags.FULL_RO);
            v.release();
        });
        awaitNoLiveBlocks(a);
        assertEquals(Set.of(), a.live);
        assertEquals(List.of(), a.violations);
    }
}
