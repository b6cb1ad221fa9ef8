package io.datamem.benchmarks.ucx;

import io.datamem.ucx.RemoteRegion;
import io.datamem.ucx.UcxAllocator;
import io.datamem.ucx.UcxContext;
import io.datamem.ucx.UcxEndpoint;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One transfer of {@code byteSize} bytes between two UCX contexts on loopback, each with its own
 * worker and progress thread, over {@code UCX_TLS=transport}: {@code put} and {@code get} (each
 * flushed: the bytes are at the target when the call returns) and {@code sendReceive} (a tagged
 * send whose receive, posted by a receiver thread, has completed). Time per transfer; bandwidth is
 * {@code byteSize / time}. The two contexts live in one JVM, but UCX does not know: they connect
 * through worker addresses as two processes would, over the same transports.
 *
 * <p>{@code target} says where the target's bytes live. {@code registered}: memory of an arena,
 * registered with {@code ucp_mem_map}; over {@code sm} UCX 1.13 has no transport that writes into
 * such memory of another process directly (CMA does only zero-copy, which 1.13's RMA lanes do not
 * use), so it emulates the put with active messages that the target's worker copies out.
 * {@code ucx}: a block of the {@code ucx} allocator of a context opened with
 * {@link UcxContext#SHARED_MEMORY_ALLOC_PRIO}, which the sender maps: a put is one copy by the
 * sender and needs no work at the target. Every buffer is written once before the trial, so no
 * measured transfer takes a first-touch page fault, for UCX and the baselines alike.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class UcxTransferBenchmark {

    /** Creates the state (JMH does). */
    public UcxTransferBenchmark() {
    }

    /** {@code UCX_TLS}: {@code sm} (shared memory: posix, sysv, cma) or {@code tcp}. */
    @Param({"sm", "tcp"})
    public String transport;

    /**
     * Where the target's bytes live: {@code ucx} (a block of the {@code ucx} allocator in shared
     * memory) or {@code registered} (arena memory registered with {@code ucp_mem_map}).
     */
    @Param({"ucx", "registered"})
    public String target;

    /**
     * How long, in µs, each context's progress thread polls an idle worker before it backs off
     * ({@link UcxContext.Options#progressSpin()}).
     */
    @Param({"0"})
    public String progressSpinMicros;

    /** Bytes per transfer. */
    @Param({"4096", "65536", "1048576", "16777216", "67108864", "268435456"})
    public long byteSize;

    private UcxContext a;
    private UcxContext b;
    private UcxEndpoint ab;
    private UcxEndpoint ba;
    private Arena arena;
    private MemorySegment source;
    private MemorySegment targetMemory;
    private MemorySegment received;
    private RemoteRegion region;
    private MemorySegment ucxTarget;
    private Thread receiver;
    private final AtomicLong receivedCount = new AtomicLong();
    private final java.util.concurrent.Semaphore requests = new java.util.concurrent.Semaphore(0);
    private volatile boolean stop;
    private long sent;

    /** Opens both contexts, registers the buffers, starts the receiver thread. */
    @Setup(Level.Trial)
    public void setUp() {
        UcxContext.Options o = UcxContext.Options.defaults().withTransports(transport)
                .withTimeout(Duration.ofSeconds(60)).withAllocationMethods(UcxContext.SHARED_MEMORY_ALLOC_PRIO);
        o = o.withProgressSpin(Duration.ofNanos(1000 * Long.parseLong(progressSpinMicros)));
        a = UcxContext.open(o.withName("a"));
        b = UcxContext.open(o.withName("b"));
        ab = a.connect(b.workerAddress(), "b");
        ba = b.connect(a.workerAddress(), "a");
        arena = Arena.ofShared();
        source = arena.allocate(byteSize, 4096).fill((byte) 1);
        received = arena.allocate(byteSize, 4096).fill((byte) 0);
        a.register(source);
        b.register(received);
        switch (target) {
            case "registered" -> {
                targetMemory = arena.allocate(byteSize, 4096).fill((byte) 0);
                region = b.register(targetMemory).remoteRegion();
            }
            case "ucx" -> {
                ucxTarget = UcxAllocator.of(b).malloc(byteSize);
                if (ucxTarget.equals(MemorySegment.NULL)) {
                    throw new IllegalStateException("the ucx allocator has no " + byteSize + " bytes");
                }
                targetMemory = ucxTarget.fill((byte) 0);
                region = b.export(targetMemory);
            }
            default -> throw new IllegalArgumentException("target: " + target + " (expected: ucx or registered)");
        }
        receiver = Thread.ofPlatform().daemon().start(() -> {
            long n = 0;
            while (!stop) {
                try {
                    if (!requests.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                        continue;   // blocked, not spinning: put and get run without this thread's load
                    }
                } catch (InterruptedException e) {
                    return;
                }
                ba.receive(7, received);
                receivedCount.set(++n);
            }
        });
    }

    /**
     * Stops the receiver, closes everything.
     *
     * @throws InterruptedException if interrupted
     */
    @TearDown(Level.Trial)
    public void tearDown() throws InterruptedException {
        stop = true;
        receiver.join(10_000);
        if (ucxTarget != null) {
            UcxAllocator.of(b).free(ucxTarget, byteSize);
        }
        a.close();
        b.close();
        arena.close();
    }

    /**
     * A flushed put.
     *
     * @return the source, against dead-code elimination
     */
    @Benchmark
    public MemorySegment put() {
        ab.put(source, region, 0);
        return source;
    }

    /**
     * A get.
     *
     * @return the destination
     */
    @Benchmark
    public MemorySegment get() {
        ab.get(region, 0, source);
        return source;
    }

    /**
     * A tagged send, until the receiver's receive has completed.
     *
     * @return the count of messages received
     */
    @Benchmark
    public long sendReceive() {
        long n = ++sent;
        requests.release();
        ab.send(7, source);
        while (receivedCount.get() < n) {
            Thread.onSpinWait();
        }
        return n;
    }
}
