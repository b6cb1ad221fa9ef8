package io.datamem.ucx;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;

/**
 * A registered region of another process's memory, as its owner exported it
 * ({@link UcxContext#export}): where it is, how large it is, and the packed UCX remote key a peer
 * unpacks to reach it with {@link UcxEndpoint#put put} and {@link UcxEndpoint#get get}. Plain data:
 * ship {@link #toBytes()} to the peer by any means and read it there with {@link #fromBytes}.
 *
 * @param owner     who exported it: {@code HOST:PID/CONTEXT}, for messages
 * @param keyId     the owner's number for this registration, unique within its process
 * @param address   the region's address in the owner's process
 * @param byteSize  the region's size
 * @param packedKey the bytes of {@code ucp_rkey_pack}
 */
public record RemoteRegion(String owner, long keyId, long address, long byteSize, byte[] packedKey) {

    private static final int MAGIC = 0x55435852;   // "UCXR"

    /**
     * Validates and copies the components.
     *
     * @throws NullPointerException     if {@code owner} or {@code packedKey} is null
     * @throws IllegalArgumentException if {@code byteSize} is negative, {@code address} is 0, or
     *                                  {@code packedKey} is empty
     */
    public RemoteRegion {
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(packedKey, "packedKey");
        if (byteSize < 0) {
            throw new IllegalArgumentException("byteSize: " + byteSize + " (expected: >= 0)");
        }
        if (address == 0) {
            throw new IllegalArgumentException("address: 0 (expected: the address of a registered region)");
        }
        if (packedKey.length == 0) {
            throw new IllegalArgumentException("packedKey: 0 bytes (expected: the bytes of ucp_rkey_pack)");
        }
        packedKey = packedKey.clone();
    }

    /**
     * The packed key.
     *
     * @return a copy of the bytes
     */
    @Override
    public byte[] packedKey() {
        return packedKey.clone();
    }

    /**
     * This region as bytes, to ship to a peer.
     *
     * @return a self-describing little-endian encoding that {@link #fromBytes} reads
     */
    public byte[] toBytes() {
        byte[] o = owner.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(4 + 4 + o.length + 8 * 3 + 4 + packedKey.length).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(MAGIC).putInt(o.length).put(o).putLong(keyId).putLong(address).putLong(byteSize)
                .putInt(packedKey.length).put(packedKey);
        return b.array();
    }

    /**
     * Reads a region written by {@link #toBytes()}.
     *
     * @param bytes the bytes
     * @return the region
     * @throws NullPointerException     if {@code bytes} is null
     * @throws IllegalArgumentException if the bytes are not such an encoding: the message says what
     *                                  was found
     */
    public static RemoteRegion fromBytes(byte[] bytes) {
        Objects.requireNonNull(bytes, "bytes");
        try {
            ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
            int magic = b.getInt();
            if (magic != MAGIC) {
                throw new IllegalArgumentException("remote region: starts with 0x" + Integer.toHexString(magic)
                        + " (expected: 0x" + Integer.toHexString(MAGIC) + ", the bytes of RemoteRegion.toBytes)");
            }
            byte[] o = new byte[checkedLength(b.getInt(), b.remaining(), "owner")];
            b.get(o);
            long keyId = b.getLong();
            long address = b.getLong();
            long byteSize = b.getLong();
            byte[] key = new byte[checkedLength(b.getInt(), b.remaining(), "packed key")];
            b.get(key);
            if (b.hasRemaining()) {
                throw new IllegalArgumentException("remote region: " + b.remaining() + " bytes after the packed key"
                        + " (expected: none)");
            }
            return new RemoteRegion(new String(o, StandardCharsets.UTF_8), keyId, address, byteSize, key);
        } catch (java.nio.BufferUnderflowException e) {
            throw new IllegalArgumentException("remote region: " + bytes.length + " bytes end early (expected: the"
                    + " bytes of RemoteRegion.toBytes)", e);
        }
    }

    private static int checkedLength(int length, int remaining, String what) {
        if (length < 0 || length > remaining) {
            throw new IllegalArgumentException("remote region: " + what + " length " + length + " with " + remaining
                    + " bytes left (expected: 0.." + remaining + ")");
        }
        return length;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RemoteRegion r && r.owner.equals(owner) && r.keyId == keyId && r.address == address
                && r.byteSize == byteSize && Arrays.equals(r.packedKey, packedKey);
    }

    @Override
    public int hashCode() {
        return Objects.hash(owner, keyId, address, byteSize, Arrays.hashCode(packedKey));
    }

    @Override
    public String toString() {
        return "RemoteRegion[owner=" + owner + ", key #" + keyId + ", 0x" + Long.toHexString(address) + ", "
                + byteSize + " bytes, packed key " + packedKey.length + " bytes " + HexFormat.of().formatHex(
                packedKey, 0, Math.min(8, packedKey.length)) + "...]";
    }
}
