package io.datamem.benchmarks.ucx;

import io.datamem.ucx.RemoteRegion;
import io.datamem.ucx.UcxContext;
import io.datamem.ucx.UcxEndpoint;
import io.datamem.ucx.UcxRegistration;
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

    /** Bytes per transfer. */
    @Param({"4096", "65536", "1048576", "16777216", "67108864", "268435456"})
    public long byteSize;

    private UcxContext a;
    private UcxContext b;
    private UcxEndpoint ab;
    private UcxEndpoint ba;
    private Arena arena;
    private MemorySegment source;
    private MemorySegment target;
    private MemorySegment received;
    private UcxRegistration targetRegistration;
    private RemoteRegion region;
    private Thread receiver;
    private final AtomicLong receivedCount = new AtomicLong();
    private final java.util.concurrent.Semaphore requests = new java.util.concurrent.Semaphore(0);
    private volatile boolean stop;
    private long sent;

    /** Opens both contexts, registers the buffers, starts the receiver thread. */
    @Setup(Level.Trial)
    public void setUp() {
        UcxContext.Options o = UcxContext.Options.defaults().withTransports(transport)
                .withTimeout(Duration.ofSeconds(60));
        a = UcxContext.open(o.withName("a"));
        b = UcxContext.open(o.withName("b"));
        ab = a.connect(b.workerAddress(), "b");
        ba = b.connect(a.workerAddress(), "a");
        arena = Arena.ofShared();
        source = arena.allocate(byteSize, 4096).fill((byte) 1);
        target = arena.allocate(byteSize, 4096);
        received = arena.allocate(byteSize, 4096);
        a.register(source);
        targetRegistration = b.register(target);
        b.register(received);
        region = targetRegistration.remoteRegion();
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
