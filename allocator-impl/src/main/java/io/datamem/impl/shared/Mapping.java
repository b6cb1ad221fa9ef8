package io.datamem.impl.shared;

import java.util.HexFormat;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * One exported mapping: a sealed memfd of whole pages mapped shared at {@code address}, with its
 * descriptor kept open (importers take it) until the block is freed. Every live mapping of every
 * {@link SharedMemoryAllocator} of the process is in {@link #LIVE}, by address, so that any address
 * inside one (a pooled block inside a slab run) finds its mapping.
 */
final class Mapping {

    /** The memfd name's prefix; the tag follows as 32 hex digits. */
    static final String NAME_PREFIX = "datamem:";

    /** Every live exported mapping of this process, by start address. */
    static final ConcurrentSkipListMap<Long, Mapping> LIVE = new ConcurrentSkipListMap<>();

    private static final long PID = ProcessHandle.current().pid();

    final long address;
    final long length;
    final int fd;
    final long tagHigh;
    final long tagLow;
    private volatile IpcHandle handle;   // the whole mapping's handle, made on first export

    Mapping(long address, long length, int fd, long tagHigh, long tagLow) {
        this.address = address;
        this.length = length;
        this.fd = fd;
        this.tagHigh = tagHigh;
        this.tagLow = tagLow;
    }

    static String memfdName(long tagHigh, long tagLow) {
        return NAME_PREFIX + HexFormat.of().toHexDigits(tagHigh) + HexFormat.of().toHexDigits(tagLow);
    }

    /** The mapping holding {@code [address, address + byteSize)}, or null. */
    static Mapping containing(long address, long byteSize) {
        var e = LIVE.floorEntry(address);
        if (e == null) {
            return null;
        }
        Mapping m = e.getValue();
        long offset = address - m.address;
        return offset < m.length && byteSize <= m.length - offset ? m : null;
    }

    /**
     * A handle of a block of this mapping (the whole-mapping handle is made once, reading the
     * inode with one {@code fstat}, and kept).
     */
    IpcHandle handle(long blockAddress, long byteSize) {
        IpcHandle h = handle;
        if (h == null) {
            long inode = Posix.inode(fd);
            if (inode < 0) {
                throw new IpcException(IpcException.Reason.NO_SUCH_MAPPING, "mapping at 0x" + Long.toHexString(address)
                        + ": its descriptor " + fd + " cannot be read: " + Posix.describe(inode)
                        + " (was it freed while being exported?)");
            }
            h = new IpcHandle(PID, fd, tagHigh, tagLow, inode, length, 0, length);
            handle = h;
        }
        return h.withBlock(blockAddress - address, byteSize);
    }

    @Override
    public String toString() {
        return "mapping " + memfdName(tagHigh, tagLow) + " at 0x" + Long.toHexString(address) + " (" + length
                + " bytes, fd " + fd + ")";
    }
}
