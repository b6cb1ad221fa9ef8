package io.datamem.cuda;

import io.datamem.BackendException;
import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.Device;
import io.datamem.DeviceType;
import io.datamem.MemoryKind;
import io.datamem.MemoryTraits;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.cuda.internal.CudaInterchange;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * CUDA IPC handles: the wire format and every refusal on any machine; two processes sharing
 * device memory where a GPU is present.
 */
class CudaIpcTest {

    private static byte[] driverHandle(int seed) {
        byte[] h = new byte[64];
        for (int i = 0; i < h.length; i++) {
            h[i] = (byte) (seed * 31 + i);
        }
        return h;
    }

    @Test
    void aHandleTravelsAsBytesAndBack() {
        CudaIpc.Handle h = new CudaIpc.Handle(1, driverHandle(7), 4096, 1 << 20);
        byte[] wire = h.toBytes();
        assertEquals(CudaIpc.Handle.WIRE_BYTES, wire.length);
        CudaIpc.Handle back = CudaIpc.Handle.fromBytes(wire);
        assertEquals(h, back);
        assertEquals(h.hashCode(), back.hashCode());
        assertArrayEquals(driverHandle(7), back.handle());
        assertNotEquals(h, new CudaIpc.Handle(1, driverHandle(8), 4096, 1 << 20));
        byte[] given = driverHandle(9);
        CudaIpc.Handle copied = new CudaIpc.Handle(0, given, 0, 0);
        given[0] ^= 1;                                   // the record copied the caller's array
        copied.handle()[1] ^= 1;                         // and hands out copies
        assertArrayEquals(driverHandle(9), copied.handle());
        assertTrue(h.toString().contains("device 1, offset 4096, 1048576 bytes"), h.toString());
    }

    @Test
    void malformedHandlesAreRefusedBeforeAnyDriverCall() {
        byte[] wire = new CudaIpc.Handle(0, driverHandle(1), 0, 64).toBytes();
        assertThrows(NullPointerException.class, () -> CudaIpc.Handle.fromBytes(null));
        String shortWire = assertThrows(IllegalArgumentException.class,
                () -> CudaIpc.Handle.fromBytes(java.util.Arrays.copyOf(wire, 95))).getMessage();
        assertTrue(shortWire.contains("95 bytes (expected: 96)"), shortWire);
        byte[] badMagic = wire.clone();
        badMagic[0] ^= 1;
        assertTrue(assertThrows(IllegalArgumentException.class, () -> CudaIpc.Handle.fromBytes(badMagic))
                .getMessage().contains("not a datamem CUDA IPC handle"));
        byte[] reserved = wire.clone();
        reserved[12] = 1;
        assertThrows(IllegalArgumentException.class, () -> CudaIpc.Handle.fromBytes(reserved));
        byte[] negative = wire.clone();
        negative[23] = (byte) 0x80;                      // offset's top byte: a negative offset
        assertTrue(assertThrows(IllegalArgumentException.class, () -> CudaIpc.Handle.fromBytes(negative))
                .getMessage().contains("offset -"));
        assertThrows(IllegalArgumentException.class, () -> new CudaIpc.Handle(-1, driverHandle(0), 0, 0));
        assertThrows(IllegalArgumentException.class, () -> new CudaIpc.Handle(0, new byte[63], 0, 0));
        assertThrows(IllegalArgumentException.class, () -> new CudaIpc.Handle(0, driverHandle(0), 0, -1));
        assertThrows(NullPointerException.class, () -> new CudaIpc.Handle(0, null, 0, 0));
    }

    @Test
    void onlyContiguousCudaDeviceMemoryHasAHandle() {
        try (NDArray host = NDArray.zeros(DType.FLOAT64, 8)) {
            String m = assertThrows(IllegalArgumentException.class, () -> CudaIpc.handleOf(host)).getMessage();
            assertTrue(m.contains("CUDA device memory") && m.contains("HOST memory"), m);
        }
        MemoryTraits pinned = new MemoryTraits(MemoryKind.HOST_PINNED, new Device(DeviceType.CUDA_HOST, 0), true,
                64, 4096).withInterchange(CudaInterchange.of(MemoryKind.HOST_PINNED, 0));
        DataMemHandler pinnedLike = DataMemHandler.of("pinned-like", CudaTests.hostBacked(pinned));
        try (NDArray a = DataMem.callWith(pinnedLike, () -> NDArray.zeros(DType.FLOAT64, 8))) {
            String m = assertThrows(IllegalArgumentException.class, () -> CudaIpc.handleOf(a)).getMessage();
            assertTrue(m.contains("HOST_PINNED"), m);
        }
        MemoryTraits device = new MemoryTraits(MemoryKind.DEVICE, new Device(DeviceType.CUDA, 0), false, 256, 4096)
                .withInterchange(CudaInterchange.of(MemoryKind.DEVICE, 0));
        DataMemHandler deviceLike = DataMemHandler.of("device-like", CudaTests.hostBacked(device));
        NDArray a = DataMem.callWith(deviceLike, () -> NDArray.empty(DType.FLOAT64, 4, 4));
        try {
            String m = assertThrows(IllegalArgumentException.class, () -> CudaIpc.handleOf(a.transpose()))
                    .getMessage();
            assertTrue(m.contains("not C-contiguous"), m);
            if (!Cuda.isAvailable()) {
                String why = assertThrows(IllegalStateException.class, () -> CudaIpc.handleOf(a)).getMessage();
                assertTrue(why.contains(Cuda.availability().reason()), why);
            } else {
                // host memory posing as device memory: the driver does not know the address
                assertThrows(BackendException.class, () -> CudaIpc.handleOf(a));
            }
        } finally {
            a.close();
        }
        assertThrows(IllegalStateException.class, () -> CudaIpc.handleOf(a));
    }

