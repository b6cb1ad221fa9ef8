package io.datamem.impl.shared;

import io.datamem.impl.os.LinuxMemory;
import io.datamem.internal.Libc;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * The libc and system calls of shared memory and its transports, each returning {@code -errno} on
 * failure (never throwing for a native error). Linux only ({@code memfd_create},
 * {@code pidfd_open}, {@code pidfd_getfd}); the struct layouts are those of LP64 Linux (x86-64 and
 * AArch64 agree on every field used here).
 */
final class Posix {

    static final int MFD_CLOEXEC = 0x1;
    static final int MFD_ALLOW_SEALING = 0x2;
    static final int F_ADD_SEALS = 1033;
    static final int F_GET_SEALS = 1034;
    static final int F_SEAL_SEAL = 0x1;
    static final int F_SEAL_SHRINK = 0x2;
    static final int F_SEAL_GROW = 0x4;
    static final int PROT_READ_WRITE = 0x3;
    static final int MAP_SHARED = 0x01;
    static final int SEEK_END = 2;
    static final int AF_UNIX = 1;
    static final int SOCK_SEQPACKET = 5;
    static final int SOCK_CLOEXEC = 0x80000;
    static final int SOL_SOCKET = 1;
    static final int SCM_RIGHTS = 1;
    static final int MSG_NOSIGNAL = 0x4000;
    static final int MSG_CTRUNC = 0x8;
    static final int MSG_CMSG_CLOEXEC = 0x40000000;
    static final int ESRCH = 3;
    static final int EINTR = 4;
    static final int EBADF = 9;
    static final int EACCES = 13;

    /** {@code struct msghdr}: 56 bytes on LP64. */
    static final long MSGHDR_BYTES = 56;
    static final long MSG_IOV = 16;
    static final long MSG_IOVLEN = 24;
    static final long MSG_CONTROL = 32;
    static final long MSG_CONTROLLEN = 40;
    static final long MSG_FLAGS = 48;
    /** {@code struct cmsghdr} header: {@code size_t cmsg_len; int cmsg_level; int cmsg_type;}. */
    static final long CMSG_HEADER_BYTES = 16;
    /** {@code CMSG_SPACE(sizeof(int))}: the header, 4 bytes of data, padded to 8. */
    static final long CMSG_SPACE_ONE_FD = 24;
    /** {@code CMSG_LEN(sizeof(int))}. */
    static final long CMSG_LEN_ONE_FD = 20;
    /** {@code struct sockaddr_un}: a 2-byte family and 108 bytes of path. */
    static final int SOCKADDR_UN_BYTES = 110;
    static final int SUN_PATH_MAX = 107;
    /** {@code struct stat}: 144 bytes on x86-64, 128 on AArch64; {@code st_ino} at 8 on both. */
    static final long STAT_BYTES = 256;
    static final long STAT_INO = 8;

    private static final long SYS_PIDFD_OPEN = 434;   // the same number on every architecture
    private static final long SYS_PIDFD_GETFD = 438;

    private static final boolean LINUX = LinuxMemory.supported();

