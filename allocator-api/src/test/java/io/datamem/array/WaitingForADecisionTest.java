package io.datamem.array;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.testing.CountingAllocator;
import io.datamem.testing.Nep49SampleAllocator;
import io.datamem.testing.WithRealloc;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Threads that reach an array while a resize decides wait without keeping the virtual-thread
 * carriers busy: a resize whose realloc blocks finishes although more virtual threads than carriers
 * are waiting to read the array. (Waiters that yielded in a loop were put back on their carrier's own
 * queue, which the carrier drains before any other: the resize, woken into another queue, never ran.)
 */
class WaitingForADecisionTest {

    private final Nep49SampleAllocator sample = new Nep49SampleAllocator();
    private final CountingAllocator counting = new CountingAllocator(sample);
    private final CountDownLatch inRealloc = new CountDownLatch(1);
    private final CountDownLatch release = new CountDownLatch(1);

    /** The counting allocator, whose realloc waits for {@link #release}. */
    private final DataMemHandler blocking = DataMemHandler.of("blocking-realloc",
            new WithRealloc(counting, (ptr, oldByteSize, newByteSize) -> {
                inRealloc.countDown();
                try {
                    assertTrue(release.await(60, TimeUnit.SECONDS), "never released");
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
                return counting.realloc(ptr, oldByteSize, newByteSize);
            }));

    @Test
    void aResizeWhoseReallocBlocksFinishesWhileManyVirtualThreadsWaitToRead() throws Exception {
        int readers = 4 * Runtime.getRuntime().availableProcessors() + 8;
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch shared = new CountDownLatch(1);
        AtomicReference<NDArray> array = new AtomicReference<>();
        Thread owner = Thread.ofVirtual().start(() -> {
            try {
                NDArray a = DataMem.callWith(blocking, () -> NDArray.zeros(DType.FLOAT64, 8)).share();
                a.setDouble(5, 0);
                array.set(a);
                shared.countDown();
                a.resize(16);
                assertEquals(5.0, a.getDouble(0), "the element kept by the resize");
                a.close();
            } catch (Throwable t) {
                failure.set(t);
            }
        });
        assertTrue(shared.await(30, TimeUnit.SECONDS));
        NDArray a = array.get();
        List<Thread> waiting = new ArrayList<>();
        for (int i = 0; i < readers; i++) {
            waiting.add(Thread.ofVirtual().start(() -> {
                try {
                    for (;;) {
                        assertEquals(5.0, a.getDouble(0));
                    }
                } catch (WrongThreadException | IllegalStateException expected) {
                    // after the resize the array is the owner's again (or closed): refused, as documented
                }
            }));
        }
        assertTrue(inRealloc.await(30, TimeUnit.SECONDS), "the resize never reached realloc");
        Thread.sleep(200);   // the readers reach the claimed memory and wait for the resize to decide
        release.countDown();   // from a platform thread: the owner is woken into the carriers' shared queue
        assertTrue(owner.join(Duration.ofSeconds(30)), "the resize did not finish while " + readers
                + " virtual threads waited to read the array");
        assertNull(failure.get());
        for (Thread t : waiting) {
            assertTrue(t.join(Duration.ofSeconds(30)), "a reader never went on after the resize");
        }
        assertEquals(0, counting.liveBlocks());
        assertEquals(List.of(), sample.violations());
    }
}
