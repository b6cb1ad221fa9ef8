package io.datamem.ucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.code_intelligence.jazzer.junit.FuzzTest;

/**
 * Fuzz target for a remote region's bytes ({@link RemoteRegion#fromBytes}), which arrive from a
 * peer over the network. It parses and checks only: no UCX call is made with what it reads (UCX
 * trusts a packed key completely; what is done before one reaches {@code ucp} is
 * docs/distributed.md's trust model, not this parser's). Only the documented
 * {@link IllegalArgumentException} may escape; a form that reads writes back byte for byte.
 */
class RemoteRegionFuzzTest {

    @FuzzTest
    void fromBytes(byte[] input) {
        RemoteRegion r;
        try {
            r = RemoteRegion.fromBytes(input);
        } catch (IllegalArgumentException refused) {
            return;
        }
        r.toString();
        assertEquals(r, RemoteRegion.fromBytes(r.toBytes()));
        assertArrayEquals(r.packedKey(), RemoteRegion.fromBytes(r.toBytes()).packedKey());
    }
}