    private static final MethodHandle MEMFD_CREATE = bind("memfd_create", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle FTRUNCATE = bind("ftruncate", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG));
    private static final MethodHandle FCNTL = variadic("fcntl", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT), 2);
    private static final MethodHandle MMAP = bind("mmap",
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG));
    private static final MethodHandle MUNMAP = bind("munmap", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle CLOSE = bind("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle LSEEK = bind("lseek", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT));
    private static final MethodHandle FSTAT = bind("fstat", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
    private static final MethodHandle READLINK = bind("readlink", FunctionDescriptor.of(JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG));
    private static final MethodHandle SYSCALL2 = variadic("syscall",
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG), 1);
    private static final MethodHandle SYSCALL3 = variadic("syscall",
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG), 1);
    private static final MethodHandle SOCKET = bind("socket", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle BIND = bind("bind", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle LISTEN = bind("listen", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle ACCEPT4 = bind("accept4",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
    private static final MethodHandle CONNECT = bind("connect", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle SENDMSG = bind("sendmsg", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle RECVMSG = bind("recvmsg", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle SHUTDOWN = bind("shutdown", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));

    private Posix() {
    }

    private static MethodHandle bind(String name, FunctionDescriptor descriptor) {
        return LINUX ? LinuxMemory.downcallCapturingErrno(Libc.symbol(name), descriptor) : null;
    }

    private static MethodHandle variadic(String name, FunctionDescriptor descriptor, int firstVariadic) {
        return LINUX ? Linker.nativeLinker().downcallHandle(Libc.symbol(name), descriptor,
                Linker.Option.captureCallState("errno"), Linker.Option.firstVariadicArg(firstVariadic)) : null;
    }

    static boolean supported() {
        return LINUX;
    }

    static void requireLinux() {
        if (!LINUX) {
            throw new UnsupportedOperationException("shared memory with IPC handles needs Linux (memfd_create);"
                    + " this is " + System.getProperty("os.name"));
        }
    }

    private static long fail(MemorySegment capture) {
        return -LinuxMemory.errno(capture);
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            throw r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        throw new IllegalStateException(t);
    }

    /** {@code memfd_create(name, flags)}: the descriptor or {@code -errno}. */
    static int memfdCreate(String name, int flags) {
        requireLinux();
        MemorySegment capture = LinuxMemory.errnoCapture();
        try (Arena arena = Arena.ofConfined()) {
            int fd = (int) MEMFD_CREATE.invokeExact(capture, arena.allocateFrom(name), flags);
            return fd < 0 ? (int) fail(capture) : fd;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int ftruncate(int fd, long length) {
        MemorySegment capture = LinuxMemory.errnoCapture();
        try {
            int r = (int) FTRUNCATE.invokeExact(capture, fd, length);
            return r < 0 ? (int) fail(capture) : r;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code fcntl(fd, cmd, arg)}: the result or {@code -errno}. */
    static int fcntl(int fd, int cmd, int arg) {
        MemorySegment capture = LinuxMemory.errnoCapture();
        try {
            int r = (int) FCNTL.invokeExact(capture, fd, cmd, arg);
            return r < 0 ? (int) fail(capture) : r;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code mmap(NULL, length, PROT_READ|PROT_WRITE, MAP_SHARED, fd, 0)}: the address or {@code -errno}. */
    static long mapShared(int fd, long length) {
        MemorySegment capture = LinuxMemory.errnoCapture();
        try {
            long r = (long) MMAP.invokeExact(capture, 0L, length, PROT_READ_WRITE, MAP_SHARED, fd, 0L);
            return r == -1 ? fail(capture) : r;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int munmap(long address, long length) {
        MemorySegment capture = LinuxMemory.errnoCapture();
        try {
            int r = (int) MUNMAP.invokeExact(capture, address, length);
            return r < 0 ? (int) fail(capture) : r;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int close(int fd) {
        MemorySegment capture = LinuxMemory.errnoCapture();
        try {
            int r = (int) CLOSE.invokeExact(capture, fd);
            return r < 0 ? (int) fail(capture) : r;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** The size of the file behind {@code fd} ({@code lseek(fd, 0, SEEK_END)}), or {@code -errno}. */
    static long fileSize(int fd) {
        MemorySegment capture = LinuxMemory.errnoCapture();
        try {
            long r = (long) LSEEK.invokeExact(capture, fd, 0L, SEEK_END);
            return r < 0 ? fail(capture) : r;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** The inode number of the file behind {@code fd}, or {@code -errno}. */
    static long inode(int fd) {
        MemorySegment capture = LinuxMemory.errnoCapture();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment stat = arena.allocate(STAT_BYTES, 8);
            int r = (int) FSTAT.invokeExact(capture, fd, stat);
            return r < 0 ? fail(capture) : stat.get(JAVA_LONG, STAT_INO);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** What {@code /proc/self/fd/FD} links to, or null if it cannot be read. */
    static String fdTarget(int fd) {
        MemorySegment capture = LinuxMemory.errnoCapture();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buffer = arena.allocate(512);
            long n = (long) READLINK.invokeExact(capture, arena.allocateFrom("/proc/self/fd/" + fd), buffer, 511L);
            if (n < 0) {
                return null;
            }
            return new String(buffer.asSlice(0, n).toArray(JAVA_BYTE), StandardCharsets.UTF_8);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code pidfd_open(pid, 0)}: a pidfd or {@code -errno}. */
    static int pidfdOpen(long pid) {
        requireLinux();
        MemorySegment capture = LinuxMemory.errnoCapture();
        try {
            long r = (long) SYSCALL2.invokeExact(capture, SYS_PIDFD_OPEN, pid, 0L);
            return r < 0 ? (int) fail(capture) : (int) r;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code pidfd_getfd(pidfd, targetFd, 0)}: a new descriptor (close-on-exec) or {@code -errno}. */
    static int pidfdGetfd(int pidfd, int targetFd) {
        MemorySegment capture = LinuxMemory.errnoCapture();
        try {
            long r = (long) SYSCALL3.invokeExact(capture, SYS_PIDFD_GETFD, (long) pidfd, (long) targetFd, 0L);
            return r < 0 ? (int) fail(capture) : (int) r;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int socket(int domain, int type, int protocol) {
        requireLinux();
        MemorySegment capture = LinuxMemory.errnoCapture();
        try {
            int r = (int) SOCKET.invokeExact(capture, domain, type, protocol);
            return r < 0 ? (int) fail(capture) : r;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** A {@code struct sockaddr_un} for a path (the caller checked its length). */
    static MemorySegment sockaddr(Arena arena, byte[] path) {
        MemorySegment address = arena.allocate(SOCKADDR_UN_BYTES, 2);
        address.set(JAVA_SHORT, 0, (short) AF_UNIX);
        MemorySegment.copy(path, 0, address, JAVA_BYTE, 2, path.length);
        return address;
    }

    static int bind(int fd, MemorySegment sockaddr) {
        MemorySegment capture = LinuxMemory.errnoCapture();
        try {
            int r = (int) BIND.invokeExact(capture, fd, sockaddr, SOCKADDR_UN_BYTES);
            return r < 0 ? (int) fail(capture) : r;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int listen(int fd, int backlog) {
        MemorySegment capture = LinuxMemory.errnoCapture();
        try {
            int r = (int) LISTEN.invokeExact(capture, fd, backlog);
            return r < 0 ? (int) fail(capture) : r;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int accept(int fd) {
        MemorySegment capture = LinuxMemory.errnoCapture();
        try {
            int r;
            do {
                r = (int) ACCEPT4.invokeExact(capture, fd, MemorySegment.NULL, MemorySegment.NULL, SOCK_CLOEXEC);
            } while (r < 0 && LinuxMemory.errno(capture) == EINTR);
            return r < 0 ? (int) fail(capture) : r;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int connect(int fd, MemorySegment sockaddr) {
        MemorySegment capture = LinuxMemory.errnoCapture();
        try {
            int r = (int) CONNECT.invokeExact(capture, fd, sockaddr, SOCKADDR_UN_BYTES);
            return r < 0 ? (int) fail(capture) : r;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static long sendmsg(int fd, MemorySegment msghdr, int flags) {
        MemorySegment capture = LinuxMemory.errnoCapture();
        try {
            long r;
            do {
                r = (long) SENDMSG.invokeExact(capture, fd, msghdr, flags);
            } while (r < 0 && LinuxMemory.errno(capture) == EINTR);
            return r < 0 ? fail(capture) : r;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static long recvmsg(int fd, MemorySegment msghdr, int flags) {
        MemorySegment capture = LinuxMemory.errnoCapture();
        try {
            long r;
            do {
                r = (long) RECVMSG.invokeExact(capture, fd, msghdr, flags);
            } while (r < 0 && LinuxMemory.errno(capture) == EINTR);
            return r < 0 ? fail(capture) : r;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code shutdown(fd, SHUT_RDWR)}: wakes a thread blocked in {@code accept} or {@code recvmsg}. */
    static int shutdown(int fd) {
        MemorySegment capture = LinuxMemory.errnoCapture();
        try {
            int r = (int) SHUTDOWN.invokeExact(capture, fd, 2);
            return r < 0 ? (int) fail(capture) : r;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code ENAME (strerror text)} for a negative result. */
    static String describe(long negativeErrno) {
        int e = (int) -negativeErrno;
        return LinuxMemory.errnoName(e) + " (" + LinuxMemory.errnoDescription(e) + ")";
    }
}
