package io.datamem.impl.shared;

import javax.crypto.Mac;
import javax.crypto.SecretKey;
import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;
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
 *
 * <p><b>Sealed.</b> The form above travels unauthenticated: a handle read from it
 * ({@link #fromBytes(byte[])}) that names another process is refused by
 * {@link SharedMemory#open(IpcHandle)} before {@code pidfd_getfd} (the kernel would hand over any
 * descriptor of any process this user may trace). Across processes, send the sealed form instead:
 * {@link #toBytes(SecretKey)} writes the same {@link #BYTES} bytes with version 2, followed by an
 * HMAC-SHA256 over them under a key the two processes share ({@link #SEALED_BYTES} in all), and
 * {@link #fromBytes(byte[], SecretKey)} checks length, magic, version and MAC before reading any
 * field. Handles over an {@link IpcSocket} need no seal (the descriptor comes with the message).
 */
public final class IpcHandle {

    /** The size of the wire form: 72 bytes. */
    public static final int BYTES = 72;
    /** The wire form's first four bytes, {@code "DIPC"} read as a little-endian int. */
    static final int MAGIC = 0x43504944;
    /** The wire form's version. */
    static final int VERSION = 1;
    /** The sealed form's version. */
    static final int SEALED_VERSION = 2;
    /** The size of the sealed form: the {@link #BYTES} bytes and a 32-byte HMAC-SHA256. */
    public static final int SEALED_BYTES = BYTES + 32;

    private final long exporterPid;
    private final int exporterFd;
    private final long tagHigh;
    private final long tagLow;
    private final long inode;
    private final long mappingByteSize;
    private final long byteOffset;
    private final long byteSize;
    private final boolean unsealedWire;   // read from the unsealed wire form: its pid and fd are claims

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
        this.unsealedWire = false;
    }

    private IpcHandle(IpcHandle h, boolean unsealedWire) {
        this.exporterPid = h.exporterPid;
        this.exporterFd = h.exporterFd;
        this.tagHigh = h.tagHigh;
        this.tagLow = h.tagLow;
        this.inode = h.inode;
        this.mappingByteSize = h.mappingByteSize;
        this.byteOffset = h.byteOffset;
        this.byteSize = h.byteSize;
        this.unsealedWire = unsealedWire;
    }

    /** Whether this handle was read from the unsealed wire form (nobody vouches for its pid and fd). */
    boolean unsealedWire() {
        return unsealedWire;
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
        return encode(VERSION, BYTES);
    }

    /**
     * The sealed wire form: {@link #BYTES} bytes with version 2 and their HMAC-SHA256 under
     * {@code key}, which {@link #fromBytes(byte[], SecretKey)} reads in the other process.
     *
     * @param key the key the two processes share, for example
     *            {@code new SecretKeySpec(secret, "HmacSHA256")}
     * @return {@link #SEALED_BYTES} new bytes
     * @throws NullPointerException     if {@code key} is null
     * @throws IllegalArgumentException if {@code key} is not a key HMAC-SHA256 accepts
     */
    public byte[] toBytes(SecretKey key) {
        byte[] b = encode(SEALED_VERSION, SEALED_BYTES);
        System.arraycopy(mac(Objects.requireNonNull(key, "key"), b), 0, b, BYTES, 32);
        return b;
    }

    private static byte[] mac(SecretKey key, byte[] form) {
        try {
            Mac m = Mac.getInstance("HmacSHA256");
            m.init(key);
            m.update(form, 0, BYTES);
            return m.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("key: a " + key.getAlgorithm() + " key (expected: a key HmacSHA256"
                    + " accepts): " + e, e);
        }
    }

    private byte[] encode(int version, int length) {
        ByteBuffer b = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(MAGIC).putInt(version).putLong(exporterPid).putInt(exporterFd).putInt(0)
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
        return new IpcHandle(decode(bytes, VERSION), true);
    }

    /**
     * Reads a sealed handle ({@link #toBytes(SecretKey)}), checking its length, magic, version and
     * MAC, in that order, before reading any field.
     *
     * @param bytes the sealed form
     * @param key   the key the two processes share
     * @return the handle, which {@link SharedMemory#open(IpcHandle)} opens with {@code pidfd_getfd}
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if the bytes are not {@link #SEALED_BYTES} long, do not start
     *                                  with the magic and version 2, their MAC does not verify under
     *                                  {@code key} (corrupted, forged, or sealed under another key),
     *                                  or they hold invalid components; the message says which
     */
    public static IpcHandle fromBytes(byte[] bytes, SecretKey key) {
        Objects.requireNonNull(bytes, "bytes");
        Objects.requireNonNull(key, "key");
        if (bytes.length != SEALED_BYTES) {
            throw new IllegalArgumentException("IPC handle refused: length " + bytes.length + " bytes (expected: "
                    + SEALED_BYTES + ", the sealed form)");
        }
        checkHeader(bytes, SEALED_VERSION);
        if (!MessageDigest.isEqual(mac(key, bytes), Arrays.copyOfRange(bytes, BYTES, SEALED_BYTES))) {
            throw new IllegalArgumentException("IPC handle refused: MAC does not verify under the key (corrupted,"
                    + " forged, or sealed under another key)");
        }
        return decode(bytes, SEALED_VERSION);
    }

    private static void checkHeader(byte[] bytes, int expectedVersion) {
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        int magic = b.getInt();
        int version = b.getInt();
        if (magic != MAGIC) {
            throw new IllegalArgumentException("IPC handle: magic 0x" + Integer.toHexString(magic)
                    + " (expected: 0x" + Integer.toHexString(MAGIC) + ", \"DIPC\")");
        }
        if (version != expectedVersion) {
            throw new IllegalArgumentException("IPC handle: version " + version + " (expected: " + expectedVersion
                    + (expectedVersion == VERSION ? "" : ", the sealed form") + ")");
        }
    }

    private static IpcHandle decode(byte[] bytes, int expectedVersion) {
        checkHeader(bytes, expectedVersion);
        ByteBuffer b = ByteBuffer.wrap(bytes, 8, BYTES - 8).order(ByteOrder.LITTLE_ENDIAN);
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
