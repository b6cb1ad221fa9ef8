package io.datamem.impl.shared;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The importer's cache: one mapping per exported mapping (by tag), shared by every open of any of
 * its blocks and counted; the last release unmaps it. A descriptor is checked, mapped and closed at
 * once: an imported mapping holds no descriptor.
 */
final class Imports {

    record Tag(long high, long low) {
    }

    /** One imported mapping. */
    static final class Entry {
        final Tag tag;
        final long inode;
        final long length;
        final long address;
        /** The whole mapping, bound to an arena closed just before it is unmapped. */
        final MemorySegment whole;
        private final Arena arena;
        final AtomicInteger refs = new AtomicInteger(1);

        Entry(Tag tag, long inode, long length, long address) {
            this.tag = tag;
            this.inode = inode;
            this.length = length;
            this.address = address;
            this.arena = Arena.ofShared();
            this.whole = MemorySegment.ofAddress(address).reinterpret(length, arena, null);
        }
    }

    private static final Map<Tag, Entry> BY_TAG = new ConcurrentHashMap<>();
    private static final ConcurrentSkipListMap<Long, Entry> BY_ADDRESS = new ConcurrentSkipListMap<>();
    private static final Object LOCK = new Object();

    private Imports() {
    }

    /** A cached mapping of the handle's, with one more reference, or null if none is cached. */
    static Entry acquireCached(IpcHandle h) {
        Entry e = BY_TAG.get(new Tag(h.tagHigh(), h.tagLow()));
        if (e == null) {
            return null;
        }
        if (e.inode != h.inode() || e.length != h.mappingByteSize()) {
            throw new IpcException(IpcException.Reason.MISMATCH, h + ": the mapping with this tag has inode " + e.inode
                    + " and " + e.length + " bytes (expected: the handle's; a forged or corrupted handle)");
        }
        for (int refs = e.refs.get(); refs > 0; refs = e.refs.get()) {
            if (e.refs.compareAndSet(refs, refs + 1)) {
                return e;
            }
        }
        return null;   // being unmapped: map anew
    }

    /**
     * Checks that {@code fd} is the mapping {@code h} names, maps it (or takes the cached mapping)
     * and closes {@code fd} whatever happens.
     */
    static Entry install(IpcHandle h, int fd, String from) {
        try {
            verify(h, fd, from);
            synchronized (LOCK) {
                Entry cached = acquireCached(h);
                if (cached != null) {
                    return cached;
                }
                long address = Posix.mapShared(fd, h.mappingByteSize());
                if (address < 0) {
                    throw new IpcException(IpcException.Reason.SYSTEM, h + ": mmap of " + h.mappingByteSize()
                            + " bytes failed: " + Posix.describe(address));
                }
                Entry e = new Entry(new Tag(h.tagHigh(), h.tagLow()), h.inode(), h.mappingByteSize(), address);
                BY_TAG.put(e.tag, e);
                BY_ADDRESS.put(address, e);
                return e;
            }
        } finally {
            Posix.close(fd);
        }
    }

    /** Whether {@code fd} is the sealed memfd {@code h} names, of the handle's size; throws if not. */
    static void verify(IpcHandle h, int fd, String from) {
        String target = Posix.fdTarget(fd);
        String expected = "/memfd:" + Mapping.memfdName(h.tagHigh(), h.tagLow()) + " (deleted)";
        if (!expected.equals(target)) {
            throw new IpcException(IpcException.Reason.NO_SUCH_MAPPING, h + ": " + from + " is "
                    + (target == null ? "unreadable" : "'" + target + "'") + ", not the mapping the handle names ('"
                    + expected + "'): the mapping was freed and its descriptor reused, or the handle is forged");
        }
        long inode = Posix.inode(fd);
        if (inode != h.inode()) {
            throw new IpcException(IpcException.Reason.NO_SUCH_MAPPING, h + ": " + from + " has inode " + inode
                    + " (expected: " + h.inode() + "): another object with the same name; a forged handle");
        }
        int seals = Posix.fcntl(fd, Posix.F_GET_SEALS, 0);
        int needed = Posix.F_SEAL_SHRINK | Posix.F_SEAL_GROW;
        if (seals < 0 || (seals & needed) != needed) {
            throw new IpcException(IpcException.Reason.MISMATCH, h + ": " + from + " is not sealed against"
                    + " shrinking and growing (seals " + seals + "; expected: F_SEAL_SHRINK | F_SEAL_GROW): mapping it"
                    + " could fault if it shrank");
        }
        long size = Posix.fileSize(fd);
        if (size != h.mappingByteSize()) {
            throw new IpcException(IpcException.Reason.MISMATCH, h + ": " + from + " holds " + size
                    + " bytes (expected: the handle's mapping size, " + h.mappingByteSize() + "): a forged or"
                    + " corrupted handle");
        }
    }

