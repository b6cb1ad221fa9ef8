package io.datamem.impl.shared;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The socket transport within one process: messages, refusals, and closing. */
class IpcSocketTest extends LeakCheckedTest {


    @Test
    void aHandleTravelsWithItsDescriptorAndTheListenerFileGoesAtClose(@TempDir Path dir) {
        Path path = dir.resolve("s");
        MemorySegment block = allocator.malloc(5000).reinterpret(5000);
        IpcPeer.fill(block, 11);
        try (IpcSocket listener = IpcSocket.listen(path); IpcSocket client = IpcSocket.connect(path);
             IpcSocket server = listener.accept()) {
            assertTrue(Files.exists(path));
            client.send(SharedMemory.handleOf(block.asSlice(1000, 3000)));
            try (ImportedMemory in = server.receive()) {
                assertEquals(1000, in.handle().byteOffset());
                assertArrayEquals(block.asSlice(1000, 3000).toArray(ValueLayout.JAVA_BYTE),
                        in.segment().toArray(ValueLayout.JAVA_BYTE));
                server.send(SharedMemory.handleOf(block));   // and back the other way, on the same connection
                try (ImportedMemory back = client.receive()) {
                    assertEquals(in.address() - 1000, back.address(), "the cached mapping, once");
                }
            }
            assertThrows(IllegalStateException.class, () -> listener.send(SharedMemory.handleOf(block)),
                    "a listener does not send");
            assertThrows(IllegalStateException.class, client::accept, "a connection does not accept");
        }
        assertFalse(Files.exists(path), "the socket file is removed");
        allocator.free(block, 5000);
    }

    @Test
    void onlyLiveHandlesOfThisProcessAreSent(@TempDir Path dir) {
        Path path = dir.resolve("s");
        try (IpcSocket listener = IpcSocket.listen(path); IpcSocket client = IpcSocket.connect(path)) {
            MemorySegment block = allocator.malloc(64);
            IpcHandle h = SharedMemory.handleOf(block.reinterpret(64));
            allocator.free(block, 64);
            IllegalArgumentException freed = assertThrows(IllegalArgumentException.class, () -> client.send(h));
            assertTrue(freed.getMessage().contains("was it freed?"), freed.getMessage());
            IpcHandle foreign = new IpcHandle(h.exporterPid() + 1, h.exporterFd(), h.tagHigh(), h.tagLow(), h.inode(),
                    h.mappingByteSize(), 0, 64);
            assertTrue(assertThrows(IllegalArgumentException.class, () -> client.send(foreign)).getMessage()
                    .contains("expected: a handle of this process"));
        }
    }

    @Test
    void badPathsAndMissingListenersAreClearErrors(@TempDir Path dir) {
        Path path = dir.resolve("s");
        IpcException missing = assertThrows(IpcException.class, () -> IpcSocket.connect(path));
        assertEquals(IpcException.Reason.TRANSPORT, missing.reason());
        assertTrue(missing.getMessage().contains("ENOENT (No such file or directory)"), missing.getMessage());
        IpcException noDirectory = assertThrows(IpcException.class,
                () -> IpcSocket.listen(dir.resolve("missing").resolve("s")));
        assertTrue(noDirectory.getMessage().contains("ENOENT (No such file or directory)"), noDirectory.getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> IpcSocket.listen(dir.resolve("x".repeat(120))))
                .getMessage().contains("expected: 1 to 107 bytes"));
        try (IpcSocket listener = IpcSocket.listen(path)) {
            IpcException taken = assertThrows(IpcException.class, () -> IpcSocket.listen(path));
            assertTrue(taken.getMessage().contains("EADDRINUSE"), taken.getMessage());
            assertFalse(listener.isClosed());
        }
    }

    @Test
    void closingWakesABlockedReceiveAndAPeerCloseIsReported(@TempDir Path dir) throws Exception {
        Path path = dir.resolve("s");
        try (IpcSocket listener = IpcSocket.listen(path); IpcSocket client = IpcSocket.connect(path)) {
            IpcSocket server = listener.accept();
            CompletableFuture<ImportedMemory> waiting = CompletableFuture.supplyAsync(server::receive);
            Thread.sleep(100);
            server.close();
            ExecutionException e = assertThrows(ExecutionException.class, () -> waiting.get(10, TimeUnit.SECONDS));
            assertEquals(IpcException.Reason.TRANSPORT, assertInstanceOf(IpcException.class, e.getCause()).reason());
            IpcException closed = assertThrows(IpcException.class, client::receive);
            assertTrue(closed.getMessage().contains("the peer closed"), closed.getMessage());
            assertThrows(IllegalStateException.class, server::receive, "closed");
        }
    }
}
