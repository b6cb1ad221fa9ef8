package io.datamem.array;

import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

/**
 * The profile priming of {@code access()} leaves nothing behind and hands nothing out: its memories
 * own no block, are not registered with the thread (no leak action, nothing to free), and the
 * unshared one gives {@link ArrayMemory#ALL} to its owner only.
 */
class AccessProfileTest {

    @Test
    void primingAgainRegistersNothingAndReportsNoLeak() {
        NDArray.empty(DType.FLOAT64, 1).close();   // the class, and so the first priming, is initialised
        int registered = ThreadHome.mine().size();
        long leaks = ArrayMemory.LEAKS.get();
        AccessProfile.prime();
        AccessProfile.prime();
        assertEquals(registered, ThreadHome.mine().size(), "arrays registered with this thread");
        assertEquals(leaks, ArrayMemory.LEAKS.get(), "leaks reported");
    }

    @Test
    void theUnsharedProfileMemoryReachesAllOnItsOwnerOnly() throws InterruptedException {
        long[] shape = {1};
        long[] strides = {Double.BYTES};
        NDArray unshared = new NDArray(ArrayMemory.forProfile(Thread.currentThread()), DType.FLOAT64, true, 0, shape, strides);
        NDArray shared = new NDArray(ArrayMemory.forProfile(null), DType.FLOAT64, true, 0, shape, strides);
        assertSame(ArrayMemory.ALL, unshared.access());
        assertSame(ArrayMemory.DEAD, shared.access());
        AtomicReference<MemorySegment> seen = new AtomicReference<>();
        Thread other = Thread.ofPlatform().start(() -> seen.set(unshared.access()));
        other.join();
        assertSame(ArrayMemory.NOT_SHARED, seen.get(), "another thread's segment for unshared memory");
    }
}