    /** Takes the exporter's descriptor with pidfd_getfd: the new descriptor, or throws. */
    static int takeDescriptor(IpcHandle h) {
        int pidfd = Posix.pidfdOpen(h.exporterPid());
        if (pidfd < 0) {
            if (pidfd == -Posix.ESRCH) {
                throw new IpcException(IpcException.Reason.EXPORTER_GONE, h + ": exporter process "
                        + h.exporterPid() + " is gone (its mappings may live on in importers that mapped them)");
            }
            throw new IpcException(IpcException.Reason.SYSTEM, h + ": pidfd_open(" + h.exporterPid() + ") failed: "
                    + Posix.describe(pidfd) + " (pidfd_open needs Linux 5.3; use IpcSocket otherwise)");
        }
        int fd;
        try {
            fd = Posix.pidfdGetfd(pidfd, h.exporterFd());
        } finally {
            Posix.close(pidfd);
        }
        if (fd >= 0) {
            return fd;
        }
        if (fd == -Posix.ESRCH) {
            throw new IpcException(IpcException.Reason.EXPORTER_GONE, h + ": exporter process " + h.exporterPid()
                    + " exited");
        }
        if (fd == -Posix.EBADF) {
            throw new IpcException(IpcException.Reason.NO_SUCH_MAPPING, h + ": exporter process " + h.exporterPid()
                    + " has no descriptor " + h.exporterFd() + ": the mapping was freed, or the handle is forged");
        }
        if (fd == -1 || fd == -Posix.EACCES) {
            throw new IpcException(IpcException.Reason.NOT_PERMITTED, h + ": pidfd_getfd refused: "
                    + Posix.describe(fd) + "; it needs ptrace access to process " + h.exporterPid() + " (the same user"
                    + " and " + ptraceScope() + ", or CAP_SYS_PTRACE): send the handle with IpcSocket instead");
        }
        throw new IpcException(IpcException.Reason.SYSTEM, h + ": pidfd_getfd failed: " + Posix.describe(fd)
                + " (pidfd_getfd needs Linux 5.6)");
    }

    private static String ptraceScope() {
        try {
            String v = Files.readString(Path.of("/proc/sys/kernel/yama/ptrace_scope")).strip();
            return "Yama's ptrace_scope is " + v + (v.equals("0") ? "" : " here (0 lets a process of the same user"
                    + " take another's descriptors; 1 only a parent, 2 only CAP_SYS_PTRACE, 3 none)");
        } catch (java.io.IOException | RuntimeException e) {
            return "no Yama ptrace_scope restriction found";
        }
    }

    /** Drops one reference to the mapping containing {@code address}; the last one unmaps it. */
    static void release(long address) {
        var found = BY_ADDRESS.floorEntry(address);
        Entry e = found == null ? null : found.getValue();
        if (e == null || address - e.address >= e.length) {
            throw new IllegalArgumentException("0x" + Long.toHexString(address) + ": not inside an imported mapping"
                    + " (expected: an address of memory SharedMemory.open returned and that was not released)");
        }
        release(e);
    }

    static void release(Entry e) {
        int left = e.refs.decrementAndGet();
        if (left > 0) {
            return;
        }
        if (left < 0) {
            throw new IllegalStateException("imported mapping at 0x" + Long.toHexString(e.address)
                    + " released more often than opened");
        }
        synchronized (LOCK) {
            BY_TAG.remove(e.tag, e);
            BY_ADDRESS.remove(e.address, e);
            try {
                e.arena.close();   // every segment of the mapping becomes inaccessible before the unmap
            } catch (IllegalStateException busy) {
                throw new IllegalStateException("imported mapping at 0x" + Long.toHexString(e.address) + " is in use"
                        + " by a native call holding one of its segments: it stays mapped (a leak, not a crash)", busy);
            }
            Posix.munmap(e.address, e.length);
        }
    }

    /** How many imported mappings are mapped. */
    static int mapped() {
        return BY_ADDRESS.size();
    }
}
