package io.datamem.ucx;

import javax.crypto.Mac;
import javax.crypto.SecretKey;
import javax.crypto.spec.SecretKeySpec;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Objects;

/** HMAC-SHA256 over wire forms, and the keys two sides share for it. */
final class WireSeal {

    static final String ALGORITHM = "HmacSHA256";
    static final int MAC_BYTES = 32;
    static final int NONCE_BYTES = 32;
    private static final SecureRandom RANDOM = new SecureRandom();

    private WireSeal() {
    }

    /** The MAC of {@code bytes[0, length)} under {@code key}. */
    static byte[] mac(SecretKey key, byte[] bytes, int length) {
        Objects.requireNonNull(key, "key");
        try {
            Mac m = Mac.getInstance(ALGORITHM);
            m.init(key);
            m.update(bytes, 0, length);
            return m.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("key: " + key.getAlgorithm() + " key (expected: a key "
                    + ALGORITHM + " accepts, such as new SecretKeySpec(bytes, \"" + ALGORITHM + "\")): " + e, e);
        }
    }

    /** Whether the last MAC_BYTES of {@code bytes[0, length)} are the MAC of the rest (constant time). */
    static boolean verifies(SecretKey key, byte[] bytes, int length) {
        byte[] expected = mac(key, bytes, length - MAC_BYTES);
        return MessageDigest.isEqual(expected, Arrays.copyOfRange(bytes, length - MAC_BYTES, length));
    }

    static byte[] nonce() {
        byte[] n = new byte[NONCE_BYTES];
        RANDOM.nextBytes(n);
        return n;
    }

    /** The key of a connection: SHA-256 of a label and both sides' nonces, in a fixed order. */
    static SecretKey connectionKey(byte[] mine, byte[] theirs) {
        boolean first = Arrays.compareUnsigned(mine, theirs) <= 0;
        try {
            MessageDigest d = MessageDigest.getInstance("SHA-256");
            d.update("datamem-ucx-region-key-v1".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            d.update(first ? mine : theirs);
            d.update(first ? theirs : mine);
            return new SecretKeySpec(d.digest(), ALGORITHM);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 is missing from this JDK", e);
        }
    }
}
