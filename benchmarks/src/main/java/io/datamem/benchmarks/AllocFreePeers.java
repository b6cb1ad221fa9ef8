package io.datamem.benchmarks;

import com.sun.jna.Native;
import io.netty.buffer.AdaptiveByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.internal.PlatformDependent;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * One allocate + free pair of {@link #byteSize} bytes through the floor (glibc in C), raw FFM
 * downcalls, and the allocators a Java user would pick instead of datamem. Each peer runs in its
 * best configuration: Netty's allocators with thread caches for every thread (JMH's threads are
 * not Netty event-loop threads) and with {@code sun.misc.Unsafe} allowed, so that they free at
 * once.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class AllocFreePeers {

    /** Pairs per call of the C loop: the call's own cost is spread over them. */
    public static final int C_LOOP = 1000;

    /** The block size in bytes. */
    @Param({"16", "64", "256", "4096", "65536", "1048576", "16777216"})
    public long byteSize;

    private int intSize;

    /** Creates the state (JMH does). */
    public AllocFreePeers() {
    }

    /** Netty's allocators, one per process as an application would have. */
    @State(Scope.Benchmark)
    public static class Netty {

        /** Netty's pooled allocator (jemalloc-style arenas), thread caches for all threads. */
        public ByteBufAllocator pooled;
        /** Netty 4.2's adaptive allocator (size-classed magazines), caches for all threads. */
        public ByteBufAllocator adaptive;

        /** Creates the state (JMH does). */
        public Netty() {
        }

        /** Builds the allocators. */
        @Setup(Level.Trial)
        public void setUp() {
            pooled = new PooledByteBufAllocator(true, PooledByteBufAllocator.defaultNumHeapArena(),
                    PooledByteBufAllocator.defaultNumDirectArena(), PooledByteBufAllocator.defaultPageSize(),
                    PooledByteBufAllocator.defaultMaxOrder(), PooledByteBufAllocator.defaultSmallCacheSize(),
                    PooledByteBufAllocator.defaultNormalCacheSize(), true);
            adaptive = new AdaptiveByteBufAllocator(true, true);
            Notes.record("Netty", "netty-buffer " + ByteBuf.class.getPackage().getImplementationVersion()
                    + (PlatformDependent.hasUnsafe()
                    ? ", sun.misc.Unsafe in use: direct memory Netty gives back is freed at once"
                    : ", sun.misc.Unsafe not in use: direct memory Netty gives back waits for the garbage collector"));
        }
    }

    /** Checks the size fits the int-sized peers, and notes the peers' versions. */
    @Setup(Level.Trial)
    public void setUp() {
        intSize = Math.toIntExact(byteSize);
        Notes.record("JNA", "JNA " + Native.VERSION + " (native " + Native.VERSION_NATIVE + ")");
    }

    /**
     * glibc {@code malloc} + {@code free} in a C loop: the floor.
     *
     * @return failures (0)
     */
    @Benchmark
    @OperationsPerInvocation(C_LOOP)
    public long cMallocFree() {
        return NativeCalls.CBaseline.mallocFreeLoop(byteSize, C_LOOP);
    }

    /**
     * {@code malloc} + {@code free} through FFM downcalls (critical, as datamem links them).
     *
     * @return the block's address
     */
    @Benchmark
    public long ffmMallocFree() {
        MemorySegment p = NativeCalls.malloc(byteSize);
        if (p.address() == 0) {
            throw new OutOfMemoryError("malloc(" + byteSize + ")");
        }
        NativeCalls.free(p);
        return p.address();
    }

    /**
     * {@code Arena.ofConfined()}, one allocation, close. The JDK zeroes the segment.
     *
     * @return the segment's address
     */
    @Benchmark
    @Fork(jvmArgsAppend = Suite.TOUCHED_HEAP)
    public long arenaConfined() {
        try (Arena arena = Arena.ofConfined()) {
            return arena.allocate(byteSize).address();
        }
    }

    /**
     * {@code Arena.ofShared()}, one allocation, close: what an array readable from any thread
     * costs with the JDK alone. Closing a shared arena synchronises with every thread (a handshake)
     * so that none is still reading the memory. The JDK zeroes the segment.
     *
     * @return the segment's address
     */
    @Benchmark
    @Fork(jvmArgsAppend = Suite.TOUCHED_HEAP)
    public long arenaShared() {
        try (Arena arena = Arena.ofShared()) {
            return arena.allocate(byteSize).address();
        }
    }

    /**
     * {@code ByteBuffer.allocateDirect}: zeroed, freed by its cleaner after the garbage collector
     * finds it unreachable (the JDK offers no explicit free).
     *
     * @return the buffer
     */
    @Benchmark
    @Fork(jvmArgsAppend = Suite.TOUCHED_HEAP)
    public ByteBuffer byteBufferDirect() {
        return ByteBuffer.allocateDirect(intSize);
    }

    /**
     * Netty's pooled direct buffer, allocate + release.
     *
     * @param netty the allocators
     * @return the buffer's capacity
     */
    @Benchmark
    @Fork(jvmArgsAppend = Suite.TOUCHED_HEAP)
    public int nettyPooled(Netty netty) {
        ByteBuf b = netty.pooled.directBuffer(intSize, intSize);
        int c = b.capacity();
        b.release();
        return c;
    }

    /**
     * Netty's adaptive direct buffer, allocate + release.
     *
     * @param netty the allocators
     * @return the buffer's capacity
     */
    @Benchmark
    @Fork(jvmArgsAppend = Suite.TOUCHED_HEAP)
    public int nettyAdaptive(Netty netty) {
        ByteBuf b = netty.adaptive.directBuffer(intSize, intSize);
        int c = b.capacity();
        b.release();
        return c;
    }

    /**
     * JNA's {@code Native.malloc} + {@code Native.free} (JNI).
     *
     * @return the block's address
     */
    @Benchmark
    public long jnaMallocFree() {
        long p = Native.malloc(byteSize);
        if (p == 0) {
            throw new OutOfMemoryError("Native.malloc(" + byteSize + ")");
        }
        Native.free(p);
        return p;
    }
}
