package io.datamem.benchmarks;

import io.datamem.benchmarks.report.Trace;
import com.sun.jna.Native;
import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.netty.buffer.AdaptiveByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

/**
 * The allocators a {@link Trace} is replayed against, by name: datamem's handlers, the C library
 * through FFM and through JNA, Netty's pooled and adaptive allocators (configured as in
 * {@link AllocFreePeers}), one {@code Arena.ofConfined()} per block (the JDK has no other way to
 * free one block of many), and glibc in C ({@code c}: the whole replay in {@code dmbench.c}).
 */
public final class TraceHeaps {

    /** Every allocator name, in the report's order. */
    public static final List<String> NAMES = List.of("c", "default_allocator", "aligned64", "pool(aligned64)", "ffm",
            "jna", "nettyPooled", "nettyAdaptive", "arenaConfined");

    private static final MemorySegment EVERYTHING = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

    private TraceHeaps() {
    }

    /**
     * Something that replays a trace.
     */
    public interface Replayer {

        /**
         * Replays the trace once.
         *
         * @param touch as {@link Trace#replay} takes it
         * @return a number that depends on the work done
         */
        long replay(int touch);
    }

    /**
     * A replayer of a trace against an allocator.
     *
     * @param allocator a name of {@link #NAMES}
     * @param trace     the trace
     * @return the replayer
     * @throws IllegalArgumentException if the name is unknown
     */
    public static Replayer of(String allocator, Trace trace) {
        if (allocator.equals("c")) {
            return c(trace);
        }
        Trace.Heap heap = heap(allocator, trace.window());
        return touch -> trace.replay(heap, touch);
    }

    private static Replayer c(Trace trace) {
        Arena arena = Arena.ofAuto();
        MemorySegment sizes = arena.allocateFrom(ValueLayout.JAVA_LONG, trace.sizes());
        MemorySegment slots = arena.allocateFrom(ValueLayout.JAVA_INT, trace.slots().length == 0 ? new int[1]
                : trace.slots());
        MemorySegment live = arena.allocate(ValueLayout.ADDRESS, trace.window());
        long window = trace.window();
        long steps = trace.steps();
        return touch -> {
            long failed = NativeCalls.CBaseline.trace(sizes, slots, window, steps, live, touch);
            if (failed != 0) {
                throw new OutOfMemoryError(failed + " allocations of the C replay failed");
            }
            return window + steps;
        };
    }

    static Trace.Heap heap(String allocator, int window) {
        return switch (allocator) {
            case "ffm" -> new Addresses(window) {
                @Override
                long malloc(long byteSize) {
                    return NativeCalls.malloc(byteSize).address();
                }

                @Override
                void free(long address, long byteSize) {
                    NativeCalls.free(MemorySegment.ofAddress(address));
                }
            };
            case "jna" -> new Addresses(window) {
                @Override
                long malloc(long byteSize) {
                    return Native.malloc(byteSize);
                }

                @Override
                void free(long address, long byteSize) {
                    Native.free(address);
                }
            };
            case "nettyPooled" -> new Netty(new PooledByteBufAllocator(true,
                    PooledByteBufAllocator.defaultNumHeapArena(), PooledByteBufAllocator.defaultNumDirectArena(),
                    PooledByteBufAllocator.defaultPageSize(), PooledByteBufAllocator.defaultMaxOrder(),
                    PooledByteBufAllocator.defaultSmallCacheSize(), PooledByteBufAllocator.defaultNormalCacheSize(),
                    true), window);
            case "nettyAdaptive" -> new Netty(new AdaptiveByteBufAllocator(true, true), window);
            case "arenaConfined" -> new Arenas(window);
            case "default_allocator", "aligned64", "pool(aligned64)" ->
                    new DataMemHeap(DataMem.handler(allocator).allocator(), window);
            default -> throw new IllegalArgumentException("allocator: " + allocator + " (expected one of " + NAMES + ")");
        };
    }

    private abstract static class Addresses implements Trace.Heap {
        private final long[] live;

        Addresses(int window) {
            live = new long[window];
        }

        abstract long malloc(long byteSize);

        abstract void free(long address, long byteSize);

        @Override
        public void allocate(int slot, long byteSize) {
            long p = malloc(byteSize);
            if (p == 0) {
                throw new OutOfMemoryError("malloc(" + byteSize + ")");
            }
            live[slot] = p;
        }

        @Override
        public void touch(int slot, long offset) {
            EVERYTHING.set(ValueLayout.JAVA_BYTE, live[slot] + offset, (byte) 1);
        }

        @Override
        public void free(int slot, long byteSize) {
            free(live[slot], byteSize);
        }
    }

    /**
     * A datamem allocator, its blocks kept as addresses as the FFM and JNA heaps keep theirs (a
     * segment per live block would add a heap object and a write barrier per step that the peers do
     * not pay).
     */
    private static final class DataMemHeap extends Addresses {
        private final DataMemAllocator allocator;

        DataMemHeap(DataMemAllocator allocator, int window) {
            super(window);
            this.allocator = allocator;
        }

        @Override
        long malloc(long byteSize) {
            return allocator.malloc(byteSize).address();
        }

        @Override
        void free(long address, long byteSize) {
            allocator.free(MemorySegment.ofAddress(address), byteSize);
        }
    }

    private static final class Netty implements Trace.Heap {
        private final ByteBufAllocator allocator;
        private final ByteBuf[] live;

        Netty(ByteBufAllocator allocator, int window) {
            this.allocator = allocator;
            this.live = new ByteBuf[window];
        }

        @Override
        public void allocate(int slot, long byteSize) {
            int n = Math.toIntExact(byteSize);
            live[slot] = allocator.directBuffer(n, n);
        }

        @Override
        public void touch(int slot, long offset) {
            live[slot].setByte((int) offset, 1);
        }

        @Override
        public void free(int slot, long byteSize) {
            live[slot].release();
            live[slot] = null;
        }
    }

    private static final class Arenas implements Trace.Heap {
        private final Arena[] arenas;
        private final MemorySegment[] live;

        Arenas(int window) {
            arenas = new Arena[window];
            live = new MemorySegment[window];
        }

        @Override
        public void allocate(int slot, long byteSize) {
            Arena a = Arena.ofConfined();
            arenas[slot] = a;
            live[slot] = a.allocate(byteSize);
        }

        @Override
        public void touch(int slot, long offset) {
            live[slot].set(ValueLayout.JAVA_BYTE, offset, (byte) 1);
        }

        @Override
        public void free(int slot, long byteSize) {
            arenas[slot].close();
            arenas[slot] = null;
            live[slot] = null;
        }
    }
}
