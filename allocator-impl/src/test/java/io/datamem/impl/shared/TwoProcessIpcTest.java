package io.datamem.impl.shared;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two JVMs exchanging arrays through IPC handles (this one and an {@link IpcPeer} started with the
 * same java and class path): bit-exact in both directions up to 64 MiB, over SCM_RIGHTS and
 * pidfd_getfd; an importer killed while it holds a mapping; an exporter that exits while an
 * importer holds one. Neither process leaks a descriptor or a mapping.
 */
class TwoProcessIpcTest extends LeakCheckedTest {


    /** A started peer whose output lines are collected. */
    private static final class Peer implements AutoCloseable {
        final Process process;
        final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        final StringBuffer output = new StringBuffer();

        Peer(String... args) throws IOException {
            List<String> command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElseThrow(),
                    "--enable-native-access=ALL-UNNAMED", "-Xmx256m", "-cp", System.getProperty("java.class.path"),
                    IpcPeer.class.getName()));
            command.addAll(List.of(args));
            process = new ProcessBuilder(command).redirectErrorStream(true).start();
            Thread reader = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    for (String line; (line = r.readLine()) != null; ) {
                        output.append(line).append('\n');
                        lines.add(line);
                    }
                } catch (IOException ignored) {
                    // the process ended
                }
            });
            reader.setDaemon(true);
            reader.start();
        }

        String awaitLine(String prefix) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (System.nanoTime() < deadline) {
                String line = lines.poll(1, TimeUnit.SECONDS);
                if (line != null && line.startsWith(prefix)) {
                    return line;
                }
                if (line == null && !process.isAlive() && lines.isEmpty()) {
                    break;
                }
            }
            throw new AssertionError("the peer printed no line starting with " + prefix + ":\n" + output);
        }

        int awaitExit() throws InterruptedException {
            assertTrue(process.waitFor(120, TimeUnit.SECONDS), "the peer did not exit:\n" + output);
            return process.exitValue();
        }

        @Override
        public void close() {
            process.destroyForcibly();
        }
    }

    /** Accepts a connection, or fails if the peer dies first (closing the listener wakes accept). */
    private static IpcSocket accept(IpcSocket listener, Peer peer) {
        return accept(listener, peer.process, peer.output::toString);
    }

    /** Accepts a connection from a process, or fails if it exits first. */
    static IpcSocket accept(IpcSocket listener, Process process, java.util.function.Supplier<String> output) {
        Thread watchdog = Thread.ofVirtual().start(() -> {
            try {
                while (true) {
                    if (process.waitFor(200, TimeUnit.MILLISECONDS)) {
                        listener.close();
                        return;
                    }
                }
            } catch (InterruptedException e) {
                // accepted
            }
        });
        try {
            return listener.accept();
        } catch (IpcException e) {
            throw new AssertionError("no connection from the peer:\n" + output.get(), e);
        } finally {
            watchdog.interrupt();
        }
    }

    @Test
    void twoJvmsExchangeArraysBitExactInBothDirections(@TempDir Path dir) throws Exception {
        long[] sizes = {1, 4097, (1 << 20) + 3, 64L << 20};
        List<MemorySegment> blocks = new ArrayList<>();
        for (long size : sizes) {
            MemorySegment b = allocator.malloc(size).reinterpret(size);
            IpcPeer.fill(b, size);
            blocks.add(b);
        }
        Path path = dir.resolve("ipc.sock");
        List<String> args = new ArrayList<>(List.of("exchange", path.toString()));
        for (long size : sizes) {
            args.add(Long.toString(size));
        }
        try (IpcSocket listener = IpcSocket.listen(path); Peer peer = new Peer(args.toArray(String[]::new));
             IpcSocket connection = accept(listener, peer)) {
            for (MemorySegment b : blocks) {
                connection.send(SharedMemory.handleOf(b));
            }
            List<ImportedMemory> theirs = new ArrayList<>();
            try {
                for (long size : sizes) {
                    ImportedMemory in = connection.receive();
                    theirs.add(in);
                    assertEquals(size, in.byteSize());
                    assertTrue(IpcPeer.matches(in.segment(), ~size), "the peer's block of " + size
                            + " bytes, bit-exact");
                    assertTrue(in.handle().exporterPid() == peer.process.pid());
                }
            } finally {
                theirs.forEach(ImportedMemory::close);
            }
            byte[] sealed = HexFormat.of().parseHex(peer.awaitLine("PIDFD ").substring(6));
            byte[] unsealed = java.util.Arrays.copyOf(sealed, IpcHandle.BYTES);
            unsealed[4] = 1;   // the same fields in the unsealed form: refused before pidfd_getfd
            assertTrue(assertThrows(IllegalArgumentException.class,
                    () -> SharedMemory.open(IpcHandle.fromBytes(unsealed))).getMessage().contains("unsealed"));
            IpcHandle byPid = IpcHandle.fromBytes(sealed, IpcPeer.TEST_KEY);
            try (ImportedMemory in = SharedMemory.open(byPid)) {
                assertTrue(IpcPeer.matches(in.segment(), 1234), "the block opened with pidfd_getfd, bit-exact");
            } catch (IpcException e) {
                // only where the kernel forbids even a parent to take its child's descriptors (Yama's
                // ptrace_scope 2 or 3 without CAP_SYS_PTRACE): then the refusal must be the clear one
                assertEquals(IpcException.Reason.NOT_PERMITTED, e.reason(), e.getMessage());
                assertTrue(e.getMessage().contains("ptrace"), e.getMessage());
                System.out.println("pidfd_getfd refused as expected where ptrace is not allowed: " + e.getMessage());
            }
            peer.awaitLine("OK sent");
            try (OutputStream stdin = peer.process.getOutputStream()) {
                stdin.write("done\n".getBytes(StandardCharsets.UTF_8));
            }
            assertEquals(0, peer.awaitExit(), peer.output.toString());
            String out = peer.output.toString();
            assertTrue(out.contains("OK received 67108864 bytes bit-exact"), out);
            assertTrue(out.contains("OK no leaks"), out);
        }
        for (int i = 0; i < sizes.length; i++) {
            MemorySegment b = blocks.get(i);
            byte[] expected = SharedMemoryTest.pattern(sizes[i], (int) sizes[i]);
            expected[0] = (byte) ~expected[0];   // the peer's write through its mapping
            assertArrayEquals(expected, b.toArray(ValueLayout.JAVA_BYTE), "block of " + sizes[i] + " bytes");
            allocator.free(b, sizes[i]);
        }
        assertEquals(0, SharedMemory.importedMappings());
    }

    @Test
    void aKilledImporterLeavesTheExporterUnharmed(@TempDir Path dir) throws Exception {
        long size = 1 << 20;
        MemorySegment block = allocator.malloc(size).reinterpret(size);
        IpcPeer.fill(block, 9);
        Path path = dir.resolve("ipc.sock");
        try (IpcSocket listener = IpcSocket.listen(path); Peer peer = new Peer("hold", path.toString());
             IpcSocket connection = accept(listener, peer)) {
            IpcHandle h = SharedMemory.handleOf(block);
            connection.send(h);
            assertNotNull(peer.awaitLine("HELD"));
            peer.process.destroyForcibly();
            assertEquals(137, peer.awaitExit(), "killed with SIGKILL");
            assertTrue(IpcPeer.matches(block, 9), "the exporter's bytes are intact");
            block.fill((byte) 1);   // and still its own to write
            IpcException e = assertThrows(IpcException.class, () -> connection.send(h));
            assertEquals(IpcException.Reason.TRANSPORT, e.reason(), e.getMessage());
            assertTrue(e.getMessage().contains("EPIPE") || e.getMessage().contains("ECONNRESET"), e.getMessage());
        }
        allocator.free(block, size);
    }

    @Test
    void anImporterKeepsTheBytesOfAnExporterThatExited(@TempDir Path dir) throws Exception {
        Path path = dir.resolve("ipc.sock");
        try (IpcSocket listener = IpcSocket.listen(path); Peer peer = new Peer("export-and-exit", path.toString(),
                "1048576"); IpcSocket connection = accept(listener, peer)) {
            IpcHandle h;
            try (ImportedMemory in = connection.receive()) {
                h = in.handle();
                assertEquals(0, peer.awaitExit(), peer.output.toString());
                assertTrue(IpcPeer.matches(in.segment(), 77), "the pages outlive their exporter");
                try (ImportedMemory again = SharedMemory.open(h)) {
                    assertEquals(in.address(), again.address(), "a cached mapping needs no exporter");
                }
            }
            // the handle came in a message: its pid and descriptor are the sender's claims, so once
            // its mapping is unmapped here it is not taken to the kernel
            IllegalArgumentException unsealed = assertThrows(IllegalArgumentException.class,
                    () -> SharedMemory.open(h));
            assertTrue(unsealed.getMessage().contains("unsealed"), unsealed.getMessage());
            IpcException gone = assertThrows(IpcException.class,
                    () -> SharedMemory.open(IpcHandle.fromBytes(h.toBytes(IpcPeer.TEST_KEY), IpcPeer.TEST_KEY)));
            assertEquals(IpcException.Reason.EXPORTER_GONE, gone.reason(), gone.getMessage());
            assertEquals(IpcException.Reason.TRANSPORT,
                    assertThrows(IpcException.class, connection::receive).reason(), "the peer closed");
        }
    }
}
