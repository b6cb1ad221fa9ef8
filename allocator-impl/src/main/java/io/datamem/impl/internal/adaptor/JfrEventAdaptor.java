package io.datamem.impl.internal.adaptor;

import io.datamem.DataMemAllocator;
import io.datamem.impl.AllocatorStack;
import io.datamem.impl.ForwardingAllocator;
import io.datamem.impl.os.OptionalModules;
import io.datamem.impl.pool.PoolingAllocator;
import io.datamem.impl.snapshot.LayerSnapshot;

import io.datamem.spi.BlockReleased;

import java.lang.foreign.MemorySegment;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.WeakHashMap;

/**
 * Emits a JDK Flight Recorder event for every operation through an upstream allocator:
 * {@code io.datamem.Allocation} (malloc, calloc, realloc: handler, operation, address, size, and for
 * realloc the previous address and size; address 0 when it failed) and {@code io.datamem.Free}
 * (handler, address, size), each with its duration and, by JFR's default for custom events, a stack
 * trace.
 *
 * <p>The events are enabled by default: they are recorded whenever a recording runs
 * ({@code -XX:StartFlightRecording}, {@code jcmd PID JFR.start}), and can be turned off or given a
 * threshold in a {@code .jfc} settings file like any event. When no recording runs, an operation
 * costs one {@code shouldCommit()} check on an event object that escape analysis removes: nothing
 * measurable. Thread-safe.
 *
 * <p>Not an API: it declares nothing a user calls, so it is configured and found by name only, the
 * handler term {@code jfr} (for example {@code DataMem.handler("default_allocator+jfr")}); the
 * events are documented in docs/observability.md.
 */
public final class JfrEventAdaptor extends ForwardingAllocator {

    private final String handlerName;

    /**
     * Wraps an upstream.
     *
     * @param upstream    the allocator whose operations become events
     * @param handlerName the name the events carry
     * @return a new adaptor
     * @throws NullPointerException  if an argument is null
     * @throws IllegalStateException if the {@code jdk.jfr} module cannot be used here (absent from a
     *                               {@code jlink} image, or not resolved on the module path: run with
     *                               {@code --add-modules jdk.jfr})
     */
    public static JfrEventAdaptor of(DataMemAllocator upstream, String handlerName) {
        return new JfrEventAdaptor(upstream, handlerName);
    }

    private JfrEventAdaptor(DataMemAllocator upstream, String handlerName) {
        super(upstream);
        this.handlerName = Objects.requireNonNull(handlerName, "handlerName");
        OptionalModules.JFR.require("the JFR adaptor");
        AllocatorStack.find(upstream, PoolingAllocator.class).ifPresent(pool -> PoolWatch.watch(handlerName, pool));
    }

    /**
     * The pools under {@code jfr} adaptors, for the periodic {@code io.datamem.PoolMemory} event:
     * held weakly, so that a pool no longer used is dropped. Loaded only once the JFR module is known
     * to be present (the constructor checks first).
     */
    private static final class PoolWatch {
        private static final Map<PoolingAllocator, String> POOLS = new WeakHashMap<>();

        static {
            jdk.jfr.FlightRecorder.addPeriodicEvent(JfrEvents.PoolMemory.class, PoolWatch::emit);
        }

        private PoolWatch() {
        }

        static synchronized void watch(String handlerName, PoolingAllocator pool) {
            POOLS.put(pool, handlerName);
        }

        /** One event per watched pool, from its memory snapshot (JFR calls this once a period). */
        private static void emit() {
            Map<PoolingAllocator, String> now;
            synchronized (PoolWatch.class) {
                now = new LinkedHashMap<>(POOLS);
            }
            for (Map.Entry<PoolingAllocator, String> e : now.entrySet()) {
                LayerSnapshot.Pool s = (LayerSnapshot.Pool) e.getKey().snapshot();
                JfrEvents.PoolMemory event = new JfrEvents.PoolMemory();
                event.handler = e.getValue();
                event.heldBytes = s.runByteSize() + s.largeByteSize();
                event.freeBytes = s.freeByteSize();
                event.largestFreeRunBytes = s.largestFreeRunByteSize();
                event.commit();
            }
        }
    }

    /**
     * The name the events carry.
     *
     * @return the handler name
     */
    public String handlerName() {
        return handlerName;
    }

    @Override
    public MemorySegment malloc(long byteSize) {
        JfrEvents.Allocation e = new JfrEvents.Allocation();
        e.begin();
        MemorySegment p = upstream().malloc(byteSize);
        if (e.shouldCommit()) {
            commit(e, "malloc", p, byteSize, 0, 0);
        }
        return p;
    }

    @Override
    public MemorySegment calloc(long count, long elementByteSize) {
        JfrEvents.Allocation e = new JfrEvents.Allocation();
        e.begin();
        MemorySegment p = upstream().calloc(count, elementByteSize);
        if (e.shouldCommit()) {
            long size = Math.multiplyHigh(count, elementByteSize) == 0 ? count * elementByteSize : -1;
            commit(e, "calloc", p, size, 0, 0);
        }
        return p;
    }

    @Override
    public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        JfrEvents.Allocation e = new JfrEvents.Allocation();
        e.begin();
        MemorySegment p;
        try {
            p = upstream().realloc(ptr, oldByteSize, newByteSize);
        } catch (RuntimeException x) {
            if (ptr.address() != 0 && BlockReleased.by(x)) {
                freed(ptr, oldByteSize);   // the guard freed the old block
            }
            throw x;
        }
        if (e.shouldCommit()) {
            commit(e, "realloc", p, newByteSize, ptr.address(), ptr.address() == 0 ? 0 : oldByteSize);
        }
        return p;
    }

    private void commit(JfrEvents.Allocation e, String operation, MemorySegment p, long byteSize,
                        long previousAddress, long previousByteSize) {
        e.handler = handlerName;
        e.operation = operation;
        e.address = p.address();
        e.byteSize = byteSize;
        e.previousAddress = previousAddress;
        e.previousByteSize = previousByteSize;
        e.commit();
    }

    @Override
    public void free(MemorySegment ptr, long byteSize) {
        JfrEvents.Free e = new JfrEvents.Free();
        e.begin();
        try {
            upstream().free(ptr, byteSize);
        } catch (RuntimeException x) {
            if (ptr.address() != 0 && BlockReleased.by(x)) {
                commit(e, ptr, byteSize);   // the guard freed the block
            }
            throw x;
        }
        if (ptr.address() != 0) {
            commit(e, ptr, byteSize);
        }
    }

    private void freed(MemorySegment ptr, long byteSize) {
        JfrEvents.Free e = new JfrEvents.Free();
        e.begin();
        commit(e, ptr, byteSize);
    }

    private void commit(JfrEvents.Free e, MemorySegment ptr, long byteSize) {
        if (e.shouldCommit()) {
            e.handler = handlerName;
            e.address = ptr.address();
            e.byteSize = byteSize;
            e.commit();
        }
    }

    @Override
    public String toString() {
        return "JfrEventAdaptor[" + upstream() + ", " + handlerName + "]";
    }
}
