package io.datamem.ucx;

import org.junit.jupiter.api.Test;

import javax.crypto.SecretKey;
import javax.crypto.spec.SecretKeySpec;
import java.util.Arrays;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The sealed wire form of a remote region, without UCX: what is refused and what each refusal says. */
class RemoteRegionWireTest {

    private static final SecretKey KEY = new SecretKeySpec(new byte[32], "HmacSHA256");

    private static RemoteRegion region() {
        byte[] packed = new byte[120];
        new Random(1).nextBytes(packed);
        return new RemoteRegion("host:1/ctx", 7, 0x7f00_0000_1000L, 65536, packed);
    }

    private static String refusal(byte[] bytes) {
        return assertThrows(IllegalArgumentException.class, () -> RemoteRegion.fromBytes(bytes, KEY)).getMessage();
    }

    @Test
    void aSealedFormRoundTripsUnderItsKeyOnly() {
        byte[] sealed = region().toBytes(KEY);
        assertEquals(region(), RemoteRegion.fromBytes(sealed, KEY));
        assertEquals(region(), RemoteRegion.fromBytes(sealed));
        assertTrue(refusal(region().toBytes(new SecretKeySpec(new byte[] {1}, "HmacSHA256"))).contains("MAC"));
        assertTrue(refusal(region().toBytes()).contains("not sealed"));
    }

    @Test
    void everyTruncationAndExtensionIsRefusedByLength() {
        byte[] sealed = region().toBytes(KEY);
        for (int n = 0; n < sealed.length; n++) {
            String m = refusal(Arrays.copyOf(sealed, n));
            assertTrue(m.contains("length"), n + ": " + m);
            byte[] cut = Arrays.copyOf(sealed, n);
            assertThrows(IllegalArgumentException.class, () -> RemoteRegion.fromBytes(cut));
        }
        assertTrue(refusal(Arrays.copyOf(sealed, sealed.length + 1)).contains("length"));
    }

    @Test
    void everySingleBitFlipIsRefusedNamingWhatWasWrong() {
        byte[] sealed = region().toBytes(KEY);
        for (int bit = 0; bit < sealed.length * 8; bit++) {
            byte[] flipped = sealed.clone();
            flipped[bit / 8] ^= (byte) (1 << (bit % 8));
            String m = refusal(flipped);
            assertTrue(m.matches(".*(magic|version|flags|length|MAC|sealed).*"), bit + ": " + m);
        }
        byte[] v3 = sealed.clone();
        v3[4] = 3;
        assertTrue(refusal(v3).contains("version 3 (expected: 2)"));
        byte[] badMac = sealed.clone();
        badMac[badMac.length - 1] ^= 1;
        assertTrue(refusal(badMac).contains("MAC does not verify"));
    }

    @Test
    void randomBytesAreRefused() {
        Random r = new Random(2);
        for (int i = 0; i < 20_000; i++) {
            byte[] junk = new byte[r.nextInt(400)];
            r.nextBytes(junk);
            if (i % 2 == 0 && junk.length >= 8) {
                System.arraycopy(region().toBytes(KEY), 0, junk, 0, 8);
            }
            refusal(junk);
        }
    }
}
