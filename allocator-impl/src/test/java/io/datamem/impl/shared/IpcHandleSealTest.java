package io.datamem.impl.shared;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import org.junit.jupiter.api.Test;

import javax.crypto.SecretKey;
import javax.crypto.spec.SecretKeySpec;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The sealed wire form of an IPC handle: corrupted, truncated, forged and foreign-key forms refused
 * before the kernel is asked; an unsealed handle naming another process refused by open.
 */
class IpcHandleSealTest {

    private static final SecretKey KEY = new SecretKeySpec(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}, "HmacSHA256");
    private static final IpcHandle HANDLE = new IpcHandle(1234, 7, 0x0123456789abcdefL, -2, 99, 8192, 4096, 100);

    private static String refusal(byte[] bytes) {
        return assertThrows(IllegalArgumentException.class, () -> IpcHandle.fromBytes(bytes, KEY)).getMessage();
    }

    @Test
    void theSealedFormRoundTripsUnderItsKeyOnly() {
        byte[] sealed = HANDLE.toBytes(KEY);
        assertEquals(IpcHandle.SEALED_BYTES, sealed.length);
        assertEquals(HANDLE, IpcHandle.fromBytes(sealed, KEY));
        assertTrue(refusal(HANDLE.toBytes(new SecretKeySpec(new byte[] {9}, "HmacSHA256"))).contains("MAC"));
        assertTrue(refusal(Arrays.copyOf(HANDLE.toBytes(), IpcHandle.SEALED_BYTES)).contains("version 1"));
    }

    @Test
    void everyBitFlipTruncationAndRandomFormIsRefused() {
        byte[] sealed = HANDLE.toBytes(KEY);
        for (int bit = 0; bit < sealed.length * 8; bit++) {
            byte[] flipped = sealed.clone();
            flipped[bit / 8] ^= (byte) (1 << (bit % 8));
            String m = refusal(flipped);
            assertTrue(m.contains("magic") || m.contains("version") || m.contains("MAC"), bit + ": " + m);
        }
        for (int n = 0; n <= sealed.length + 8; n++) {
            if (n != sealed.length) {
                assertTrue(refusal(Arrays.copyOf(sealed, n)).contains("length " + n), "length " + n);
            }
        }
        Random r = new Random(3);
        for (int i = 0; i < 20_000; i++) {
            byte[] junk = new byte[i % 2 == 0 ? IpcHandle.SEALED_BYTES : r.nextInt(200)];
            r.nextBytes(junk);
            if (i % 4 == 0) {
                System.arraycopy(sealed, 0, junk, 0, 8);
            }
            refusal(junk);
        }
    }

    @Test
    void anUnsealedHandleNamingAnotherProcessIsRefusedBeforeTheKernel() {
        IpcHandle forged = IpcHandle.fromBytes(new IpcHandle(1, 0, 5, 6, 7, 4096, 0, 64).toBytes());
        String m = assertThrows(IllegalArgumentException.class, () -> SharedMemory.open(forged)).getMessage();
        assertTrue(m.contains("unsealed") && m.contains("process 1"), m);
    }

    @Test
    void aSealedHandleOfALiveBlockOpens() {
        DataMemAllocator shared = DataMem.createHandler("shared").allocator();
        MemorySegment block = shared.malloc(4096).reinterpret(4096);
        try {
            block.set(ValueLayout.JAVA_LONG, 8, 0x5eed);
            IpcHandle h = IpcHandle.fromBytes(SharedMemory.handleOf(block).toBytes(KEY), KEY);
            try (ImportedMemory m = SharedMemory.open(h)) {
                assertEquals(0x5eed, m.segment().get(ValueLayout.JAVA_LONG, 8));
            }
            IpcHandle unsealedOwn = IpcHandle.fromBytes(SharedMemory.handleOf(block).toBytes());
            try (ImportedMemory m = SharedMemory.open(unsealedOwn)) {
                assertEquals(0x5eed, m.segment().get(ValueLayout.JAVA_LONG, 8), "this process's own handle");
            }
        } finally {
            shared.free(block, 4096);
        }
    }
}
