package io.datamem.impl.os;

import io.datamem.internal.Checks;
import io.datamem.internal.Libc;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.Locale;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The Linux memory-management calls datamem's page-level allocators make ({@code mmap},
 * {@code munmap}, {@code madvise}, {@code mremap}, {@code move_pages}, {@code sched_getcpu}), as FFM
 * downcalls that capture {@code errno}. Internal.
 *
 * <p>Every call returns what the kernel returns, with failures folded into the value the way the
 * raw system calls do it: a result {@code >= 0} is success, a negative result is {@code -errno}.
 * Callers turn {@code -ENOMEM} into {@code NULL} (exhaustion) and other codes into
 * {@link io.datamem.BackendException}s that name the code ({@link #errnoName(int)}).
 *
 * <p>The constants are the generic Linux values shared by x86-64 and AArch64.
 */
public final class LinuxMemory {

    /** {@code PROT_NONE}. */
    public static final int PROT_NONE = 0;
    /** {@code PROT_READ | PROT_WRITE}. */
    public static final int PROT_READ_WRITE = 0x1 | 0x2;
    /** {@code MAP_PRIVATE}. */
    public static final int MAP_PRIVATE = 0x02;
    /** {@code MAP_ANONYMOUS}. */
    public static final int MAP_ANONYMOUS = 0x20;
    /** {@code MAP_NORESERVE}. */
    public static final int MAP_NORESERVE = 0x4000;
    /** {@code MAP_HUGETLB}. */
    public static final int MAP_HUGETLB = 0x40000;
    /** {@code MAP_HUGE_SHIFT}: the log2 of the huge page size goes in the flag bits from here. */
    public static final int MAP_HUGE_SHIFT = 26;
    /** {@code MADV_DONTNEED}. */
    public static final int MADV_DONTNEED = 4;
    /** {@code MADV_HUGEPAGE}: the range may be backed by transparent huge pages. */
    public static final int MADV_HUGEPAGE = 14;
    /** {@code MADV_POPULATE_WRITE} (Linux 5.14): fault every page in writable, reporting failure. */
    public static final int MADV_POPULATE_WRITE = 23;
    /** {@code MREMAP_MAYMOVE}. */
    public static final int MREMAP_MAYMOVE = 1;
    /** {@code MREMAP_FIXED}. */
    public static final int MREMAP_FIXED = 2;

    /** {@code EPERM}. */
    public static final int EPERM = 1;
    /** {@code ENOENT}. */
    public static final int ENOENT = 2;
    /** {@code EIO}. */
    public static final int EIO = 5;
    /** {@code EAGAIN}. */
    public static final int EAGAIN = 11;
    /** {@code ENOMEM}. */
    public static final int ENOMEM = 12;
    /** {@code EFAULT}. */
    public static final int EFAULT = 14;
    /** {@code EXDEV}. */
    public static final int EXDEV = 18;
    /** {@code EINVAL}. */
    public static final int EINVAL = 22;
    /** {@code ENOSYS}. */
    public static final int ENOSYS = 38;

    private static final boolean LINUX = System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("linux");
    private static final String ARCH = System.getProperty("os.arch", "");
    private static final long SYS_MOVE_PAGES = switch (ARCH) {
        case "amd64", "x86_64" -> 279;
        case "aarch64", "riscv64" -> 239;
        default -> -1;
    };

    private static final Linker LINKER = Linker.nativeLinker();
    private static final StructLayout CAPTURE_LAYOUT = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO =
            CAPTURE_LAYOUT.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");
    private static final ThreadLocal<MemorySegment> CAPTURE =
            ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(CAPTURE_LAYOUT));

    private static final MethodHandle MMAP = LINUX ? capturing("mmap",
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG)) : null;
    private static final MethodHandle MUNMAP = LINUX ? capturing("munmap",
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG)) : null;
    private static final MethodHandle MADVISE = LINUX ? capturing("madvise",
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT)) : null;
    private static final MethodHandle MREMAP = LINUX ? capturing("mremap",
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_LONG),
            Linker.Option.firstVariadicArg(4)) : null;
    private static final MethodHandle SYSCALL6 = LINUX ? capturing("syscall",
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG,
                    JAVA_LONG), Linker.Option.firstVariadicArg(1)) : null;
    private static final MethodHandle SCHED_GETCPU = LINUX
            ? LINKER.downcallHandle(Libc.symbol("sched_getcpu"), FunctionDescriptor.of(JAVA_INT)) : null;

    private LinuxMemory() {
    }

    private static MethodHandle capturing(String name, FunctionDescriptor descriptor, Linker.Option... more) {
        Linker.Option[] options = new Linker.Option[more.length + 1];
        options[0] = CAPTURE_ERRNO;
        System.arraycopy(more, 0, options, 1, more.length);
        return LINKER.downcallHandle(Libc.symbol(name), descriptor, options);
    }

    /**
     * Whether these calls exist here (Linux).
     *
     * @return true on Linux
     */
    public static boolean supported() {
        return LINUX;
    }

    private static void requireLinux() {
        if (!LINUX) {
            throw new UnsupportedOperationException("page-level memory calls need Linux; this is "
                    + System.getProperty("os.name"));
        }
    }

    /**
     * Reads the {@code errno} a capturing downcall stored.
     *
     * @param capture the segment passed to the call ({@link #errnoCapture()})
     * @return the errno value
     */
    public static int errno(MemorySegment capture) {
        return (int) ERRNO.get(capture, 0L);
    }

    /**
     * This thread's segment for capturing {@code errno} in downcalls made with
     * {@link #downcallCapturingErrno}.
     *
     * @return a segment of {@link Linker.Option#captureStateLayout()}
     */
    public static MemorySegment errnoCapture() {
        return CAPTURE.get();
    }

    /**
     * A downcall handle to a native function that captures {@code errno}: its first parameter is
     * the capture segment ({@link #errnoCapture()}).
     *
     * @param function   the function's address
     * @param descriptor its signature
     * @return the handle
     */
    public static MethodHandle downcallCapturingErrno(MemorySegment function, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(function, descriptor, CAPTURE_ERRNO);
    }

    /**
     * {@code mmap(address, byteSize, prot, flags, -1, 0)} of anonymous memory.
     *
     * @param address  the hint or fixed address, 0 for none
     * @param byteSize bytes, a multiple of the page size of the mapping
     * @param prot     {@code PROT_*}
     * @param flags    {@code MAP_*}
     * @return the address of the mapping, or {@code -errno}
     */
    public static long mmap(long address, long byteSize, int prot, int flags) {
        requireLinux();
        MemorySegment capture = CAPTURE.get();
        try {
            long r = (long) MMAP.invokeExact(capture, address, byteSize, prot, flags, -1, 0L);
            return r == -1 ? -errno(capture) : r;
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * A private anonymous mapping of {@code length} bytes at an address aligned to
     * {@code alignment}, made by over-mapping {@code alignment - pageSize} bytes and unmapping what
     * lies before and after the aligned range.
     *
     * @param length     bytes to map, a multiple of the page size
     * @param alignment  a power of two; below the page size the page size is used
     * @param prot       {@code PROT_*} flags
     * @param extraFlags flags added to {@code MAP_PRIVATE | MAP_ANONYMOUS}
     * @return the aligned address, or {@code -errno} (of {@code mmap}, or of a trimming
     *         {@code munmap}, in which case nothing stays mapped)
     */
    public static long mapAligned(long length, long alignment, int prot, int extraFlags) {
        long page = Libc.pageSize();
        long align = Math.max(alignment, page);
        long reserve = length + align - page;
        long raw = mmap(0, reserve, prot, MAP_PRIVATE | MAP_ANONYMOUS | extraFlags);
        if (raw < 0) {
            return raw;
        }
        long aligned = Checks.alignUp(raw, align);
        long tail = raw + reserve - (aligned + length);
        int r = aligned > raw ? munmap(raw, aligned - raw) : 0;
        if (r == 0 && tail > 0) {
            r = munmap(aligned + length, tail);
        }
        if (r < 0) {
            munmap(raw, reserve);
            return r;
        }
        return aligned;
    }

    /**
     * {@code munmap(address, byteSize)}.
     *
     * @param address  a page-aligned address
     * @param byteSize bytes
     * @return 0, or {@code -errno}
     */
    public static int munmap(long address, long byteSize) {
        requireLinux();
        MemorySegment capture = CAPTURE.get();
        try {
            int r = (int) MUNMAP.invokeExact(capture, address, byteSize);
            return r == -1 ? -errno(capture) : r;
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code madvise(address, byteSize, advice)}.
     *
     * @param address  a page-aligned address
     * @param byteSize bytes
     * @param advice   {@code MADV_*}
     * @return 0, or {@code -errno}
     */
    public static int madvise(long address, long byteSize, int advice) {
        requireLinux();
        MemorySegment capture = CAPTURE.get();
        try {
            int r = (int) MADVISE.invokeExact(capture, address, byteSize, advice);
            return r == -1 ? -errno(capture) : r;
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code mremap(address, oldByteSize, newByteSize, flags, newAddress)}.
     *
     * @param address     the mapping
     * @param oldByteSize its size
     * @param newByteSize the size wanted
     * @param flags       {@code MREMAP_*}
     * @param newAddress  the target with {@link #MREMAP_FIXED}, else ignored
     * @return the (possibly new) address, or {@code -errno}
     */
    public static long mremap(long address, long oldByteSize, long newByteSize, int flags, long newAddress) {
        requireLinux();
        MemorySegment capture = CAPTURE.get();
        try {
            long r = (long) MREMAP.invokeExact(capture, address, oldByteSize, newByteSize, flags, newAddress);
            return r == -1 ? -errno(capture) : r;
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * Which NUMA node each page of a range is on, through {@code move_pages(0, count, pages, NULL,
     * status, 0)} (a query: nothing moves).
     *
     * @param address  the start of the range
     * @param byteSize its length
     * @param stride   the distance between the pages asked about (the page size of the range)
     * @param status   receives, per page, its node or a negative errno ({@code -ENOENT}: not
     *                 present yet); its length is the number of pages asked about
     * @return 0, or {@code -errno}
     */
    public static int pageNodes(long address, long byteSize, long stride, int[] status) {
        requireLinux();
        if (SYS_MOVE_PAGES < 0) {
            return -ENOSYS;
        }
        int count = status.length;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment pages = arena.allocate(ValueLayout.JAVA_LONG, count);
            for (int i = 0; i < count; i++) {
                pages.setAtIndex(ValueLayout.JAVA_LONG, i, address + i * stride);
            }
            MemorySegment out = arena.allocate(ValueLayout.JAVA_INT, count);
            MemorySegment capture = arena.allocate(CAPTURE_LAYOUT);
            long r = (long) SYSCALL6.invokeExact(capture, SYS_MOVE_PAGES, 0L, (long) count, pages.address(), 0L,
                    out.address(), 0L);
            if (r < 0) {
                return -errno(capture);
            }
            MemorySegment.copy(out, ValueLayout.JAVA_INT, 0, status, 0, count);
            return 0;
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code sched_getcpu()}: the CPU the calling thread runs on now.
     *
     * @return the CPU's OS index, or -1 if unknown
     */
    public static int currentCpu() {
        if (!LINUX) {
            return -1;
        }
        try {
            return (int) SCHED_GETCPU.invokeExact();
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * The symbolic name of an errno value.
     *
     * @param errno a positive errno (a negative one is negated)
     * @return for example {@code ENOMEM}, or {@code errno N} for codes without a name here
     */
    public static String errnoName(int errno) {
        String[] entry = errnoEntry(Math.abs(errno));
        return entry == null ? "errno " + Math.abs(errno) : entry[0];
    }

    /**
     * What an errno value means: the C library's {@code strerror} text on Linux (glibc's wording).
     *
     * @param errno a positive errno (a negative one is negated)
     * @return for example {@code Cannot allocate memory}, or {@code Unknown error N} for codes
     *         without an entry here
     */
    public static String errnoDescription(int errno) {
        String[] entry = errnoEntry(Math.abs(errno));
        return entry == null ? "Unknown error " + Math.abs(errno) : entry[1];
    }

    /** The name and strerror text of the errno values the library meets, or null. */
    private static String[] errnoEntry(int errno) {
        return switch (errno) {
            case EPERM -> new String[] {"EPERM", "Operation not permitted"};
            case ENOENT -> new String[] {"ENOENT", "No such file or directory"};
            case 3 -> new String[] {"ESRCH", "No such process"};
            case 4 -> new String[] {"EINTR", "Interrupted system call"};
            case EIO -> new String[] {"EIO", "Input/output error"};
            case 7 -> new String[] {"E2BIG", "Argument list too long"};
            case 9 -> new String[] {"EBADF", "Bad file descriptor"};
            case EAGAIN -> new String[] {"EAGAIN", "Resource temporarily unavailable"};
            case ENOMEM -> new String[] {"ENOMEM", "Cannot allocate memory"};
            case 13 -> new String[] {"EACCES", "Permission denied"};
            case EFAULT -> new String[] {"EFAULT", "Bad address"};
            case 16 -> new String[] {"EBUSY", "Device or resource busy"};
            case 17 -> new String[] {"EEXIST", "File exists"};
            case EXDEV -> new String[] {"EXDEV", "Invalid cross-device link"};
            case 19 -> new String[] {"ENODEV", "No such device"};
            case 20 -> new String[] {"ENOTDIR", "Not a directory"};
            case EINVAL -> new String[] {"EINVAL", "Invalid argument"};
            case 24 -> new String[] {"EMFILE", "Too many open files"};
            case 28 -> new String[] {"ENOSPC", "No space left on device"};
            case 32 -> new String[] {"EPIPE", "Broken pipe"};
            case 36 -> new String[] {"ENAMETOOLONG", "File name too long"};
            case ENOSYS -> new String[] {"ENOSYS", "Function not implemented"};
            case 95 -> new String[] {"EOPNOTSUPP", "Operation not supported"};
            case 98 -> new String[] {"EADDRINUSE", "Address already in use"};
            case 104 -> new String[] {"ECONNRESET", "Connection reset by peer"};
            case 111 -> new String[] {"ECONNREFUSED", "Connection refused"};
            default -> null;
        };
    }
}
