package io.datamem.ucx;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The second process of {@link TwoProcessTest}: connects back through {@link UcxBootstrap} and
 * obeys one-line commands on the side channel.
 */
public final class UcxPeer {

    private UcxPeer() {
    }

    /** Fills memory with a pattern that depends on every long's index and the seed. */
    static void fill(MemorySegment s, long seed) {
        long n = s.byteSize() / 8;
        for (long i = 0; i < n; i++) {
            s.setAtIndex(JAVA_LONG, i, i * 0x9E3779B97F4A7C15L ^ seed);
        }
    }

    /** The first long that differs from the pattern, or -1. */
    static long mismatch(MemorySegment s, long seed) {
        long n = s.byteSize() / 8;
        for (long i = 0; i < n; i++) {
            if (s.getAtIndex(JAVA_LONG, i) != (i * 0x9E3779B97F4A7C15L ^ seed)) {
                return i;
            }
        }
        return -1;
    }

    /**
     * Runs the peer.
     *
     * @param args UCX_TLS value, the bootstrap port
     * @throws Exception on failure (the test sees the exit code and the output)
     */
    public static void main(String[] args) throws Exception {
        UcxContext.Options o = UcxContext.Options.defaults().withTransports(args[0]).withName("peer")
                .withTimeout(Duration.ofSeconds(20));
        try (UcxContext ctx = UcxContext.open(o);
             UcxBootstrap boot = UcxBootstrap.connect(ctx, "127.0.0.1", Integer.parseInt(args[1]),
                     Duration.ofSeconds(60))) {
            DataMemAllocator alloc = UcxRegisteringAdaptor.of(DataMem.handler("aligned:64").allocator(), ctx);
            MemorySegment block = null;
            long size = 0;
            while (true) {
                String[] cmd = new String(boot.receiveBytes(), StandardCharsets.UTF_8).split(" ");
                String reply = "ok";
                switch (cmd[0]) {
                    case "serve" -> {
                        size = Long.parseLong(cmd[1]);
                        block = alloc.malloc(size).reinterpret(size);
                        fill(block, size);
                        boot.sendRegion(ctx.export(block));
                        continue;
                    }
                    case "check" -> {
                        long bad = mismatch(block, Long.parseLong(cmd[1]));
                        reply = bad < 0 ? "ok" : "mismatch at long " + bad;
                    }
                    case "send" -> {
                        long n = Long.parseLong(cmd[1]);
                        MemorySegment m = alloc.malloc(n).reinterpret(n);
                        fill(m, n + 3);
                        boot.endpoint().send(n, m);
                        alloc.free(m, n);
                    }
                    case "recv" -> {
                        long n = Long.parseLong(cmd[1]);
                        MemorySegment m = alloc.malloc(n).reinterpret(n);
                        boot.sendBytes("ready".getBytes(StandardCharsets.UTF_8));
                        long got = boot.endpoint().receive(n, m);
                        long bad = mismatch(m, n + 7);
                        reply = got == n && bad < 0 ? "ok" : "received " + got + ", mismatch at long " + bad;
                        alloc.free(m, n);
                    }
                    case "free" -> {
                        alloc.free(block, size);
                        block = null;
                        reply = "registrations " + ctx.liveRegistrations();
                    }
                    case "exit" -> {
                        boot.sendBytes("bye".getBytes(StandardCharsets.UTF_8));
                        return;
                    }
                    default -> reply = "unknown command " + cmd[0];
                }
                boot.sendBytes(reply.getBytes(StandardCharsets.UTF_8));
            }
        }
    }
}
