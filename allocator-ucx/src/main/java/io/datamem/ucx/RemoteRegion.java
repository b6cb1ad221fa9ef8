package io.datamem.ucx;

import javax.crypto.SecretKey;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;

/**
 * A registered region of another process's memory, as its owner exported it
 * ({@link UcxContext#export}): where it is, how large it is, and the packed UCX remote key a peer
 * unpacks to reach it with {@link UcxEndpoint#put put} and {@link UcxEndpoint#get get}.
 *
 * <p><b>On the wire.</b> UCX trusts a packed key completely (a corrupted one can crash the process
 * that unpacks it), so a region crosses a process boundary <em>sealed</em>: {@link #toBytes(SecretKey)}
 * appends an HMAC-SHA256 over every byte of the versioned form, under a key the two sides share
 * (the one {@link UcxBootstrap} establishes, {@link UcxBootstrap#sendRegion}, or one the application
 * brings to {@link UcxContext#connect(byte[], String, SecretKey)}). An endpoint unpacks a region's
 * key only if the region was exported by a context of this process, or carries a seal that verifies
 * under the endpoint's key; anything else is an {@link IllegalArgumentException} before UCX sees
 * it. {@link #fromBytes(byte[], SecretKey)} checks the seal on receipt; {@link #fromBytes(byte[])}
 * checks the form only and leaves the seal for the endpoint to check. See docs/distributed.md for
 * the trust model.
 *
 * <p>Immutable; equal when the five components are equal (the seal is not a component).
 */
public final class RemoteRegion {

    private static final int MAGIC = 0x55435852;   // "UCXR"
    private static final int VERSION = 2;
    private static final int SEALED = 1;
    private static final int HEADER = 4 + 2 + 2 + 4;
    private static final int MAX_OWNER = 1024;
    private static final int MAX_KEY = 1 << 16;

    private final String owner;
    private final long keyId;
    private final long address;
    private final long byteSize;
    private final byte[] packedKey;
    private final boolean local;          // exported by a context of this process
    private final byte[] sealedForm;      // the sealed bytes it was read from; null if none
    private volatile SecretKey verifiedUnder;

    /**
     * A region from its components. Such a region is not sealed: an endpoint refuses it (only a
     * region a context of this process exported, or one read from a sealed form whose seal verifies
     * under the endpoint's key, is unpacked).
     *
     * @param owner     who exported it: {@code HOST:PID/CONTEXT}, for messages
     * @param keyId     the owner's number for this registration, unique within its process
     * @param address   the region's address in the owner's process
     * @param byteSize  the region's size
     * @param packedKey the bytes of {@code ucp_rkey_pack}
     * @throws NullPointerException     if {@code owner} or {@code packedKey} is null
     * @throws IllegalArgumentException if {@code byteSize} is negative, {@code address} is 0, or
     *                                  {@code packedKey} is empty
     */
    public RemoteRegion(String owner, long keyId, long address, long byteSize, byte[] packedKey) {
        this(owner, keyId, address, byteSize, packedKey, false, null);
    }

    private RemoteRegion(String owner, long keyId, long address, long byteSize, byte[] packedKey, boolean local,
                         byte[] sealedForm) {
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
        this.owner = owner;
        this.keyId = keyId;
        this.address = address;
        this.byteSize = byteSize;
        this.packedKey = packedKey.clone();
        this.local = local;
        this.sealedForm = sealedForm;
    }

    /** A region a context of this process exported. */
    static RemoteRegion local(String owner, long keyId, long address, long byteSize, byte[] packedKey) {
        return new RemoteRegion(owner, keyId, address, byteSize, packedKey, true, null);
    }

    /**
     * Who exported it.
     *
     * @return {@code HOST:PID/CONTEXT}
     */
    public String owner() {
        return owner;
    }

    /**
     * The owner's number for the registration.
     *
     * @return the key id
     */
    public long keyId() {
        return keyId;
    }

    /**
     * The region's address in the owner's process.
     *
     * @return the address
     */
    public long address() {
        return address;
    }

    /**
     * The region's size.
     *
     * @return bytes
     */
    public long byteSize() {
        return byteSize;
    }

    /**
     * The packed key.
     *
     * @return a copy of the bytes
     */
    public byte[] packedKey() {
        return packedKey.clone();
    }

    /**
     * This region in the unsealed form: for storage, or a channel whose every message the
     * application authenticates itself. An endpoint refuses a region read back from it.
     *
     * @return the versioned little-endian form that {@link #fromBytes(byte[])} reads
     */
    public byte[] toBytes() {
        return encode(null);
    }

    /**
     * This region sealed for a peer: the versioned form followed by its HMAC-SHA256 under {@code key}.
     *
     * @param key the key the two sides share ({@link UcxBootstrap#regionKey()}, or the application's)
     * @return the sealed form, which {@link #fromBytes(byte[], SecretKey)} reads
     * @throws NullPointerException     if {@code key} is null
     * @throws IllegalArgumentException if {@code key} is not a key HMAC-SHA256 accepts
     */
    public byte[] toBytes(SecretKey key) {
        return encode(Objects.requireNonNull(key, "key"));
    }

    private byte[] encode(SecretKey key) {
        byte[] o = owner.getBytes(StandardCharsets.UTF_8);
        int body = HEADER + o.length + 8 * 3 + 4 + packedKey.length;
        ByteBuffer b = ByteBuffer.allocate(body + (key == null ? 0 : WireSeal.MAC_BYTES))
                .order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(MAGIC).putShort((short) VERSION).putShort((short) (key == null ? 0 : SEALED)).putInt(o.length).put(o)
                .putLong(keyId).putLong(address).putLong(byteSize).putInt(packedKey.length).put(packedKey);
        if (key != null) {
            b.put(WireSeal.mac(key, b.array(), body));
        }
        return b.array();
    }

