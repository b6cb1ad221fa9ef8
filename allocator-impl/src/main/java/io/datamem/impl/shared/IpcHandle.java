package io.datamem.impl.shared;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HexFormat;
import java.util.Objects;

/**
 * A token that lets another process map the bytes of a shared block: send its wire form
 * ({@link #toBytes()}) to the other process, which reads it back with {@link #fromBytes(byte[])}
 * and opens it ({@link SharedMemory#open(IpcHandle)}), or send it with its descriptor over an
 * {@link IpcSocket}. Made by {@link SharedMemory#handleOf(java.lang.foreign.MemorySegment)}; it
 * tells its users the block's size ({@link #byteSize()}), where the block lies in its mapping
 * ({@link #byteOffset()}) and which process exports it ({@link #exporterPid()}). Two handles are
 * equal when they name the same block of the same mapping of the same exporter.
 *
 * <p>Inside, it names which of the exporter's file descriptors holds the mapping, the mapping's
 * random 128-bit tag, inode and size. A handle carries no authority by itself: the importer takes
 * the descriptor (over a Unix domain socket with {@link IpcSocket}, or with {@code pidfd_getfd} in
 * {@link SharedMemory#open(IpcHandle)}) and checks that it is the object the handle names before
 * mapping anything ({@link SharedMemory}).
 *
 * <p>Its wire form ({@link #toBytes()}, {@link #BYTES} bytes, little-endian) is:
 * <pre>
 *  0  int   magic 0x43504944 ("DIPC")      4  int   version (1)
 *  8  long  exporter pid                   16 int   exporter's descriptor   20 int 0
 * 24  long  tag, high 64 bits              32 long  tag, low 64 bits
 * 40  long  inode of the memfd             48 long  mapping size (bytes, whole pages)
 * 56  long  block offset in the mapping    64 long  block size (bytes)
 * </pre>
 */
public final class IpcHandle {

    /** The size of the wire form: 72 bytes. */
    public static final int BYTES = 72;
    /** The wire form's first four bytes, {@code "DIPC"} read as a little-endian int. */
    static final int MAGIC = 0x43504944;
    /** The wire form's version. */
    static final int VERSION = 1;

    private final long exporterPid;
    private final int exporterFd;
    private final long tagHigh;
    private final long tagLow;
    private final long inode;
    private final long mappingByteSize;
    private final long byteOffset;
    private final long byteSize;

    /**
     * A handle from its parts, validated.
     *
     * @param exporterPid     the exporting process
     * @param exporterFd      the exporter's descriptor of the mapping's memfd
     * @param tagHigh         the high 64 bits of the mapping's random tag
     * @param tagLow          the low 64 bits of the mapping's random tag
     * @param inode           the memfd's inode number
     * @param mappingByteSize the size of the whole mapping (the memfd's size)
     * @param byteOffset      where the block starts in the mapping
     * @param byteSize        the block's size
     * @throws IllegalArgumentException if {@code exporterPid} is not positive, {@code exporterFd}
     *                                  is negative, {@code mappingByteSize} is not positive,
     *                                  {@code byteOffset} or {@code byteSize} is negative, or the
     *                                  block does not lie inside the mapping
     */
    IpcHandle(long exporterPid, int exporterFd, long tagHigh, long tagLow, long inode, long mappingByteSize,
              long byteOffset, long byteSize) {
        if (exporterPid <= 0) {
            throw new IllegalArgumentException("exporterPid: " + exporterPid + " (expected: > 0)");
        }
        if (exporterFd < 0) {
            throw new IllegalArgumentException("exporterFd: " + exporterFd + " (expected: >= 0)");
        }
        if (mappingByteSize <= 0) {
            throw new IllegalArgumentException("mappingByteSize: " + mappingByteSize + " (expected: > 0)");
        }
        if (byteOffset < 0 || byteSize < 0 || byteOffset > mappingByteSize || byteSize > mappingByteSize - byteOffset) {
            throw new IllegalArgumentException("block [" + byteOffset + ", +" + byteSize + "): outside the mapping of "
                    + mappingByteSize + " bytes (expected: 0 <= byteOffset, 0 <= byteSize, byteOffset + byteSize <= "
                    + mappingByteSize + ")");
        }
        this.exporterPid = exporterPid;
        this.exporterFd = exporterFd;
        this.tagHigh = tagHigh;
        this.tagLow = tagLow;
        this.inode = inode;
        this.mappingByteSize = mappingByteSize;
        this.byteOffset = byteOffset;
        this.byteSize = byteSize;
    }

    /**
     * The process that exports the block.
     *
     * @return its pid, positive
     */
    public long exporterPid() {
        return exporterPid;
    }

    /**
     * Where the block starts in its mapping.
     *
     * @return the offset in bytes, at least 0
     */
    public long byteOffset() {
        return byteOffset;
    }

