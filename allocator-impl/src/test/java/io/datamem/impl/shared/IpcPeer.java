package io.datamem.impl.shared;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;

/**
 * The other process of {@link TwoProcessIpcTest}: a JVM started with the test class path. Modes:
 * <ul>
 *   <li>{@code exchange SOCKET SIZE...}: receives one handle per size over the socket and checks
 *       its bytes, writes a marker in each, then exports a block per size back, and prints the
 *       handle of one more block ({@code PIDFD HEX}, 100,000 bytes of pattern 1234) for the parent
 *       to open with pidfd_getfd (a parent may take a child's descriptors under Yama's
 *       ptrace_scope 1, not the reverse); waits for a line on stdin before freeing, and checks it
 *       left no descriptor or mapping;</li>
 *   <li>{@code hold SOCKET}: receives a handle, opens it, prints {@code HELD} and waits to be
 *       killed;</li>
 *   <li>{@code export-and-exit SOCKET SIZE}: exports a block, sends it and exits at once.</li>
 * </ul>
 * Prints {@code OK} lines and exits with 0 on success; anything else is a failure.
 */
public final class IpcPeer {

    /** The key both processes of the test seal handles with. */
    static final javax.crypto.SecretKey TEST_KEY = new javax.crypto.spec.SecretKeySpec(
            "datamem two-process IPC test key".getBytes(StandardCharsets.US_ASCII), "HmacSHA256");


    private IpcPeer() {
    }

    /** The pattern of a block: the same bytes in both processes for a seed. */
    static void fill(MemorySegment s, long seed) {
        byte[] b = SharedMemoryTest.pattern(seed, (int) s.byteSize());
        MemorySegment.copy(b, 0, s, ValueLayout.JAVA_BYTE, 0, b.length);
    }

    static boolean matches(MemorySegment s, long seed) {
        return Arrays.equals(SharedMemoryTest.pattern(seed, (int) s.byteSize()), s.toArray(ValueLayout.JAVA_BYTE));
    }

    /**
     * Runs a mode.
     *
     * @param args the mode and its arguments
     * @throws Exception on any failure (the exit code is then not 0)
     */
    public static void main(String[] args) throws Exception {
        Path socket = Path.of(args[1]);
        switch (args[0]) {
            case "exchange" -> exchange(socket, args);
            case "hold" -> {
                try (IpcSocket c = IpcSocket.connect(socket)) {
                    ImportedMemory held = c.receive();
                    System.out.println("HELD " + held.segment().get(ValueLayout.JAVA_BYTE, 0));
                    System.out.flush();
                    Thread.sleep(600_000);
                }
            }
            case "export-and-exit" -> {
                long size = Long.parseLong(args[2]);
                SharedMemoryAllocator a = SharedMemoryAllocator.of();
                MemorySegment block = a.malloc(size).reinterpret(size);
                fill(block, 77);
                try (IpcSocket c = IpcSocket.connect(socket)) {
                    c.send(SharedMemory.handleOf(block));
                }
                System.out.println("OK sent and exiting");
                System.exit(0);   // no free: the process just goes
            }
            default -> throw new IllegalArgumentException("mode: " + args[0]);
        }
    }

    private static void exchange(Path socket, String[] args) throws Exception {
        SharedFds.Snapshot before = SharedFds.Snapshot.take();
        List<Long> sizes = new ArrayList<>();
        for (int i = 2; i < args.length; i++) {
            sizes.add(Long.parseLong(args[i]));
        }
        SharedMemoryAllocator allocator = SharedMemoryAllocator.of();
        List<MemorySegment> mine = new ArrayList<>();
        try (IpcSocket c = IpcSocket.connect(socket)) {
            for (long size : sizes) {
                try (ImportedMemory in = c.receive()) {
                    if (in.byteSize() != size || !matches(in.segment(), size)) {
                        throw new AssertionError("block of " + size + " bytes differs from the exporter's pattern");
                    }
                    in.segment().set(ValueLayout.JAVA_BYTE, 0, (byte) ~in.segment().get(ValueLayout.JAVA_BYTE, 0));
                    System.out.println("OK received " + size + " bytes bit-exact from " + in.handle().exporterPid());
                }
            }
            for (long size : sizes) {
                MemorySegment block = allocator.malloc(size).reinterpret(size);
                fill(block, ~size);
                mine.add(block);
                c.send(SharedMemory.handleOf(block));
            }
            MemorySegment byPid = allocator.malloc(100_000).reinterpret(100_000);
            fill(byPid, 1234);
            mine.add(byPid);
            sizes.add(100_000L);
            System.out.println("PIDFD " + HexFormat.of().formatHex(SharedMemory.handleOf(byPid).toBytes(TEST_KEY)));
            System.out.println("OK sent " + (sizes.size() - 1) + " blocks");
            System.out.flush();
            String line = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
            if (!"done".equals(line)) {
                throw new AssertionError("expected 'done' on stdin, got " + line);
            }
        }
        for (int i = 0; i < sizes.size(); i++) {
            allocator.free(mine.get(i), sizes.get(i));
        }
        SharedFds.Snapshot after = SharedFds.Snapshot.take();
        if (!after.equals(before) || SharedMemory.importedMappings() != 0 || SharedMemory.exportedMappings() != 0) {
            throw new AssertionError("leaked: before " + before + ", after " + after + ", imported "
                    + SharedMemory.importedMappings() + ", exported " + SharedMemory.exportedMappings());
        }
        System.out.println("OK no leaks " + after);
    }
}
