package io.datamem.internal;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import org.junit.jupiter.api.Test;

import java.lang.ref.WeakReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The weak registry of built handlers: handlers and a process default set by hand are recorded,
 * each once and in order; one nothing else reaches is collected and drops out. (The handlers the
 * provider registry and {@code AllocatorStack} build are checked in allocator-impl's
 * {@code MemorySnapshotsTest}, where there are providers.)
 */
class LiveHandlersTest {

    private static long count(Object handler) {
        return LiveHandlers.live(DataMemHandler.class).stream().filter(h -> h == handler).count();
    }

    @Test
    void handlersAreRecordedOnceInOrder() {
        assertSame(DataMem.builtinDefault(), DataMem.createHandler("default_allocator"));
        assertEquals(0, count(DataMem.builtinDefault()), "the built-in singleton is not recorded: nothing to describe");
        DataMemHandler made = new DataMemHandler("live-handlers-test", 1, DataMem.builtinDefault().allocator());
        DataMemHandler other = new DataMemHandler("live-handlers-test-2", 1, DataMem.builtinDefault().allocator());
        assertSame(made, LiveHandlers.record(made));
        LiveHandlers.record(other);
        LiveHandlers.record(made);
        assertEquals(1, count(made), "recorded once");
        var live = LiveHandlers.live(DataMemHandler.class);
        assertTrue(live.indexOf(made) < live.indexOf(other), "in the order recorded: " + live);
        assertEquals(0, LiveHandlers.live(String.class).size(), "only handlers of the type asked for");
        LiveHandlers.forget(made);
        assertEquals(0, count(made), "forgotten");
        assertEquals(1, count(other), "only the one forgotten");
        LiveHandlers.forget(made);   // not recorded: ignored
        assertThrows(NullPointerException.class, () -> LiveHandlers.forget(null));
        assertThrows(NullPointerException.class, () -> LiveHandlers.record(null));
        assertThrows(NullPointerException.class, () -> LiveHandlers.live(null));
    }

    @Test
    void aDefaultSetByHandIsRecorded() {
        DataMemHandler mine = new DataMemHandler("live-handlers-default", 1, DataMem.builtinDefault().allocator());
        DataMemHandler previous = DataMem.setDefaultHandler(mine);
        try {
            assertEquals(1, count(mine));
        } finally {
            DataMem.setDefaultHandler(previous);
        }
    }

    @Test
    void aHandlerNothingReachesDropsOut() throws InterruptedException {
        WeakReference<Object> ref = new WeakReference<>(LiveHandlers.record(
                new DataMemHandler("live-handlers-gone", 1, DataMem.builtinDefault().allocator())));
        for (int i = 0; i < 100 && ref.get() != null; i++) {
            System.gc();
            Thread.sleep(10);
        }
        assertNull(ref.get(), "the registry kept the handler alive");
        assertTrue(LiveHandlers.live(DataMemHandler.class).stream().noneMatch(h -> h.name().equals("live-handlers-gone")));
    }
}