    @Test
    void openChecksTheShapeAgainstTheHandleAndNeedsCuda() {
        CudaIpc.Handle h = new CudaIpc.Handle(0, driverHandle(3), 0, 64);
        String m = assertThrows(IllegalArgumentException.class, () -> CudaIpc.open(h, DType.FLOAT64, 9)).getMessage();
        assertTrue(m.contains("72 bytes, more than the handle's 64"), m);
        assertThrows(IllegalArgumentException.class, () -> CudaIpc.open(h, DType.FLOAT64, -1));
        assertThrows(NullPointerException.class, () -> CudaIpc.open(null, DType.FLOAT64, 1));
        if (!Cuda.isAvailable()) {
            String why = assertThrows(IllegalStateException.class, () -> CudaIpc.open(h, DType.FLOAT64, 8))
                    .getMessage();
            assertTrue(why.contains(Cuda.availability().reason()), why);
        } else {
            // a forged handle: the driver refuses it, nothing is mapped
            assertThrows(BackendException.class, () -> CudaIpc.open(h, DType.FLOAT64, 8));
        }
        assertEquals(0, CudaIpc.openMappings());
    }

    /**
     * Two processes on one GPU: the child opens the parent's device array through its handle, checks
     * every element, writes new values; the parent reads them. A pooled block goes the same way, and
     * a second open of the same allocation in the child shares one mapping.
     */
    @Test
    @Tag("cuda")
    void anotherProcessOpensDeviceMemoryThroughItsHandle() throws Exception {
        CudaTests.assumeGpu();
        int n = 1 << 20;
        for (String name : List.of("cuda:device=0", "pool(cuda:device=0)")) {
            DataMemHandler handler = DataMem.createHandler(name);
            try (NDArray device = DataMem.callWith(handler, () -> NDArray.empty(DType.FLOAT64, n));
                 NDArray host = NDArray.empty(DType.FLOAT64, n)) {
                for (int i = 0; i < n; i++) {
                    host.setDouble(i * 1.5, i);
                }
                CudaMemory.copy(host, device);
                CudaIpc.Handle handle = CudaIpc.handleOf(device);
                assertEquals(8L * n, handle.byteSize());
                String out = runChild(HexFormat.of().formatHex(handle.toBytes()), n);
                assertTrue(out.contains("child ok"), name + ": " + out);
                try (NDArray back = CudaMemory.toHost(device)) {
                    for (int i = 0; i < n; i += 4099) {
                        assertEquals(i * 2.0, back.getDouble(i), name + " [" + i + "]");
                    }
                    assertEquals((n - 1) * 2.0, back.getDouble(n - 1), name);
                }
            }
        }
        // this process's own handle: the driver refuses to open it here
        try (NDArray device = DataMem.callWith(DataMem.createHandler("cuda:device=0"),
                () -> NDArray.empty(DType.FLOAT64, 16))) {
            CudaIpc.Handle own = CudaIpc.handleOf(device);
            assertThrows(BackendException.class, () -> CudaIpc.open(own, DType.FLOAT64, 16));
            assertEquals(0, CudaIpc.openMappings());
        }
    }

    private static String runChild(String hex, int n) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElseThrow());
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(Child.class.getName());
        cmd.add(hex);
        cmd.add(Integer.toString(n));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the child finished: " + out);
        assertEquals(0, p.exitValue(), out);
        return out;
    }

    /** The importing process. */
    static final class Child {

        private Child() {
        }

        /**
         * Opens the handle twice, checks and rewrites the elements, closes both.
         *
         * @param args the handle in hex, the element count
         */
        public static void main(String[] args) {
            CudaIpc.Handle handle = CudaIpc.Handle.fromBytes(HexFormat.of().parseHex(args[0]));
            int n = Integer.parseInt(args[1]);
            try (NDArray a = CudaIpc.open(handle, DType.FLOAT64, n);
                 NDArray b = CudaIpc.open(handle, DType.FLOAT64, n)) {
                if (CudaIpc.openMappings() != 1 || a.address() != b.address()) {
                    throw new AssertionError("two opens of one allocation: " + CudaIpc.openMappings() + " mappings");
                }
                try (NDArray seen = CudaMemory.toHost(a)) {
                    for (int i = 0; i < n; i++) {
                        if (seen.getDouble(i) != i * 1.5) {
                            throw new AssertionError("[" + i + "] " + seen.getDouble(i));
                        }
                    }
                }
                try (NDArray values = NDArray.empty(DType.FLOAT64, n)) {
                    for (int i = 0; i < n; i++) {
                        values.setDouble(i * 2.0, i);
                    }
                    CudaMemory.copy(values, b);
                }
            }
            if (CudaIpc.openMappings() != 0) {
                throw new AssertionError("a mapping left open");
            }
            System.out.println("child ok");
        }
    }
}
