package io.datamem.array;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.testing.CountingAllocator;
import io.datamem.testing.Nep49SampleAllocator;
import io.datamem.testing.WithRealloc;
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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An array's segment is made when Java code first needs it (closing the shared arena behind it is
 * what makes {@code close()} expensive). Arrays and views that never touched their memory before a
 * close or resize must behave exactly as those that did: no access to freed or moved memory, the
 * same exceptions and messages.
 */
class NDArraySegmentLifetimeTest {

    private final Nep49SampleAllocator sample = new Nep49SampleAllocator();
    private final CountingAllocator counting = new CountingAllocator(sample);
    private final DataMemHandler h = DataMemHandler.of("lifetime-test", counting);

    @AfterEach
    void noLeaksNoViolations() {
        assertEquals(List.of(), sample.violations());
        assertEquals(0, counting.liveBlocks(), "every array closed and freed");
    }

    private NDArray zeros(DType dtype, long... shape) {
        return DataMem.callWith(h, () -> NDArray.zeros(dtype, shape));
    }

    @Test
    void anArrayNeverAccessedFromJavaClosesAndFreesOnce() {
        NDArray a = zeros(DType.FLOAT64, 8);
        assertTrue(a.address() != 0, "the address needs no segment");
        a.close();
        a.close();
        assertEquals(0, counting.liveBlocks());
        assertTrue(assertThrows(IllegalStateException.class, () -> a.getDouble(0)).getMessage().contains("closed"));
        assertThrows(IllegalStateException.class, a::segment);
    }

    @Test
    void untouchedViewsOfAClosedArrayAreClosedToo() {
        NDArray a = zeros(DType.FLOAT64, 16);
        NDArray v = a.reshape(4, 4);
        NDArray ro = a.asReadOnly();
        a.close();
        assertTrue(v.isClosed());
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> v.getDouble(1, 1));
        assertEquals("NDArray[float64, shape [4, 4], handler lifetime-test, view] is closed: its memory was freed"
                + " through handler 'lifetime-test'", e.getMessage());
        // no segment of freed memory is handed out any more, not even a dead one
        IllegalStateException segment = assertThrows(IllegalStateException.class, v::segment);
        assertEquals(e.getMessage(), segment.getMessage());
        assertThrows(IllegalStateException.class, () -> ro.getDouble(3));
        assertThrows(IllegalStateException.class, () -> v.setDouble(1.0, 0, 0));
        v.close();
        ro.close();
    }

    @Test
    void untouchedViewsOfAResizedArrayAreNoLongerValid() {
        NDArray a = zeros(DType.INT32, 10);
        NDArray v = a.slice(Slice.range(0, 5));
        a.resize(20);
        assertEquals(0, a.getLong(19), "the grown part is zero");
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> v.getLong(0));
        assertEquals("NDArray[int32, shape [5], handler lifetime-test, view] is no longer valid: the owning array was"
                + " resized, which reallocated its memory", e.getMessage());
        assertTrue(v.isClosed(), "a view of reallocated memory is unusable");
        assertEquals(e.getMessage(), assertThrows(IllegalStateException.class, v::segment).getMessage());
        NDArray w = a.slice(Slice.range(10, 20));   // a view made after the resize is valid
        w.setLong(7, 0);
        assertEquals(7, a.getLong(10));
        a.close();
    }

    @Test
    void aFailedResizeStillInvalidatesUntouchedViews() {
        DataMemAllocator refusing = new WithRealloc(counting, (ptr, oldByteSize, newByteSize) -> MemorySegment.NULL);
        DataMemHandler r = DataMemHandler.of("refusing", refusing);
        NDArray a = DataMem.callWith(r, () -> NDArray.zeros(DType.INT8, 4));
        NDArray v = a.reshape(2, 2);
        assertThrows(RuntimeException.class, () -> a.resize(8));
        a.setLong(5, 3);                           // the owner keeps its memory and stays usable
        assertEquals(5, a.getLong(3));
        assertThrows(IllegalStateException.class, () -> v.getLong(1, 1), "views made before are invalid");
        a.close();
    }

    @Test
    void readOnlyViewsStayReadOnlyWhenTheirSegmentIsMadeLate() {
        NDArray a = zeros(DType.INT64, 4);
        NDArray ro = a.asReadOnly();
        assertTrue(ro.segment().isReadOnly());
        assertThrows(UnsupportedOperationException.class, () -> ro.setLong(1, 0));
        a.setLong(9, 2);
        assertEquals(9, ro.getLong(2), "the same memory");
        assertFalse(a.segment().isReadOnly());
        a.close();
    }

    @Test
    void aFirstAccessRacingWithCloseNeverReachesFreedMemory() throws Exception {
        ExecutorService exec = Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < 200; round++) {
                NDArray a = zeros(DType.INT64, 64).share();
                NDArray v = a.reshape(8, 8);
                CountDownLatch go = new CountDownLatch(1);
                List<Future<?>> fs = new ArrayList<>();
                fs.add(exec.submit(() -> {
                    go.await();
                    try {
                        for (int i = 0; i < 64; i++) {
                            v.setLong(i, i / 8, i % 8);
                        }
                    } catch (IllegalStateException closed) {
                        assertTrue(closed.getMessage().contains("closed"), closed.getMessage());
                    }
                    return null;
                }));
                fs.add(exec.submit(() -> {
                    go.await();
                    a.close();
                    return null;
                }));
                go.countDown();
                for (Future<?> f : fs) {
                    f.get(1, TimeUnit.MINUTES);
                }
                assertTrue(v.isClosed());
                assertThrows(IllegalStateException.class, () -> v.getLong(0, 0));
            }
        } finally {
            exec.shutdown();
            assertTrue(exec.awaitTermination(1, TimeUnit.MINUTES));
        }
        assertEquals(0, counting.liveBlocks());
    }
}
