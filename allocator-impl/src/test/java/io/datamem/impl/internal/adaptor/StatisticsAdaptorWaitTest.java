package io.datamem.impl.internal.adaptor;

import io.datamem.DataMem;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Updates held back by a read-out wait blocked, not in a yield loop: more virtual threads than
 * carriers waiting on one read-out leave the carriers to every other virtual thread, the read-out's
 * own included. (In a yield loop, each waiter was put back on its carrier's own queue, which the
 * carrier drains before any other, and a read-out waiting in another queue never ran again.)
 */
class StatisticsAdaptorWaitTest {

    private final StatisticsAdaptorImpl stats = StatisticsAdaptorImpl.of(DataMem.builtinDefault().allocator());

    @Test
    void virtualThreadsWaitingForAReadOutBlockAndLeaveTheCarriersFree() throws Exception {
        int waiters = 4 * Runtime.getRuntime().availableProcessors() + 8;
        List<Thread> threads = new ArrayList<>();
        CountDownLatch ran = new CountDownLatch(1);
        stats.whileHoldingUpdates(() -> {
            for (int i = 0; i < waiters; i++) {
                threads.add(Thread.ofVirtual().start(() -> stats.free(stats.malloc(64), 64)));
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            for (Thread t : threads) {
                while (t.getState() != Thread.State.BLOCKED) {
                    assertTrue(System.nanoTime() < deadline, "a waiter is " + t.getState() + ", not blocked, after 30 s:"
                            + " waiting for a read-out must not keep a carrier busy");
                    Thread.onSpinWait();
                }
            }
            Thread other = Thread.ofVirtual().start(ran::countDown);
            try {
                assertTrue(ran.await(30, TimeUnit.SECONDS), "another virtual thread did not run while "
                        + waiters + " waited for a read-out");
                other.join();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            assertEquals(0, stats.allocations(), "no update began while held (a read-out on the holding thread)");
        });
        for (Thread t : threads) {
            assertTrue(t.join(java.time.Duration.ofSeconds(30)), "a waiter never went on after the read-out");
        }
        assertEquals(waiters, stats.allocations());
        assertEquals(waiters, stats.frees());
        assertEquals(0, stats.currentBytes());
    }

    @Test
    void readOutsRacingUpdatesFromManyVirtualThreadsAlwaysFinish() throws Exception {
        // The shape of the livelock: many virtual threads whose allocations each raise the peak, so
        // that each one's update is followed by a read-out, on a machine with few carriers.
        for (int round = 0; round < 50; round++) {
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 64; t++) {
                threads.add(Thread.ofVirtual().start(() -> {
                    List<java.lang.foreign.MemorySegment> kept = new ArrayList<>();
                    for (int i = 0; i < 200; i++) {
                        kept.add(stats.malloc(100 + i));
                    }
                    for (int i = 0; i < kept.size(); i++) {
                        stats.free(kept.get(i), 100 + i);
                    }
                }));
            }
            for (Thread t : threads) {
                assertTrue(t.join(java.time.Duration.ofSeconds(60)), "round " + round + ": a thread never finished");
            }
            assertEquals(0, stats.currentBytes(), "round " + round);
        }
        assertEquals(50L * 64 * 200, stats.allocations());
    }
}
