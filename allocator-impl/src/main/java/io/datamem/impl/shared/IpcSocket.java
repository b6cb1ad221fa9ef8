package io.datamem.impl.shared;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A Unix domain socket ({@code SOCK_SEQPACKET}) that carries {@link IpcHandle}s with their
 * descriptors: each message is a handle's {@link IpcHandle#toBytes() wire form} ({@link IpcHandle#BYTES}
 * bytes) with the mapping's memfd attached as {@code SCM_RIGHTS}. This transport needs no ptrace
 * permission, and a C program can be either end (see {@code docs/ipc.md}).
 *
 * <p>A socket is a listener ({@link #listen}), which only {@link #accept}s, or a connection
 * ({@link #connect}, {@link #accept}), which {@link #send}s and {@link #receive}s in both
 * directions. {@link #close()} wakes a thread blocked in {@code accept} or {@code receive} and, for a
 * listener, removes its socket file. Sends and receives may run on different threads; two threads
 * should not receive at once.
 */
public final class IpcSocket implements AutoCloseable {

    private final int fd;
    private final Path boundPath;
    private final AtomicBoolean closed = new AtomicBoolean();

    private IpcSocket(int fd, Path boundPath) {
        this.fd = fd;
        this.boundPath = boundPath;
    }

    private static byte[] pathBytes(Path path) {
        Objects.requireNonNull(path, "path");
        byte[] bytes = path.toString().getBytes(StandardCharsets.UTF_8);
        if (bytes.length == 0 || bytes.length > Posix.SUN_PATH_MAX) {
            throw new IllegalArgumentException("path: '" + path + "' (" + bytes.length + " bytes; expected: 1 to "
                    + Posix.SUN_PATH_MAX + " bytes, the limit of sockaddr_un)");
        }
        return bytes;
    }

    private static int newSocket() {
        Posix.requireLinux();
        int fd = Posix.socket(Posix.AF_UNIX, Posix.SOCK_SEQPACKET | Posix.SOCK_CLOEXEC, 0);
        if (fd < 0) {
            throw new IpcException(IpcException.Reason.SYSTEM, "socket(AF_UNIX, SOCK_SEQPACKET) failed: "
                    + Posix.describe(fd));
        }
        return fd;
    }

    /**
     * A listener bound to a new socket file.
     *
     * @param path where to create the socket file (at most 107 bytes); it must not exist
     * @return the listener
     * @throws NullPointerException          if {@code path} is null
     * @throws IllegalArgumentException      if the path is empty or too long
     * @throws IpcException                  if the socket cannot be created, bound (the file exists:
     *                                       {@code EADDRINUSE}) or listened on ({@code SYSTEM})
     * @throws UnsupportedOperationException if this is not Linux
     */
    public static IpcSocket listen(Path path) {
        byte[] bytes = pathBytes(path);
        int fd = newSocket();
        try (Arena arena = Arena.ofConfined()) {
            int r = Posix.bind(fd, Posix.sockaddr(arena, bytes));
            if (r < 0) {
                throw new IpcException(IpcException.Reason.SYSTEM, "bind('" + path + "') failed: " + Posix.describe(r));
            }
            r = Posix.listen(fd, 16);
            if (r < 0) {
                deleteQuietly(path);
                throw new IpcException(IpcException.Reason.SYSTEM, "listen('" + path + "') failed: " + Posix.describe(r));
            }
            return new IpcSocket(fd, path);
        } catch (RuntimeException | Error e) {
            Posix.close(fd);
            throw e;
        }
    }

    /**
     * A connection to a listener.
     *
     * @param path the listener's socket file
     * @return the connection
     * @throws NullPointerException          if {@code path} is null
     * @throws IllegalArgumentException      if the path is empty or too long
     * @throws IpcException                  if the connection fails ({@code TRANSPORT}: no listener,
     *                                       refused) or no socket can be made ({@code SYSTEM})
     * @throws UnsupportedOperationException if this is not Linux
     */
    public static IpcSocket connect(Path path) {
        byte[] bytes = pathBytes(path);
        int fd = newSocket();
        try (Arena arena = Arena.ofConfined()) {
            int r = Posix.connect(fd, Posix.sockaddr(arena, bytes));
            if (r < 0) {
                throw new IpcException(IpcException.Reason.TRANSPORT, "connect('" + path + "') failed: "
                        + Posix.describe(r));
            }
            return new IpcSocket(fd, null);
        } catch (RuntimeException | Error e) {
            Posix.close(fd);
            throw e;
        }
    }

    /**
     * Waits for a connection.
     *
     * @return the connection
     * @throws IllegalStateException if this is not a listener, or is closed
     * @throws IpcException          if accepting fails ({@code TRANSPORT}), also when
     *                               {@link #close()} interrupts it
     */
    public IpcSocket accept() {
        if (boundPath == null) {
            throw new IllegalStateException(this + ": not a listener (expected: a socket made by listen)");
        }
        checkOpen();
        int c = Posix.accept(fd);
        if (c < 0) {
            throw new IpcException(IpcException.Reason.TRANSPORT, this + ": accept failed: " + Posix.describe(c)
                    + (closed.get() ? " (closed)" : ""));
        }
        return new IpcSocket(c, null);
    }

    /**
     * Sends a handle of this process with its descriptor.
     *
     * @param handle a handle {@link SharedMemory#handleOf} made in this process, whose block is live
     * @throws NullPointerException     if {@code handle} is null
     * @throws IllegalArgumentException if the handle is not of this process, or its descriptor is no
     *                                  longer the mapping it names (freed)
     * @throws IllegalStateException    if this is a listener, or is closed
     * @throws IpcException             if sending fails ({@code TRANSPORT}: the peer closed, ...)
     */
    public void send(IpcHandle handle) {
        Objects.requireNonNull(handle, "handle");
        checkConnection();
        if (handle.exporterPid() != ProcessHandle.current().pid()) {
            throw new IllegalArgumentException(handle + ": exported by process " + handle.exporterPid()
                    + " (expected: a handle of this process, " + ProcessHandle.current().pid() + ")");
        }
        String expected = "/memfd:" + Mapping.memfdName(handle.tagHigh(), handle.tagLow()) + " (deleted)";
        if (!expected.equals(Posix.fdTarget(handle.exporterFd()))) {
            throw new IllegalArgumentException(handle + ": descriptor " + handle.exporterFd() + " is not the mapping"
                    + " the handle names (expected: a live block; was it freed?)");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment data = arena.allocateFrom(JAVA_BYTE, handle.toBytes());
            MemorySegment control = arena.allocate(Posix.CMSG_SPACE_ONE_FD, 8);
            control.set(JAVA_LONG, 0, Posix.CMSG_LEN_ONE_FD);
            control.set(JAVA_INT, 8, Posix.SOL_SOCKET);
            control.set(JAVA_INT, 12, Posix.SCM_RIGHTS);
            control.set(JAVA_INT, Posix.CMSG_HEADER_BYTES, handle.exporterFd());
            MemorySegment message = message(arena, data, control);
            long n = Posix.sendmsg(fd, message, Posix.MSG_NOSIGNAL);
            if (n != IpcHandle.BYTES) {
                throw new IpcException(IpcException.Reason.TRANSPORT, this + ": sendmsg of " + handle + " failed: "
                        + (n < 0 ? Posix.describe(n) : n + " bytes sent (expected: " + IpcHandle.BYTES + ")"));
            }
        }
    }

    /** A {@code struct msghdr} with one iovec over {@code data} and {@code control}. */
    private static MemorySegment message(Arena arena, MemorySegment data, MemorySegment control) {
        MemorySegment iov = arena.allocate(16, 8);
        iov.set(ADDRESS, 0, data);
        iov.set(JAVA_LONG, 8, data.byteSize());
        MemorySegment message = arena.allocate(Posix.MSGHDR_BYTES, 8);   // zeroed: no name, flags 0
        message.set(ADDRESS, Posix.MSG_IOV, iov);
        message.set(JAVA_LONG, Posix.MSG_IOVLEN, 1);
        message.set(ADDRESS, Posix.MSG_CONTROL, control);
        message.set(JAVA_LONG, Posix.MSG_CONTROLLEN, control.byteSize());
        return message;
    }

    /**
     * Waits for a handle and opens it with the descriptor that came with it (or the cached mapping
     * of the same mapping, closing the descriptor).
     *
     * @return the block, mapped here
     * @throws IllegalStateException if this is a listener, or is closed
     * @throws IpcException          if the peer closed the connection or sent something that is not
     *                               a handle with one descriptor ({@code TRANSPORT}), or the
     *                               descriptor is not the mapping the handle names
     *                               ({@code NO_SUCH_MAPPING}, {@code MISMATCH}); any descriptor
     *                               received is closed then
     */
    public ImportedMemory receive() {
        checkConnection();
        int received = -1;
        byte[] bytes;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment data = arena.allocate(IpcHandle.BYTES + 1);   // one more: a longer message is truncated
            MemorySegment control = arena.allocate(64, 8);
            MemorySegment message = message(arena, data, control);
            long n = Posix.recvmsg(fd, message, Posix.MSG_CMSG_CLOEXEC);
            if (n < 0) {
                throw new IpcException(IpcException.Reason.TRANSPORT, this + ": recvmsg failed: " + Posix.describe(n)
                        + (closed.get() ? " (closed)" : ""));
            }
            long controlLength = message.get(JAVA_LONG, Posix.MSG_CONTROLLEN);
            int flags = message.get(JAVA_INT, Posix.MSG_FLAGS);
            int descriptors = 0;
            for (long at = 0; at + Posix.CMSG_HEADER_BYTES <= controlLength; ) {
                long length = control.get(JAVA_LONG, at);
                if (length < Posix.CMSG_HEADER_BYTES || at + length > controlLength) {
                    break;
                }
                if (control.get(JAVA_INT, at + 8) == Posix.SOL_SOCKET && control.get(JAVA_INT, at + 12) == Posix.SCM_RIGHTS) {
                    for (long p = at + Posix.CMSG_HEADER_BYTES; p + 4 <= at + length; p += 4) {
                        int got = control.get(JAVA_INT, p);
                        if (received < 0) {
                            received = got;
                        } else {
                            Posix.close(got);
                        }
                        descriptors++;
                    }
                }
                at += (length + 7) & ~7L;
            }
            if (n == 0) {
                throw new IpcException(IpcException.Reason.TRANSPORT, this + ": the peer closed the connection");
            }
            if (n != IpcHandle.BYTES || descriptors != 1 || (flags & Posix.MSG_CTRUNC) != 0) {
                throw new IpcException(IpcException.Reason.TRANSPORT, this + ": received " + n + " bytes and "
                        + descriptors + " descriptor(s)" + ((flags & Posix.MSG_CTRUNC) != 0 ? " (truncated)" : "")
                        + " (expected: " + IpcHandle.BYTES + " bytes of an IPC handle and one descriptor)");
            }
            bytes = data.asSlice(0, IpcHandle.BYTES).toArray(JAVA_BYTE);
        } catch (RuntimeException | Error e) {
            if (received >= 0) {
                Posix.close(received);
            }
            throw e;
        }
        IpcHandle handle;
        try {
            handle = IpcHandle.fromBytes(bytes);
        } catch (IllegalArgumentException e) {
            Posix.close(received);
            throw new IpcException(IpcException.Reason.TRANSPORT, this + ": received a message that is not an IPC"
                    + " handle: " + e.getMessage());
        }
        Imports.Entry e = Imports.install(handle, received, "the descriptor received with it");
        return new ImportedMemory(handle, e);
    }

    private void checkOpen() {
        if (closed.get()) {
            throw new IllegalStateException(this + " is closed");
        }
    }

    private void checkConnection() {
        checkOpen();
        if (boundPath != null) {
            throw new IllegalStateException(this + ": a listener only accepts (expected: a connection from accept"
                    + " or connect)");
        }
    }

    /**
     * Whether {@link #close()} has run.
     *
     * @return true once closed
     */
    public boolean isClosed() {
        return closed.get();
    }

    /** Shuts the socket down (waking blocked calls), closes it and removes a listener's file; idempotent. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            Posix.shutdown(fd);
            Posix.close(fd);
            if (boundPath != null) {
                deleteQuietly(boundPath);
            }
        }
    }

    private static void deleteQuietly(Path path) {
        try {
            Files.deleteIfExists(path);
        } catch (java.io.IOException | RuntimeException ignored) {
            // the file stays; a later listen on the path reports EADDRINUSE
        }
    }

    @Override
    public String toString() {
        return "IpcSocket[" + (boundPath != null ? "listening on " + boundPath : "connection") + ", fd " + fd + "]";
    }
}
