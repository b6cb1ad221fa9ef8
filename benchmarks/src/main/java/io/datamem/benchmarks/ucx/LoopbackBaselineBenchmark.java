package io.datamem.benchmarks.ucx;

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

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The baselines of {@link UcxTransferBenchmark}, same sizes: {@code memcpy} (one
 * {@link MemorySegment#copy}, the limit of any transfer within a machine) and a plain socket copy
 * over loopback (direct buffers, a blocking channel, a reader thread that has read every byte when
 * the call returns).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class LoopbackBaselineBenchmark {

    /** Creates the state (JMH does). */
    public LoopbackBaselineBenchmark() {
    }

    /** Bytes per transfer. */
    @Param({"4096", "65536", "1048576", "16777216", "67108864", "268435456"})
    public long byteSize;

    private Arena arena;
    private MemorySegment source;
    private MemorySegment target;
    private SocketChannel writer;
    private SocketChannel reader;
    private Thread readerThread;
    private final AtomicLong readCount = new AtomicLong();
    private final java.util.concurrent.Semaphore requests = new java.util.concurrent.Semaphore(0);
    private volatile boolean stop;
    private long written;

    /**
     * Allocates the buffers and connects the socket pair.
     *
     * @throws IOException if the sockets fail
     */
    @Setup(Level.Trial)
    public void setUp() throws IOException {
        arena = Arena.ofShared();
        source = arena.allocate(byteSize, 4096).fill((byte) 1);
        target = arena.allocate(byteSize, 4096);
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            writer = SocketChannel.open(server.getLocalAddress());
            reader = server.accept();
        }
        writer.setOption(StandardSocketOptions.TCP_NODELAY, true);
        ByteBuffer in = target.asByteBuffer();
        readerThread = Thread.ofPlatform().daemon().start(() -> {
            long n = 0;
            try {
                while (!stop) {
                    if (!requests.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                        continue;   // blocked, not spinning: memcpy runs without this thread's load
                    }
                    in.clear();
                    while (in.hasRemaining()) {
                        if (reader.read(in) < 0) {
                            return;
                        }
                    }
                    readCount.set(++n);
                }
            } catch (IOException | InterruptedException e) {
                // closed at tear-down
            }
        });
    }

    /**
     * Closes the sockets and frees the buffers.
     *
     * @throws IOException if closing fails
     * @throws InterruptedException if interrupted
     */
    @TearDown(Level.Trial)
    public void tearDown() throws IOException, InterruptedException {
        stop = true;
        writer.close();
        reader.close();
        readerThread.join(10_000);
        arena.close();
    }

    /**
     * One copy within the process.
     *
     * @return the target
     */
    @Benchmark
    public MemorySegment memcpy() {
        MemorySegment.copy(source, 0, target, 0, byteSize);
        return target;
    }

    /**
     * One message through a loopback TCP socket, read completely on the other side.
     *
     * @return the count of messages read
     * @throws IOException if the socket fails
     */
    @Benchmark
    public long socket() throws IOException {
        long n = ++written;
        requests.release();
        ByteBuffer out = source.asByteBuffer();
        while (out.hasRemaining()) {
            writer.write(out);
        }
        while (readCount.get() < n) {
            Thread.onSpinWait();
        }
        return n;
    }
}