    /**
     * The block's size.
     *
     * @return the size in bytes, at least 0
     */
    public long byteSize() {
        return byteSize;
    }

    /** The exporter's descriptor of the mapping's memfd. */
    int exporterFd() {
        return exporterFd;
    }

    /** The high 64 bits of the mapping's random tag. */
    long tagHigh() {
        return tagHigh;
    }

    /** The low 64 bits of the mapping's random tag. */
    long tagLow() {
        return tagLow;
    }

    /** The memfd's inode number. */
    long inode() {
        return inode;
    }

    /** The size of the whole mapping (the memfd's size), in bytes. */
    long mappingByteSize() {
        return mappingByteSize;
    }

    /**
     * The tag as 32 lower-case hex digits, as it appears in the memfd's name
     * ({@code memfd:datamem:TAG}).
     *
     * @return the tag
     */
    String tag() {
        return HexFormat.of().toHexDigits(tagHigh) + HexFormat.of().toHexDigits(tagLow);
    }

    /**
     * A handle for another block of the same mapping.
     *
     * @param newByteOffset where the block starts in the mapping
     * @param newByteSize   its size
     * @return the handle
     * @throws IllegalArgumentException if the block does not lie inside the mapping
     */
    IpcHandle withBlock(long newByteOffset, long newByteSize) {
        return new IpcHandle(exporterPid, exporterFd, tagHigh, tagLow, inode, mappingByteSize, newByteOffset,
                newByteSize);
    }

    /**
     * The wire form, to send to another process, which reads it with {@link #fromBytes(byte[])}.
     *
     * @return {@link #BYTES} new bytes
     */
    public byte[] toBytes() {
        ByteBuffer b = ByteBuffer.allocate(BYTES).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(MAGIC).putInt(VERSION).putLong(exporterPid).putInt(exporterFd).putInt(0)
                .putLong(tagHigh).putLong(tagLow).putLong(inode).putLong(mappingByteSize)
                .putLong(byteOffset).putLong(byteSize);
        return b.array();
    }

    /**
     * Reads a handle's wire form.
     *
     * @param bytes the wire form
     * @return the handle
     * @throws NullPointerException     if {@code bytes} is null
     * @throws IllegalArgumentException if {@code bytes} is not {@link #BYTES} long, does not start
     *                                  with the magic and version, or holds invalid components
     */
    public static IpcHandle fromBytes(byte[] bytes) {
        Objects.requireNonNull(bytes, "bytes");
        if (bytes.length != BYTES) {
            throw new IllegalArgumentException("IPC handle: " + bytes.length + " bytes (expected: " + BYTES + ")");
        }
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        int magic = b.getInt();
        int version = b.getInt();
        if (magic != MAGIC) {
            throw new IllegalArgumentException("IPC handle: magic 0x" + Integer.toHexString(magic)
                    + " (expected: 0x" + Integer.toHexString(MAGIC) + ", \"DIPC\")");
        }
        if (version != VERSION) {
            throw new IllegalArgumentException("IPC handle: version " + version + " (expected: " + VERSION + ")");
        }
        long pid = b.getLong();
        int fd = b.getInt();
        int reserved = b.getInt();
        if (reserved != 0) {
            throw new IllegalArgumentException("IPC handle: reserved word " + reserved + " (expected: 0)");
        }
        return new IpcHandle(pid, fd, b.getLong(), b.getLong(), b.getLong(), b.getLong(), b.getLong(), b.getLong());
    }

    /**
     * Whether another object is a handle of the same block: the same exporter, descriptor, tag,
     * inode, mapping size, offset and size (the same wire form).
     *
     * @param o the object
     * @return true if it is an equal handle
     */
    @Override
    public boolean equals(Object o) {
        return o instanceof IpcHandle h && exporterPid == h.exporterPid && exporterFd == h.exporterFd
                && tagHigh == h.tagHigh && tagLow == h.tagLow && inode == h.inode
                && mappingByteSize == h.mappingByteSize && byteOffset == h.byteOffset && byteSize == h.byteSize;
    }

    /**
     * A hash of all the handle's parts, consistent with {@link #equals(Object)}.
     *
     * @return the hash
     */
    @Override
    public int hashCode() {
        return Objects.hash(exporterPid, exporterFd, tagHigh, tagLow, inode, mappingByteSize, byteOffset, byteSize);
    }

    /**
     * What the handle names, for messages and logs.
     *
     * @return for example {@code IpcHandle[pid 4242, fd 7, tag 0123...cdef, inode 99, mapping 8192
     *         bytes, block [4096, +100)]}
     */
    @Override
    public String toString() {
        return "IpcHandle[pid " + exporterPid + ", fd " + exporterFd + ", tag " + tag() + ", inode " + inode
                + ", mapping " + mappingByteSize + " bytes, block [" + byteOffset + ", +" + byteSize + ")]";
    }
}
