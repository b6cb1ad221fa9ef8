package io.datamem.impl.snapshot;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.impl.AllocatorStack;
import io.datamem.impl.internal.cpu.AlignedAllocator;
import org.junit.jupiter.api.Test;

import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.management.RuntimeOperationsException;
import javax.management.RuntimeMBeanException;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.ref.WeakReference;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The memory-snapshot MBean in this JVM: registered with the first handler built, it describes the
 * live instances the program allocates through (not fresh ones built from their names), forgets
 * handlers nothing reaches any more, and refuses an unknown name listing the known ones.
 */
class MemorySnapshotsTest {

    private static final MBeanServer SERVER = ManagementFactory.getPlatformMBeanServer();

    private static ObjectName name() throws Exception {
        return new ObjectName(MemorySnapshots.OBJECT_NAME);
    }

    /** The MBean, registered by the first handler built (on a thread of its own: waits for it). */
    private static ObjectName registered() throws Exception {
        DataMem.createHandler("aligned64+stats");   // in case no test built one before
        for (int i = 0; i < 200 && !SERVER.isRegistered(name()); i++) {
            Thread.sleep(50);
        }
        assertTrue(SERVER.isRegistered(name()), "registered after the first handler built");
        return name();
    }

    @Test
    void theFirstHandlerBuiltRegistersTheMBean() throws Exception {
        registered();
        assertTrue(MemorySnapshots.register(), "registering again is a no-op that says it is registered");
        assertTrue(MemorySnapshots.enabled(), "no -D" + MemorySnapshots.JMX_PROPERTY + " in this JVM");
    }

    @Test
    void aSnapshotThroughTheMBeanDescribesTheInstanceThatHoldsTheBlocks() throws Exception {
        DataMemHandler h = DataMem.createHandler("pool(aligned64)+tracking");
        DataMemAllocator a = h.allocator();
        MemorySegment b1 = a.malloc(100);
        MemorySegment b2 = a.malloc(5000);
        try {
            String[] names = (String[]) SERVER.getAttribute(registered(), "HandlerNames");
            assertTrue(Arrays.asList(names).contains("pool(aligned64)+tracking"), Arrays.toString(names));
            String json = (String) SERVER.invoke(name(), "snapshot", new Object[] {"pool(aligned64)+tracking"},
                    new String[] {String.class.getName()});
            MemorySnapshot s = MemorySnapshot.parse(json);
            assertEquals(ProcessHandle.current().pid(), s.processId());
            MemorySnapshot.Handler mine = s.handlers().stream()
                    .filter(x -> x.blocks().stream().anyMatch(l -> l.address() == b1.address()))
                    .findFirst().orElseThrow(() -> new AssertionError("no handler lists the block: " + json));
            assertEquals("pool(aligned64)+tracking", mine.name());
            assertEquals(List.of(b1.address(), b2.address()), mine.blocks().stream().map(LiveBlock::address).toList());
            assertEquals(5100, mine.liveBytes().orElseThrow());
            LayerSnapshot.Pool pool = mine.layers(LayerSnapshot.Pool.class).getFirst();
            assertEquals(2, pool.classes().stream().mapToLong(LayerSnapshot.SizeClass::usedBlocks).sum()
                    + pool.largeBlocks().size(), "the pool holds the two blocks: " + pool);
            assertTrue(pool.usedByteSize() + pool.largeByteSize() >= 5100, pool.toString());
        } finally {
            a.free(b1, 100);
            a.free(b2, 5000);
        }
    }

    @Test
    void stacksBuiltInCodeAndTheProcessDefaultAreLiveToo() {
        DataMemHandler stacked = AllocatorStack.on(AlignedAllocator.of(64)).with("tracking")
                .handler("stacked-for-snapshots-test");
        List<DataMemHandler> live = MemorySnapshots.live();
        assertTrue(live.stream().anyMatch(h -> h == stacked), "AllocatorStack's handler is listed");
        assertTrue(live.stream().anyMatch(h -> h == DataMem.defaultHandler()), "the process default is listed");
        assertEquals(live.size(), live.stream().map(System::identityHashCode).distinct().count(), "each once");
        DataMemHandler onAName = AllocatorStack.on("pool(aligned:4096)").with("stats").handler("named-leaf-test");
        List<DataMemHandler> after = MemorySnapshots.live();
        assertTrue(after.contains(onAName), "a stack built on a name is listed");
        assertTrue(after.stream().noneMatch(h -> h.name().equals("pool(aligned:4096)")),
                "the handler built for its leaf is not listed beside it: " + after);
        MemorySnapshot s = MemorySnapshots.take("stacked-for-snapshots-test");
        assertEquals(1, s.handlers().size());
        assertSame(stacked.name(), s.handlers().getFirst().name());
    }

    @Test
    void aHandlerNothingReachesIsForgotten() throws Exception {
        WeakReference<DataMemHandler> ref = new WeakReference<>(DataMem.createHandler("aligned64+tracking=full"));
        for (int i = 0; i < 100 && ref.get() != null; i++) {
            System.gc();
            Thread.sleep(10);
        }
        assertEquals(null, ref.get(), "the registry held the handler strongly");
        assertFalse(MemorySnapshots.live().stream().anyMatch(h -> h.name().equals("aligned64+tracking=full")
                && !h.equals(DataMem.handler("default_allocator"))), "a collected handler is still listed");
    }

    @Test
    void anUnknownNameIsRefusedListingTheKnownOnes() throws Exception {
        DataMemHandler kept = DataMem.createHandler("aligned64+stats");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> MemorySnapshots.take("no_such_handler"));
        assertTrue(e.getMessage().startsWith("handler: 'no_such_handler' (expected: a handler live in process "
                + ProcessHandle.current().pid() + ", one of ["), e.getMessage());
        assertTrue(e.getMessage().contains(kept.name()), e.getMessage());
        ObjectName mbean = registered();
        Exception remote = assertThrows(Exception.class, () -> SERVER.invoke(mbean, "snapshot",
                new Object[] {"no_such_handler"}, new String[] {String.class.getName()}));
        Throwable cause = remote instanceof RuntimeMBeanException r ? r.getTargetException()
                : remote instanceof RuntimeOperationsException o ? o.getTargetException() : remote;
        assertInstanceOf(IllegalArgumentException.class, cause, remote.toString());
        assertThrows(NullPointerException.class, () -> MemorySnapshots.take(null));
    }

    @Test
    void snapshotAllListsEveryLiveHandlerAndParses() throws Exception {
        DataMemHandler kept = DataMem.createHandler("aligned64+stats");
        MemorySnapshot s = MemorySnapshot.parse((String) SERVER.invoke(registered(), "snapshotAll", null, null));
        assertEquals(MemorySnapshots.live().size(), s.handlers().size(), s.summary());
        assertTrue(s.handlers().stream().anyMatch(h -> h.name().equals(kept.name())), s.summary());
    }

    @Test
    void thePropertyTurnsRegistrationOffOnlyWhenFalse() {
        assertTrue(MemorySnapshots.enabled(null));
        assertTrue(MemorySnapshots.enabled("true"));
        assertTrue(MemorySnapshots.enabled(""));
        assertFalse(MemorySnapshots.enabled("false"));
        assertFalse(MemorySnapshots.enabled(" FALSE "));
    }
}
