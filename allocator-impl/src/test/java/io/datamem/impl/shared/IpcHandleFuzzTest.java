package io.datamem.impl.shared;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import com.code_intelligence.jazzer.junit.FuzzTest;

/**
 * Fuzz target for the IPC handle's wire form ({@link IpcHandle#fromBytes}), which arrives over
 * a socket from another process. Only the documented {@link IllegalArgumentException} may
 * escape; a form that reads writes back byte for byte.
 */
class IpcHandleFuzzTest {

    @FuzzTest
    void fromBytes(byte[] input) {
        IpcHandle h;
        try {
            h = IpcHandle.fromBytes(input);
        } catch (IllegalArgumentException refused) {
            return;
        }
        h.toString();
        assertArrayEquals(input, h.toBytes());
    }
}