    /**
     * Reads a region written by {@link #toBytes()} or {@link #toBytes(SecretKey)}, checking its form:
     * length, magic, version, flags and every length inside. A sealed form's seal is kept and checked
     * by the endpoint that is to unpack the key (under its key); an unsealed one is refused there.
     *
     * @param bytes the bytes
     * @return the region
     * @throws NullPointerException     if {@code bytes} is null
     * @throws IllegalArgumentException if the bytes are not such a form: the message says what was
     *                                  wrong (length, magic, version, a field)
     */
    public static RemoteRegion fromBytes(byte[] bytes) {
        return decode(Objects.requireNonNull(bytes, "bytes"), null);
    }

    /**
     * Reads a sealed region ({@link #toBytes(SecretKey)}) and checks its seal under {@code key}
     * before anything else is read from it.
     *
     * @param bytes the sealed form
     * @param key   the key the two sides share
     * @return the region
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if the form is not sealed, its length, magic or version is
     *                                  wrong, or its MAC does not verify under {@code key} (corrupted,
     *                                  forged, or sealed under another key); the message says which
     */
    public static RemoteRegion fromBytes(byte[] bytes, SecretKey key) {
        return decode(Objects.requireNonNull(bytes, "bytes"), Objects.requireNonNull(key, "key"));
    }

    private static RemoteRegion decode(byte[] bytes, SecretKey key) {
        try {
            if (bytes.length < HEADER) {
                throw refused("length " + bytes.length + " bytes (expected: at least " + HEADER + ")");
            }
            ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
            int magic = b.getInt();
            if (magic != MAGIC) {
                throw refused("magic 0x" + Integer.toHexString(magic) + " (expected: 0x" + Integer.toHexString(MAGIC)
                        + ", the bytes of RemoteRegion.toBytes)");
            }
            int version = Short.toUnsignedInt(b.getShort());
            if (version != VERSION) {
                throw refused("version " + version + " (expected: " + VERSION + ")");
            }
            int flags = Short.toUnsignedInt(b.getShort());
            if ((flags & ~SEALED) != 0) {
                throw refused("flags 0x" + Integer.toHexString(flags) + " (expected: 0 or 1, sealed)");
            }
            boolean sealed = flags == SEALED;
            int ownerLength = b.getInt();
            if (ownerLength < 0 || ownerLength > MAX_OWNER || ownerLength > b.remaining() - 28) {
                throw refused("owner length " + ownerLength + " in " + bytes.length + " bytes (expected: 0.."
                        + Math.min(MAX_OWNER, Math.max(0, b.remaining() - 28)) + ")");
            }
            int keyLengthAt = HEADER + ownerLength + 24;
            int keyLength = ByteBuffer.wrap(bytes, keyLengthAt, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
            if (keyLength <= 0 || keyLength > MAX_KEY) {
                throw refused("packed key length " + keyLength + " (expected: 1.." + MAX_KEY + ")");
            }
            long expected = (long) keyLengthAt + 4 + keyLength + (sealed ? WireSeal.MAC_BYTES : 0);
            if (bytes.length != expected) {
                throw refused("length " + bytes.length + " bytes (expected: " + expected + " for an owner of "
                        + ownerLength + " bytes and a packed key of " + keyLength + (sealed ? ", sealed)" : ")"));
            }
            if (key != null) {
                if (!sealed) {
                    throw refused("not sealed (expected: the bytes of RemoteRegion.toBytes(key))");
                }
                if (!WireSeal.verifies(key, bytes, bytes.length)) {
                    throw refused("MAC does not verify under the key (corrupted, forged, or sealed under another"
                            + " key)");
                }
            }
            byte[] o = new byte[ownerLength];
            b.get(o);
            long keyId = b.getLong();
            long address = b.getLong();
            long byteSize = b.getLong();
            b.getInt();
            byte[] packed = new byte[keyLength];
            b.get(packed);
            RemoteRegion r = new RemoteRegion(new String(o, StandardCharsets.UTF_8), keyId, address, byteSize, packed,
                    false, sealed ? bytes.clone() : null);
            if (key != null) {
                r.verifiedUnder = key;
            }
            return r;
        } catch (BufferUnderflowException | IndexOutOfBoundsException e) {
            throw refused("length " + bytes.length + " bytes end early (expected: the bytes of RemoteRegion.toBytes)");
        }
    }

    private static IllegalArgumentException refused(String what) {
        return new IllegalArgumentException("remote region refused: " + what);
    }

    /**
     * Checks that an endpoint may unpack this region's key: exported here, or sealed and verified
     * under the endpoint's key.
     *
     * @throws IllegalArgumentException if not, naming why
     */
    void admit(SecretKey endpointKey, String endpoint) {
        if (local) {
            return;
        }
        if (sealedForm == null) {
            throw new IllegalArgumentException("remote region refused: " + this + " is not sealed (expected: a region"
                    + " exported by a context of this process, or read from RemoteRegion.toBytes(key) /"
                    + " UcxBootstrap.sendRegion; UCX trusts a packed key completely)");
        }
        if (endpointKey == null) {
            throw new IllegalArgumentException("remote region refused: " + endpoint + " has no region key to check "
                    + this + " (expected: an endpoint of UcxBootstrap, or UcxContext.connect with a key)");
        }
        if (verifiedUnder == endpointKey) {
            return;
        }
        if (!WireSeal.verifies(endpointKey, sealedForm, sealedForm.length)) {
            throw new IllegalArgumentException("remote region refused: the MAC of " + this + " does not verify under"
                    + " the key of " + endpoint + " (corrupted, forged, or sealed for another peer)");
        }
        verifiedUnder = endpointKey;
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
