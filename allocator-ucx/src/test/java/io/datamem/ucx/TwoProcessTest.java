package io.datamem.ucx;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two JVMs on loopback, over the TCP transport and over the shared-memory transports: bit-exact
 * arrays from 1 KiB to 256 MiB in both directions by get, put, send and receive; a peer killed in
 * the middle of transfers; no registration and no shared-memory file left at the end.
 */
@ParameterizedClass(name = "UCX_TLS={0}")
@ValueSource(strings = {"tcp", "sm"})
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TwoProcessTest {

    private static final long[] SIZES = {1 << 10, 64 << 10, 1 << 20, 16 << 20, 256 << 20};

    private final String transports;
    private UcxContext context;
    private Process peer;
    private UcxBootstrap boot;
    private DataMemHandler handler;
    private List<String> shmBefore;
    private Path peerLog;

    TwoProcessTest(String transports) {
        this.transports = transports;
    }

    @BeforeEach
    void start() throws IOException {
        UcxTests.assumeUcx();
        shmBefore = shmFiles();
        context = UcxContext.open(UcxContext.Options.defaults().withTransports(transports).withName("test")
                .withTimeout(Duration.ofSeconds(10)));
        handler = new DataMemHandler("aligned64+ucx(test)", 1, UcxRegisteringAdaptor.of(DataMem.handler("aligned:64").allocator(),
                context));
        peerLog = Files.createTempFile("ucx-peer", ".log");
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            List<String> cmd = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElseThrow(),
                    "--enable-native-access=ALL-UNNAMED", "-Xmx256m", "-cp", System.getProperty("java.class.path"),
                    UcxPeer.class.getName(), transports, Integer.toString(server.getLocalPort())));
            peer = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(peerLog.toFile()).start();
            boot = UcxBootstrap.accept(context, server, Duration.ofSeconds(60));
        }
    }

    @AfterEach
    void stop() throws IOException, InterruptedException {
        if (context == null) {
            return;
        }
        if (boot != null) {
            boot.close();
        }
        if (peer != null) {
            peer.destroyForcibly();
            peer.waitFor(10, TimeUnit.SECONDS);
        }
        context.sweepCache();
        assertEquals(0, context.liveRegistrations(), "registrations left: " + context);
        context.close();
        assertEquals(shmBefore, shmFiles(), "UCX shared-memory files left in /dev/shm");
        Files.deleteIfExists(peerLog);
    }

    private static List<String> shmFiles() throws IOException {
        Path shm = Path.of("/dev/shm");
        if (!Files.isDirectory(shm)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(shm)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("ucx")).sorted().toList();
        }
    }

    private String ask(String command) throws IOException {
        boot.sendBytes(command.getBytes(StandardCharsets.UTF_8));
        return new String(boot.receiveBytes(), StandardCharsets.UTF_8);
    }

    private String peerOutput() {
        try {
            return Files.readString(peerLog);
        } catch (IOException e) {
            return "(no output: " + e + ")";
        }
    }

    @Test
    void arraysTravelBitExactBothWays() throws Exception {
        for (long n : SIZES) {
            boot.sendBytes(("serve " + n).getBytes(StandardCharsets.UTF_8));
            RemoteRegion region = boot.receiveRegion();
            assertEquals(n, region.byteSize());
            try (NDArray a = DataMem.callWith(handler, () -> NDArray.empty(DType.UINT8, n))) {
                boot.endpoint().get(region, a);                                  // peer -> here
                assertEquals(-1, UcxPeer.mismatch(a.segment(), n), "get of " + n + " bytes");
                UcxPeer.fill(a.segment(), n + 1);
                boot.endpoint().put(a, region);                                  // here -> peer
                assertEquals("ok", ask("check " + (n + 1)), "put of " + n + " bytes");

                boot.sendBytes(("send " + n).getBytes(StandardCharsets.UTF_8));  // peer -> here, tagged
                boot.endpoint().receive(n, a);
                assertEquals(-1, UcxPeer.mismatch(a.segment(), n + 3), "receive of " + n + " bytes");
                assertEquals("ok", new String(boot.receiveBytes(), StandardCharsets.UTF_8));

                boot.sendBytes(("recv " + n).getBytes(StandardCharsets.UTF_8));  // here -> peer, tagged
                assertEquals("ready", new String(boot.receiveBytes(), StandardCharsets.UTF_8));
                UcxPeer.fill(a.segment(), n + 7);
                boot.endpoint().send(n, a);
                assertEquals("ok", new String(boot.receiveBytes(), StandardCharsets.UTF_8), "send of " + n + " bytes");
            }
            assertEquals("registrations 0", ask("free"), "the peer's registrations after freeing its block");
        }
        try (NDArray small = DataMem.callWith(handler, () -> NDArray.empty(DType.UINT8, 1000))) {
            boot.sendBytes("serve 1024".getBytes(StandardCharsets.UTF_8));
            RemoteRegion region = boot.receiveRegion();
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> boot.endpoint().put(small, region));
            assertTrue(e.getMessage().contains("1000 bytes and the remote region 1024 bytes"), e.getMessage());
            assertEquals("registrations 0", ask("free"));
        }
        assertEquals("bye", ask("exit"));
        assertTrue(peer.waitFor(20, TimeUnit.SECONDS), peerOutput());
        assertEquals(0, peer.exitValue(), peerOutput());
    }

    @Test
    void aPeerKilledMidTransferIsAnExceptionNotAHang() throws Exception {
        long n = 64 << 20;
        boot.sendBytes(("serve " + n).getBytes(StandardCharsets.UTF_8));
        RemoteRegion region = boot.receiveRegion();
        UcxEndpoint ep = boot.endpoint();
        try (NDArray a = DataMem.callWith(handler, () -> NDArray.empty(DType.UINT8, n))) {
            ep.get(region, a);
            Thread killer = Thread.ofPlatform().start(() -> {
                try {
                    Thread.sleep(50);
                } catch (InterruptedException e) {
                    return;
                }
                peer.destroyForcibly();
            });
            long t0 = System.nanoTime();
            RuntimeException failure = null;
            for (int i = 0; i < 10_000 && failure == null; i++) {
                try {
                    if (i % 2 == 0) {
                        ep.get(region, a);
                    } else {
                        ep.put(a, region);
                    }
                } catch (UcxException | IllegalStateException e) {
                    failure = e;
                }
            }
            killer.join();
            assertNotNull(failure, "transfers to a killed peer kept succeeding");
            assertTrue(System.nanoTime() - t0 < 30_000_000_000L, "the failure took too long");
            assertTrue(peer.waitFor(10, TimeUnit.SECONDS));
            assertTrue(failure.getMessage().contains(ep.peerName()), failure.getMessage());
            // a receive from the dead peer fails at once (its endpoint or process is known dead)
            UcxException e = assertThrows(UcxException.class, () -> ep.receive(123, a));
            assertFalse(e.timedOut(), "a dead peer is reported as such, not as a timeout: " + e.getMessage());
        }
    }

}
