package io.datamem.impl;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.impl.adaptor.GuardAdaptor;
import io.datamem.impl.adaptor.StatisticsAdaptor;
import io.datamem.impl.adaptor.TrackingAdaptor;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Several threads allocating, resizing and freeing through {@code stats+tracking+guard}, some blocks
 * freed by other threads than their allocators: every count must come out exact and nothing live.
 * With the statistics on top they count what the threads asked for; under the guard they count
 * the guard's traffic (each block with its header and red zone; each realloc a new block and a free,
 * since the guard always moves), which is just as exact.
 */
class ConcurrentStressTest {

    private static final int THREADS = 6;
    private static final int OPERATIONS = 3000;

    private record Tally(long allocations, long frees, long reallocations, long allocatedBytes, long freedBytes,
                         long reallocatedBytes, long createdBytes) {
    }

    @ParameterizedTest
    @ValueSource(strings = {"aligned64+guard+tracking+stats", "aligned64+stats+tracking+guard"})
    void countsAreExactAndNothingIsLeftLive(String name) throws Exception {
        DataMemHandler h = DataMem.createHandler(name);
        boolean statsOnTop = AllocatorStack.layers(h.allocator()).getFirst() instanceof StatisticsAdaptor;
        GuardAdaptor guard = AllocatorStack.find(h, GuardAdaptor.class).orElseThrow();
        TrackingAdaptor tracking = AllocatorStack.find(h, TrackingAdaptor.class).orElseThrow();
        StatisticsAdaptor stats = AllocatorStack.find(h, StatisticsAdaptor.class).orElseThrow();
        ConcurrentLinkedQueue<long[]> shared = new ConcurrentLinkedQueue<>(); // blocks handed to any thread
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<Tally>> results = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            long seed = t;
            results.add(pool.submit(() -> {
                start.await();
                SplittableRandom r = new SplittableRandom(seed);
                List<long[]> mine = new ArrayList<>();
                long allocations = 0;
                long frees = 0;
                long reallocations = 0;
                long allocated = 0;
                long freed = 0;
                long reallocated = 0;
                long created = 0;
                for (int i = 0; i < OPERATIONS; i++) {
                    int op = r.nextInt(10);
                    if (op < 4 || mine.isEmpty()) {
                        long size = r.nextInt(0, 5000);
                        MemorySegment p = op % 2 == 0 ? h.allocator().malloc(size) : h.allocator().calloc(size, 1);
                        if (size > 0) {
                            p.reinterpret(size).set(ValueLayout.JAVA_BYTE, size - 1, (byte) seed);
                        }
                        mine.add(new long[] {p.address(), size});
                        allocations++;
                        allocated += size;
                        created += size; // sizes of every block created: malloc, calloc and realloc
                    } else if (op < 6) {
                        long[] b = mine.get(r.nextInt(mine.size()));
                        long size = r.nextInt(0, 5000);
                        MemorySegment q = h.allocator().realloc(MemorySegment.ofAddress(b[0]), b[1], size);
                        reallocations++;
                        reallocated += size;
                        created += size;
                        if (size > b[1]) {
                            allocated += size - b[1];
                        } else {
                            freed += b[1] - size;
                        }
                        b[0] = q.address();
                        b[1] = size;
                    } else if (op < 8) {
                        long[] b = mine.remove(r.nextInt(mine.size()));
                        h.allocator().free(MemorySegment.ofAddress(b[0]), b[1]);
                        frees++;
                        freed += b[1];
                    } else if (op == 8) {
                        shared.add(mine.remove(r.nextInt(mine.size()))); // someone else frees it
                    } else {
                        long[] b = shared.poll();
                        if (b != null) {
                            h.allocator().free(MemorySegment.ofAddress(b[0]), b[1]);
                            frees++;
                            freed += b[1];
                        }
                    }
                }
                for (long[] b : mine) {
                    h.allocator().free(MemorySegment.ofAddress(b[0]), b[1]);
                    frees++;
                    freed += b[1];
                }
                return new Tally(allocations, frees, reallocations, allocated, freed, reallocated, created);
            }));
        }
        start.countDown();
        long allocations = 0;
        long frees = 0;
        long reallocations = 0;
        long allocated = 0;
        long freed = 0;
        long reallocated = 0;
        long created = 0;
        for (Future<Tally> f : results) {
            Tally t = f.get(2, TimeUnit.MINUTES);
            allocations += t.allocations();
            frees += t.frees();
            reallocations += t.reallocations();
            allocated += t.allocatedBytes();
            freed += t.freedBytes();
            reallocated += t.reallocatedBytes();
            created += t.createdBytes();
        }
        pool.shutdown();
        for (long[] b; (b = shared.poll()) != null; ) {
            h.allocator().free(MemorySegment.ofAddress(b[0]), b[1]);
            frees++;
            freed += b[1];
        }
        assertEquals(allocations, frees);
        assertEquals(List.of(), guard.check());
        assertEquals(0, guard.liveCount());
        guard.drainQuarantine(); // freed blocks wait there: under the guard, they are still live until now
        assertEquals(List.of(), guard.violations(), guard.report());
        assertEquals(0, tracking.liveAllocations().size(), tracking.leakReport());
        assertEquals(List.of(), tracking.problems());
        assertEquals(0, stats.figures().currentBytes());
        assertEquals(0, stats.figures().failures());
        if (statsOnTop) {
            assertEquals(allocations, stats.figures().allocations());
            assertEquals(frees, stats.figures().frees());
            assertEquals(reallocations, stats.figures().reallocations());
            assertEquals(allocated, stats.figures().allocatedBytes());
            assertEquals(freed, stats.figures().freedBytes());
        } else {
            long o = guard.overheadBytes();
            long blocks = allocations + reallocations;
            long bytes = created; // the size of every block created, once
            assertEquals(blocks, stats.figures().allocations());
            assertEquals(blocks, stats.figures().frees());
            assertEquals(0, stats.figures().reallocations());
            assertEquals(bytes + blocks * o, stats.figures().allocatedBytes());
            assertEquals(bytes + blocks * o, stats.figures().freedBytes());
        }
        assertEquals(stats.figures().allocations(), stats.histogram().total());
    }
}
