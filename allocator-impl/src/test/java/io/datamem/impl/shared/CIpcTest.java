package io.datamem.impl.shared;

import io.datamem.testing.NativeToolchain;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A C program ({@code native/ipc_peer.c}, compiled with gcc here) on the other end of an
 * {@link IpcSocket}: it maps a Java block from its handle and descriptor, checks and rewrites it,
 * and sends back a block of its own (which Java maps bit-exact), an unsealed memfd and a message
 * that is not a handle (which Java refuses, closing what came with them).
 */
class CIpcTest extends LeakCheckedTest {


    @Test
    void aCProgramMapsJavaMemoryAndSendsItsOwn(@TempDir Path dir) throws Exception {
        Path gcc = NativeToolchain.gcc();
        Path source = dir.resolve("ipc_peer.c");
        try (InputStream in = CIpcTest.class.getClassLoader().getResourceAsStream("native/ipc_peer.c")) {
            assertNotNull(in, "native/ipc_peer.c");
            Files.write(source, in.readAllBytes());
        }
        Path program = dir.resolve("ipc_peer");
        NativeToolchain.Result built = NativeToolchain.run(List.of(gcc.toString(), "-std=c11", "-O1", "-Wall",
                "-Wextra", "-Werror", "-o", program.toString(), source.toString()), null);
        assertEquals(0, built.exitCode(), "gcc:\n" + built.output());

        long size = (1 << 20) + 17;
        MemorySegment block = allocator.malloc(size).reinterpret(size);
        for (long i = 0; i < size; i++) {
            block.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + 7));
        }
        Path path = dir.resolve("c.sock");
        try (IpcSocket listener = IpcSocket.listen(path)) {
            Process c = new ProcessBuilder(program.toString(), path.toString()).redirectErrorStream(true).start();
            CompletableFuture<String> output = CompletableFuture.supplyAsync(() -> {
                try {
                    return new String(c.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                } catch (java.io.IOException e) {
                    return e.toString();
                }
            });
            try (IpcSocket connection = TwoProcessIpcTest.accept(listener, c, () -> "(its output comes at exit)")) {
                connection.send(SharedMemory.handleOf(block));
                try (ImportedMemory theirs = connection.receive()) {
                    assertEquals(c.pid(), theirs.handle().exporterPid());
                    assertEquals(65541, theirs.byteSize());
                    MemorySegment s = theirs.segment();
                    for (long i = 0; i < 65541; i++) {
                        assertEquals((byte) (i * 7 + 3), s.get(ValueLayout.JAVA_BYTE, i), "byte " + i);
                    }
                }
                IpcException unsealed = assertThrows(IpcException.class, connection::receive);
                assertEquals(IpcException.Reason.MISMATCH, unsealed.reason(), unsealed.getMessage());
                assertTrue(unsealed.getMessage().contains("not sealed"), unsealed.getMessage());
                IpcException garbage = assertThrows(IpcException.class, connection::receive);
                assertEquals(IpcException.Reason.TRANSPORT, garbage.reason());
                assertTrue(garbage.getMessage().contains("received 10 bytes and 0 descriptor(s)"), garbage.getMessage());
            }
            assertTrue(c.waitFor(60, TimeUnit.SECONDS), "the C peer did not exit");
            String out = output.get(10, TimeUnit.SECONDS);
            assertEquals(0, c.exitValue(), out);
            assertTrue(out.contains("ok received " + size + " bytes from pid " + ProcessHandle.current().pid()), out);
        }
        for (long i = 0; i < size; i++) {
            if (block.get(ValueLayout.JAVA_BYTE, i) != (byte) (i * 13 + 1)) {
                throw new AssertionError("byte " + i + " was not rewritten by the C program");
            }
        }
        allocator.free(block, size);
    }
}
