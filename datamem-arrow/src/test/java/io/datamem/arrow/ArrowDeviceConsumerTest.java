package io.datamem.arrow;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.DeviceType;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.testing.CountingAllocator;
import io.datamem.testing.FakeDeviceAllocator;
import io.datamem.testing.NativeToolchain;
import io.datamem.testing.Nep49SampleAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.List;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A C consumer declared from the C Device Data Interface specification
 * ({@code native/arrow_device_consumer.c}, compiled at test time; skipped without gcc) reads
 * datamem's {@code ArrowDeviceArray}s: device type and id, length, values, and calls the release
 * callbacks after moving the structs, on its thread or a new native one.
 */
class ArrowDeviceConsumerTest {

    @TempDir
    static Path dir;

    private static Arena library;
    private static MethodHandle layout;
    private static MethodHandle consume;

    private final Nep49SampleAllocator sample = new Nep49SampleAllocator();
    private final CountingAllocator counting = new CountingAllocator(sample);
    private final DataMemHandler h = DataMemHandler.of("arrow-c-test", counting);

    @BeforeAll
    static void compile() {
        Path so = NativeToolchain.compileSharedLibrary("native/arrow_device_consumer.c", dir, List.of());
        library = Arena.ofShared();
        SymbolLookup lookup = SymbolLookup.libraryLookup(so, library);
        Linker linker = Linker.nativeLinker();
        layout = linker.downcallHandle(lookup.findOrThrow("layout"), FunctionDescriptor.of(JAVA_LONG, JAVA_INT));
        consume = linker.downcallHandle(lookup.findOrThrow("consume"), FunctionDescriptor.of(JAVA_INT, ADDRESS,
                ADDRESS, JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS, JAVA_INT));
    }

    @AfterAll
    static void unload() {
        if (library != null) {
            library.close();
        }
    }

    @AfterEach
    void nothingLeaks() {
        assertEquals(0, ArrowCData.outstandingExports(), "the C consumer released every struct");
        assertEquals(List.of(), sample.violations());
        assertEquals(0, counting.liveBlocks());
    }

    /** What the consumer saw. */
    private record Seen(long deviceType, long deviceId, long values, double sum) {
    }

    private static Seen consume(NDArray a, int mode) throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment schema = arena.allocate(ArrowCData.ARROW_SCHEMA);
            MemorySegment array = arena.allocate(ArrowCData.ARROW_DEVICE_ARRAY);
            ArrowCData.exportDeviceArray(a, schema, array);
            MemorySegment device = arena.allocate(JAVA_LONG, 2);
            MemorySegment values = arena.allocate(JAVA_LONG);
            MemorySegment sum = arena.allocate(JAVA_DOUBLE);
            MemorySegment err = arena.allocate(256);
            int rc = (int) consume.invokeExact(schema, array, mode, device, values, sum, err, 256);
            assertEquals(0, rc, () -> err.getString(0));
            assertEquals(0, schema.get(JAVA_LONG, 56), "moved by the consumer");
            return new Seen(device.getAtIndex(JAVA_LONG, 0), device.getAtIndex(JAVA_LONG, 1), values.get(JAVA_LONG, 0),
                    sum.get(JAVA_DOUBLE, 0));
        }
    }

    private NDArray iota(DType dtype, long... shape) {
        NDArray a = DataMem.callWith(h, () -> NDArray.empty(dtype, shape));
        long[] v = new long[(int) a.size()];
        for (int i = 0; i < v.length; i++) {
            v[i] = i + 1;
        }
        a.copyFrom(v);
        return a;
    }

    @Test
    void layoutsAgreeWithTheSpecificationsDeclarations() throws Throwable {
        long[] expected = {
                ArrowCData.ARROW_SCHEMA.byteSize(), ArrowCData.ARROW_ARRAY.byteSize(),
                ArrowCData.ARROW_DEVICE_ARRAY.byteSize(), ArrowCData.ARROW_SCHEMA.byteOffset(groupElement("release")),
                ArrowCData.ARROW_ARRAY.byteOffset(groupElement("release")),
                ArrowCData.ARROW_DEVICE_ARRAY.byteOffset(groupElement("device_id")),
                ArrowCData.ARROW_DEVICE_ARRAY.byteOffset(groupElement("device_type")),
                ArrowCData.ARROW_DEVICE_ARRAY.byteOffset(groupElement("sync_event")),
                ArrowCData.ARROW_DEVICE_ARRAY.byteOffset(groupElement("reserved"))};
        for (int i = 0; i < expected.length; i++) {
            assertEquals(expected[i], (long) layout.invokeExact(i), "layout " + i);
        }
    }

    @Test
    void cpuArraysAreReadAndReleasedOnEitherThread() throws Throwable {
        for (int mode = 0; mode < 2; mode++) {
            try (NDArray a = iota(DType.INT32, 100)) {
                Seen seen = consume(a, mode);
                assertEquals(new Seen(DeviceType.CPU.code(), 0, 100, 5050), seen);
            }
            try (NDArray t = iota(DType.FLOAT64, 4, 5)) {
                Seen seen = consume(t, mode);
                assertEquals(new Seen(DeviceType.CPU.code(), 0, 20, 210), seen, "a fixed_shape_tensor");
            }
            try (NDArray base = iota(DType.INT16, 6, 2); NDArray column = base.transpose()) {
                Seen seen = consume(column, mode);
                assertEquals(new Seen(DeviceType.CPU.code(), 0, 12, 78), seen, "a copy, in C order");
            }
        }
    }

    @Test
    void deviceArraysCarryTheirDevice() throws Throwable {
        FakeDeviceAllocator cuda = FakeDeviceAllocator.cudaDevice(counting);
        DataMemHandler gpu = DataMemHandler.of("fake-cuda", cuda);
        try (NDArray a = DataMem.callWith(gpu, () -> NDArray.empty(DType.FLOAT32, 8, 8))) {
            Seen seen = consume(a, 1);
            assertEquals(new Seen(DeviceType.CUDA.code(), 1, 64, 0), seen, "ARROW_DEVICE_CUDA, device 1; values"
                    + " not read by the host");
            assertEquals(1, cuda.synchronizations().size());
        }
    }
}
