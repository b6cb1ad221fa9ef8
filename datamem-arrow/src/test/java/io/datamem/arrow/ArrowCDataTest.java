package io.datamem.arrow;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.Device;
import io.datamem.DeviceType;
import io.datamem.MemoryKind;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.array.Slice;
import io.datamem.buffer.BufferException;
import io.datamem.testing.CountingAllocator;
import io.datamem.testing.FakeDeviceAllocator;
import io.datamem.testing.Nep49SampleAllocator;
import io.datamem.testing.Rounds;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The C Data and C Device Data interfaces in Java: struct layouts, export, import, round trips,
 * release from other threads and twice, the pin, and hostile structs.
 */
class ArrowCDataTest {

    private final Nep49SampleAllocator sample = new Nep49SampleAllocator();
    private final CountingAllocator counting = new CountingAllocator(sample);
    private final DataMemHandler h = DataMemHandler.of("arrow-test", counting);
    private final Arena arena = Arena.ofShared();

    /** {@code void (*release)(struct ArrowXxx*)} called as C calls it: a downcall to the function pointer. */
    private static final java.lang.invoke.MethodHandle CALL_RELEASE = java.lang.foreign.Linker.nativeLinker()
            .downcallHandle(java.lang.foreign.FunctionDescriptor.ofVoid(ADDRESS));

    @Test
    void anImportOfItsOwnExportTakesTheStructOverAndReleasesItOnce() throws Throwable {
        try (NDArray a = NDArray.zeros(DType.FLOAT64, 4)) {
            MemorySegment schema = arena.allocate(ArrowCData.ARROW_SCHEMA);
            MemorySegment array = arena.allocate(ArrowCData.ARROW_ARRAY);
            ArrowCData.exportArray(a, schema, array);
            try (NDArray back = ArrowCData.importArray(schema, array)) {
                assertEquals(a.address(), back.address(), "zero-copy");
                assertEquals(0, array.get(JAVA_LONG, 64), "the caller's struct is marked released");
                assertEquals(0, schema.get(JAVA_LONG, 56), "the schema is released");
                assertEquals(1, ArrowCData.outstandingExports(), "the array's export is held by the import");
                assertThrows(IllegalStateException.class, a::close, "the array is still pinned");
            }
            assertEquals(0, ArrowCData.outstandingExports(), "closing the import released the export");

            // a copy of the struct released behind the import's back: the export goes once
            ArrowCData.exportArray(a, schema, array);
            MemorySegment copy = arena.allocate(ArrowCData.ARROW_ARRAY);
            MemorySegment.copy(array, 0, copy, 0, ArrowCData.ARROW_ARRAY.byteSize());
            NDArray back = ArrowCData.importArray(schema, array);
            CALL_RELEASE.invokeExact(copy.get(ADDRESS, 64), copy);
            assertEquals(0, ArrowCData.outstandingExports());
            back.close();   // logged, nothing released twice
            assertEquals(0, ArrowCData.outstandingExports());
        }
    }

    @Test
    void releasesRacingOnOneStructReleaseItOnceAndForgedTokensNothing() throws Throwable {
        try (NDArray a = NDArray.zeros(DType.FLOAT64, 8)) {
            MemorySegment schema = arena.allocate(ArrowCData.ARROW_SCHEMA);
            MemorySegment array = arena.allocate(ArrowCData.ARROW_ARRAY);
            ArrowCData.exportArray(a, schema, array);
            MemorySegment release = array.get(ADDRESS, 64);
            long token = array.get(JAVA_LONG, 72);
            for (long forged : new long[] {token + (2L << 32), token ^ (1L << 32), token + 1_000_000,
                    schema.get(JAVA_LONG, 64) /* the schema's: another kind */, 0}) {
                array.set(JAVA_LONG, 72, forged);
                CALL_RELEASE.invokeExact(release, array);
                assertEquals(2, ArrowCData.outstandingExports(), "a forged token released nothing");
                assertNotEquals(0, array.get(JAVA_LONG, 64), "and marked nothing released");
            }
            array.set(JAVA_LONG, 72, token);
            CALL_RELEASE.invokeExact(release, array);
            assertEquals(0, array.get(JAVA_LONG, 64));
            CALL_RELEASE.invokeExact(schema.get(ADDRESS, 56), schema);
            assertEquals(0, ArrowCData.outstandingExports());

            int threads = 4;
            int rounds = 1000;
            MemorySegment[] copies = new MemorySegment[threads];
            for (int t = 0; t < threads; t++) {
                copies[t] = arena.allocate(ArrowCData.ARROW_ARRAY);
            }
            List<Throwable> failures = Rounds.run(threads, rounds, () -> {
                ArrowCData.exportArray(a, schema, array);
                ArrowCData.releaseSchema(schema);
                for (MemorySegment c : copies) {   // each thread releases its own copy of the one struct
                    MemorySegment.copy(array, 0, c, 0, ArrowCData.ARROW_ARRAY.byteSize());
                }
            }, null, t -> {
                        CALL_RELEASE.invokeExact(release, copies[t]);   // a statement: invokeExact's type is (..)void
                    });
            assertEquals(List.of(), failures);
            assertEquals(0, ArrowCData.outstandingExports(), "each export released once");
        }   // closes: the pin was released exactly once per export
    }

    @Test
    void aVectorsSchemaAndArrayShareASlotAndReleaseOnceEachInEitherOrderFromAnyThread() throws Throwable {
        MemorySegment schema = arena.allocate(ArrowCData.ARROW_SCHEMA);
        MemorySegment array = arena.allocate(ArrowCData.ARROW_ARRAY);
        NDArray b = NDArray.zeros(DType.INT32, 3);
        ArrowCData.exportArray(b, schema, array);
        long schemaToken = schema.get(JAVA_LONG, 64);
        schema.set(JAVA_LONG, 64, array.get(JAVA_LONG, 72));   // the array's token on the schema
        CALL_RELEASE.invokeExact(schema.get(ADDRESS, 56), schema);
        assertEquals(2, ArrowCData.outstandingExports(), "another kind's token released nothing");
        assertNotEquals(0, schema.get(JAVA_LONG, 56), "and marked nothing released");
        schema.set(JAVA_LONG, 64, schemaToken);
        ArrowCData.releaseArray(array);
        assertEquals(1, ArrowCData.outstandingExports(), "the schema is still out");
        b.close();   // the array's release dropped the pin, whatever the schema does
        ArrowCData.releaseSchema(schema);
        assertEquals(0, ArrowCData.outstandingExports());

        try (NDArray a = NDArray.zeros(DType.FLOAT64, 8)) {
            int threads = 4;   // two release copies of the schema, two copies of the array, at once
            int rounds = 500;
            MemorySegment[] copies = new MemorySegment[threads];
            for (int t = 0; t < threads; t++) {
                copies[t] = arena.allocate(ArrowCData.ARROW_ARRAY);
            }
            // the schema's release callback is at offset 56, the array's at 64 (read per round: copied anew)
            List<Throwable> failures = Rounds.run(threads, rounds, () -> {
                ArrowCData.exportArray(a, schema, array);
                for (int t = 0; t < threads; t++) {
                    MemorySegment from = t < 2 ? schema : array;
                    MemorySegment.copy(from, 0, copies[t], 0, t < 2 ? ArrowCData.ARROW_SCHEMA.byteSize()
                            : ArrowCData.ARROW_ARRAY.byteSize());
                }
            }, () -> assertEquals(0, ArrowCData.outstandingExports(), "structs left after a round"),
                    t -> {
                        CALL_RELEASE.invokeExact(copies[t].get(ADDRESS, t < 2 ? 56 : 64), copies[t]);   // a statement: invokeExact's type is (..)void
                    });
            assertEquals(List.of(), failures);
        }   // closes: each export's pin was released exactly once
    }

    @AfterEach
    void nothingLeaks() {
        arena.close();
        assertEquals(0, ArrowCData.outstandingExports(), "every exported struct released");
        assertEquals(List.of(), sample.violations());
        assertEquals(0, counting.liveBlocks(), "every array closed and freed");
    }

    private NDArray array(DType dtype, long... shape) {
        return DataMem.callWith(h, () -> NDArray.zeros(dtype, shape));
    }

    private static void pattern(NDArray a) {
        long[] flat = new long[(int) a.size()];
        for (int i = 0; i < flat.length; i++) {
            flat[i] = a.dtype() == DType.BOOL ? (i % 3 == 0 ? 1 : 0) : (i * 7L) % 100;
        }
        a.copyFrom(flat);
    }

    private MemorySegment schema() {
        return arena.allocate(ArrowCData.ARROW_SCHEMA);
    }

    private MemorySegment array() {
        return arena.allocate(ArrowCData.ARROW_ARRAY);
    }

    private static String cString(long address) {
        return MemorySegment.ofAddress(address).reinterpret(256).getString(0, StandardCharsets.UTF_8);
    }

    static List<DType> exported() {
        return List.of(DType.BOOL, DType.INT8, DType.UINT8, DType.INT16, DType.UINT16, DType.INT32, DType.UINT32,
                DType.INT64, DType.UINT64, DType.FLOAT16, DType.FLOAT32, DType.FLOAT64);
    }

    // ---------------------------------------------------------------------------------------------
    // Layouts

    @Test
    void layoutsAreThoseOfAbiH() {
        assertEquals(72, ArrowCData.ARROW_SCHEMA.byteSize());
        assertEquals(80, ArrowCData.ARROW_ARRAY.byteSize());
        assertEquals(128, ArrowCData.ARROW_DEVICE_ARRAY.byteSize());
        assertEquals(56, ArrowCData.ARROW_SCHEMA.byteOffset(groupElement("release")));
        assertEquals(64, ArrowCData.ARROW_ARRAY.byteOffset(groupElement("release")));
        assertEquals(80, ArrowCData.ARROW_DEVICE_ARRAY.byteOffset(groupElement("device_id")));
        assertEquals(88, ArrowCData.ARROW_DEVICE_ARRAY.byteOffset(groupElement("device_type")));
        assertEquals(96, ArrowCData.ARROW_DEVICE_ARRAY.byteOffset(groupElement("sync_event")));
        assertEquals(104, ArrowCData.ARROW_DEVICE_ARRAY.byteOffset(groupElement("reserved")));
    }

    @Test
    void formatsAreArrowsPrimitiveFormats() {
        assertEquals("i", ArrowCData.format(DType.INT32).orElseThrow());
        assertEquals("L", ArrowCData.format(DType.UINT64).orElseThrow());
        assertEquals("e", ArrowCData.format(DType.FLOAT16).orElseThrow());
        assertEquals("g", ArrowCData.format(DType.FLOAT64).orElseThrow());
        assertEquals("b", ArrowCData.format(DType.BOOL).orElseThrow());
        assertTrue(ArrowCData.format(DType.COMPLEX64).isEmpty());
        assertTrue(ArrowCData.format(DType.BFLOAT16).isEmpty());
    }

    // ---------------------------------------------------------------------------------------------
    // Export

    @Test
    void aOneDimensionalArrayIsAPrimitiveArrayOverItsMemory() {
        try (NDArray a = array(DType.INT32, 5)) {
            pattern(a);
            MemorySegment s = schema();
            MemorySegment out = array();
            ArrowCData.exportArray(a, s, out);
            assertEquals("i", cString(s.get(JAVA_LONG, 0)));
            assertEquals(0, s.get(JAVA_LONG, 16), "no metadata");
            assertEquals(0, s.get(JAVA_LONG, 32), "no children");
            assertEquals(5, out.get(JAVA_LONG, 0), "length");
            assertEquals(0, out.get(JAVA_LONG, 8), "null_count");
            assertEquals(0, out.get(JAVA_LONG, 16), "offset");
            assertEquals(2, out.get(JAVA_LONG, 24), "n_buffers");
            MemorySegment buffers = MemorySegment.ofAddress(out.get(JAVA_LONG, 40)).reinterpret(16);
            assertEquals(0, buffers.get(JAVA_LONG, 0), "no validity bitmap");
            assertEquals(a.address(), buffers.get(JAVA_LONG, 8), "the array's own memory");
            assertThrows(IllegalStateException.class, a::close, "the export pins the array");
            ArrowCData.releaseArray(out);
            assertEquals(0, out.get(JAVA_LONG, 64), "release marks the struct released");
            assertEquals(1, ArrowCData.outstandingExports(), "the schema is still out");
            ArrowCData.releaseSchema(s);
            assertEquals(0, s.get(JAVA_LONG, 56));
        }
    }

    @Test
    void anNDimensionalArrayIsAFixedShapeTensor() {
        try (NDArray a = array(DType.FLOAT32, 4, 2, 3)) {
            pattern(a);
            MemorySegment s = schema();
            MemorySegment out = array();
            ArrowCData.exportArray(a, s, out);
            assertEquals("+w:6", cString(s.get(JAVA_LONG, 0)));
            assertEquals(1, s.get(JAVA_LONG, 32));
            MemorySegment child = MemorySegment.ofAddress(
                    MemorySegment.ofAddress(s.get(JAVA_LONG, 40)).reinterpret(8).get(JAVA_LONG, 0)).reinterpret(72);
            assertEquals("f", cString(child.get(JAVA_LONG, 0)));
            Map<String, String> metadata = ArrowMetadata.decode(s.get(JAVA_LONG, 16));
            assertEquals(Map.of(ArrowCData.EXTENSION_NAME, ArrowCData.FIXED_SHAPE_TENSOR,
                    ArrowCData.EXTENSION_METADATA, "{\"shape\":[2,3]}"), metadata);
            assertEquals(4, out.get(JAVA_LONG, 0));
            assertEquals(1, out.get(JAVA_LONG, 24), "n_buffers: the validity bitmap only");
            MemorySegment childArray = MemorySegment.ofAddress(
                    MemorySegment.ofAddress(out.get(JAVA_LONG, 48)).reinterpret(8).get(JAVA_LONG, 0)).reinterpret(80);
            assertEquals(24, childArray.get(JAVA_LONG, 0));
            assertEquals(a.address(), MemorySegment.ofAddress(childArray.get(JAVA_LONG, 40)).reinterpret(16)
                    .get(JAVA_LONG, 8));
            try (NDArray back = ArrowCData.importArray(s, out)) {
                assertArrayEquals(new long[] {4, 2, 3}, back.shape());
                assertEquals(a.address(), back.address(), "zero-copy both ways");
                assertArrayEquals(a.toDoubleArray(), back.toDoubleArray());
                assertTrue(back.isReadOnly());
                assertEquals(ArrowCData.HANDLER_NAME, back.handler().name());
                assertEquals(0, s.get(JAVA_LONG, 56), "the schema was released by the import");
                assertEquals(0, out.get(JAVA_LONG, 64), "the array was moved");
            }
        }
    }

    @ParameterizedTest
    @MethodSource("exported")
    void everyDtypeRoundTrips(DType dtype) {
        for (long[] shape : List.of(new long[] {9}, new long[] {3, 5}, new long[] {}, new long[] {0})) {
            try (NDArray a = array(dtype, shape)) {
                pattern(a);
                MemorySegment s = schema();
                MemorySegment out = array();
                ArrowCData.exportArray(a, s, out);
                try (NDArray back = ArrowCData.importArray(s, out)) {
                    assertEquals(dtype, back.dtype());
                    long[] expected = shape.length == 0 ? new long[] {1} : shape;
                    if (dtype == DType.BOOL && shape.length == 2) {
                        throw new AssertionError("bool tensors are refused on import");
                    }
                    assertArrayEquals(expected, back.shape());
                    assertArrayEquals(a.toDoubleArray(), back.toDoubleArray(), dtype + " " + List.of(shape));
                    if (dtype != DType.BOOL && a.size() > 0) {
                        assertEquals(a.address(), back.address());
                    }
                } catch (BufferException e) {
                    assertTrue(dtype == DType.BOOL && shape.length == 2, e.getMessage());
                    ArrowCData.releaseArray(out);
                    ArrowCData.releaseSchema(s);
                }
            }
        }
    }

    @Test
    void aNonContiguousArrayIsExportedAsACopyTheSourceMayCloseBefore() {
        NDArray a = array(DType.INT64, 4, 6);
        pattern(a);
        NDArray t = a.transpose();
        MemorySegment s = schema();
        MemorySegment out = array();
        ArrowCData.exportArray(t, s, out);
        double[] expected = t.toDoubleArray();
        a.close();   // the copy is the export's: the source is free to go
        try (NDArray back = ArrowCData.importArray(s, out)) {
            assertArrayEquals(new long[] {6, 4}, back.shape());
            assertArrayEquals(expected, back.toDoubleArray());
        }
    }

    @Test
    void releaseAfterTheExportedViewIsClosed() {
        try (NDArray a = array(DType.UINT16, 10)) {
            pattern(a);
            NDArray view = a.slice(Slice.range(2, 8));
            MemorySegment s = schema();
            MemorySegment out = array();
            ArrowCData.exportArray(view, s, out);
            view.close();
            assertThrows(IllegalStateException.class, a::close, "the export still pins the memory");
            long data = MemorySegment.ofAddress(out.get(JAVA_LONG, 40)).reinterpret(16).get(JAVA_LONG, 8);
            assertEquals(14, MemorySegment.ofAddress(data).reinterpret(2).get(java.lang.foreign.ValueLayout.JAVA_SHORT,
                    0), "element 2 of the base");
            ArrowCData.releaseArray(out);
            ArrowCData.releaseSchema(s);
        }
    }

    @Test
    void releaseFromAnotherThreadAfterJavaDroppedTheArray() throws Exception {
        MemorySegment s = schema();
        MemorySegment out = array();
        exportAndForget(s, out);
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(10);
        }
        assertEquals(1, counting.liveBlocks(), "the export keeps the array alive");
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread t = Thread.ofPlatform().start(() -> {
            try {
                ArrowCData.releaseArray(out);
                ArrowCData.releaseSchema(s);
            } catch (Throwable e) {
                failure.set(e);
            }
        });
        t.join();
        assertEquals(null, failure.get());
        assertEquals(0, ArrowCData.outstandingExports());
        for (int i = 0; i < 200 && counting.liveBlocks() > 0; i++) {
            System.gc();
            Thread.sleep(20);
            NDArray.reclaim();   // the leak is handed to this thread, which touched the array's elements
        }
        assertEquals(0, counting.liveBlocks(), "collected once released");
    }

    private void exportAndForget(MemorySegment s, MemorySegment out) {
        NDArray a = array(DType.FLOAT64, 3, 3);
        pattern(a);
        ArrowCData.exportArray(a, s, out);
    }

    @Test
    void anImportedArrayJavaDroppedIsReleasedByTheCleaner() throws Exception {
        NDArray a = array(DType.INT32, 16);
        MemorySegment s = schema();
        MemorySegment out = array();
        ArrowCData.exportArray(a, s, out);
        importAndForget(s, out);
        for (int i = 0; i < 200 && ArrowCData.outstandingExports() > 0; i++) {
            System.gc();
            Thread.sleep(20);
        }
        assertEquals(0, ArrowCData.outstandingExports(), "the collected import called release");
        a.close();   // unpinned by that release
    }

    private static void importAndForget(MemorySegment s, MemorySegment out) {
        NDArray imported = ArrowCData.importArray(s, out);
        assertEquals(16, imported.size());
    }

    @Test
    void aSecondReleaseIsANoOp() throws Throwable {
        try (NDArray a = array(DType.INT8, 3, 2)) {
            MemorySegment s = schema();
            MemorySegment out = array();
            ArrowCData.exportArray(a, s, out);
            MemorySegment release = out.get(ADDRESS, 64);
            MemorySegment schemaRelease = s.get(ADDRESS, 56);
            ArrowReleases.CALL_RELEASE.invokeExact(release, out);
            ArrowReleases.CALL_RELEASE.invokeExact(schemaRelease, s);
            assertEquals(0, ArrowCData.outstandingExports());
            ArrowReleases.CALL_RELEASE.invokeExact(release, out);          // marked released: ignored
            ArrowReleases.CALL_RELEASE.invokeExact(schemaRelease, s);
            out.set(ADDRESS, 64, release);                               // a stale struct: unknown token, ignored
            out.set(JAVA_LONG, 72, 123456789L);
            ArrowReleases.CALL_RELEASE.invokeExact(release, out);
            assertEquals(0, ArrowCData.outstandingExports());
        }
    }

    @Test
    void aMovedChildOutlivesItsParent() throws Throwable {
        try (NDArray a = array(DType.INT32, 2, 3)) {
            pattern(a);
            MemorySegment s = schema();
            MemorySegment out = array();
            ArrowCData.exportArray(a, s, out);
            ArrowCData.releaseSchema(s);
            // Move the child out, as the specification allows, then release the parent.
            MemorySegment childSlot = MemorySegment.ofAddress(
                    MemorySegment.ofAddress(out.get(JAVA_LONG, 48)).reinterpret(8).get(JAVA_LONG, 0)).reinterpret(80);
            MemorySegment moved = array();
            MemorySegment.copy(childSlot, 0, moved, 0, 80);
            childSlot.set(JAVA_LONG, 64, 0);
            ArrowCData.releaseArray(out);
            assertEquals(1, ArrowCData.outstandingExports(), "the moved child holds the export");
            assertThrows(IllegalStateException.class, a::close);
            long data = MemorySegment.ofAddress(moved.get(JAVA_LONG, 40)).reinterpret(16).get(JAVA_LONG, 8);
            assertEquals(a.address(), data);
            ArrowCData.releaseArray(moved);
            assertEquals(0, ArrowCData.outstandingExports());
        }
    }

    @Test
    void concurrentReleasesRunOnce() throws Exception {
        for (int round = 0; round < 20; round++) {
            try (NDArray a = array(DType.INT16, 8, 2)) {
                MemorySegment s = schema();
                MemorySegment out = array();
                ArrowCData.exportArray(a, s, out);
                MemorySegment release = out.get(ADDRESS, 64);
                CountDownLatch go = new CountDownLatch(1);
                List<Thread> threads = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    threads.add(Thread.ofPlatform().start(() -> {
                        try {
                            go.await();
                            ArrowReleases.CALL_RELEASE.invokeExact(release, out);
                        } catch (Throwable e) {
                            throw new AssertionError(e);
                        }
                    }));
                }
                go.countDown();
                for (Thread t : threads) {
                    t.join();
                }
                ArrowCData.releaseSchema(s);
                assertEquals(0, ArrowCData.outstandingExports());
            }
        }
    }

    @Test
    void refusals() {
        try (NDArray c = array(DType.COMPLEX64, 3); NDArray b = array(DType.BFLOAT16, 3)) {
            assertThrows(BufferException.class, () -> ArrowCData.exportArray(c, schema(), array()));
            assertThrows(BufferException.class, () -> ArrowCData.exportArray(b, schema(), array()));
        }
        NDArray closed = array(DType.INT32, 2);
        closed.close();
        assertThrows(IllegalStateException.class, () -> ArrowCData.exportArray(closed, schema(), array()));
        try (NDArray a = array(DType.INT32, 2)) {
            assertThrows(IllegalArgumentException.class, () -> ArrowCData.exportArray(a, MemorySegment.NULL, array()));
            assertThrows(IllegalArgumentException.class,
                    () -> ArrowCData.exportArray(a, schema(), MemorySegment.ofArray(new byte[80])));
            assertThrows(IllegalArgumentException.class,
                    () -> ArrowCData.exportArray(a, schema(), arena.allocate(40)));
            assertThrows(NullPointerException.class, () -> ArrowCData.exportArray(a, null, array()));
        }
        assertEquals(0, ArrowCData.outstandingExports(), "a refused export leaves nothing behind");
    }

    // ---------------------------------------------------------------------------------------------
    // Devices

    @Test
    void deviceMemoryExportsThroughTheDeviceInterfaceOnly() {
        FakeDeviceAllocator cuda = FakeDeviceAllocator.cudaDevice(counting);
        DataMemHandler gpu = DataMemHandler.of("fake-cuda", cuda);
        try (NDArray a = DataMem.callWith(gpu, () -> NDArray.empty(DType.FLOAT32, 4, 4))) {
            BufferException e = assertThrows(BufferException.class, () -> ArrowCData.exportArray(a, schema(), array()));
            assertTrue(e.getMessage().contains("exportDeviceArray"), e.getMessage());
            MemorySegment s = schema();
            MemorySegment d = arena.allocate(ArrowCData.ARROW_DEVICE_ARRAY);
            d.fill((byte) 0x5A);
            ArrowCData.exportDeviceArray(a, s, d);
            assertEquals(1, d.get(JAVA_LONG, 80), "device_id");
            assertEquals(DeviceType.CUDA.code(), d.get(JAVA_INT, 88), "device_type: kDLCUDA = ARROW_DEVICE_CUDA = 2");
            assertEquals(0, d.get(JAVA_LONG, 96), "sync_event: synchronised before the export");
            for (int i = 0; i < 3; i++) {
                assertEquals(0, d.get(JAVA_LONG, 104 + 8L * i), "reserved");
            }
            assertEquals(List.of(OptionalLong.empty()), cuda.synchronizations(), "the backend synchronised");
            List<MemorySegment> events = new ArrayList<>();
            try (NDArray back = ArrowCData.importDeviceArray(s, d)) {
                assertEquals(new Device(DeviceType.CUDA, 1), back.traits().device());
                assertEquals(MemoryKind.DEVICE, back.traits().kind());
                assertFalse(back.traits().hostAccessible());
                assertEquals(a.address(), back.address());
            }
            assertTrue(events.isEmpty());
            // Copies are not made on a device.
            try (NDArray t = a.transpose()) {
                assertThrows(BufferException.class, () -> ArrowCData.exportDeviceArray(t, schema(),
                        arena.allocate(ArrowCData.ARROW_DEVICE_ARRAY)));
            }
        }
    }

    @Test
    void oneApiImportsAskTheBackendForTheUsmKind() {
        for (MemoryKind kind : List.of(MemoryKind.MANAGED, MemoryKind.HOST_PINNED, MemoryKind.DEVICE)) {
            FakeDeviceAllocator sycl = FakeDeviceAllocator.sycl(counting, kind);
            DataMemHandler usm = DataMemHandler.of("fake-sycl", sycl);
            FakeOneApiProvider.oneApi = sycl;
            try (NDArray a = DataMem.callWith(usm, () -> NDArray.zeros(DType.INT64, 5))) {
                MemorySegment s = schema();
                MemorySegment d = arena.allocate(ArrowCData.ARROW_DEVICE_ARRAY);
                ArrowCData.exportDeviceArray(a, s, d);
                assertEquals(DeviceType.ONE_API.code(), d.get(JAVA_INT, 88), "ARROW_DEVICE_ONEAPI = 14");
                try (NDArray back = ArrowCData.importDeviceArray(s, d)) {
                    assertEquals(kind, back.traits().kind(), "the backend told the USM kind");
                    assertEquals(kind != MemoryKind.DEVICE, back.traits().hostAccessible());
                    assertEquals(sycl, back.traits().interchange());
                    if (kind != MemoryKind.DEVICE) {
                        assertEquals(0, back.getLong(4));
                    }
                }
            } finally {
                FakeOneApiProvider.oneApi = null;
            }
        }
    }

    @Test
    void hostMemoryThroughTheDeviceInterfaceIsTheCpu() {
        try (NDArray a = array(DType.UINT8, 6)) {
            pattern(a);
            MemorySegment s = schema();
            MemorySegment d = arena.allocate(ArrowCData.ARROW_DEVICE_ARRAY);
            ArrowCData.exportDeviceArray(a, s, d);
            assertEquals(DeviceType.CPU.code(), d.get(JAVA_INT, 88));
            assertEquals(0, d.get(JAVA_LONG, 80));
            assertEquals(0, d.get(JAVA_LONG, 96));
            try (NDArray back = ArrowCData.importDeviceArray(s, d)) {
                assertEquals(Device.CPU, back.traits().device());
                assertArrayEquals(a.toDoubleArray(), back.toDoubleArray());
            }
        }
    }

    @Test
    void aSyncEventGoesToTheHandlerOrIsRefused() {
        try (NDArray a = array(DType.INT32, 3)) {
            MemorySegment s = schema();
            MemorySegment d = arena.allocate(ArrowCData.ARROW_DEVICE_ARRAY);
            ArrowCData.exportDeviceArray(a, s, d);
            MemorySegment event = arena.allocate(8);
            d.set(ADDRESS, 96, event);
            BufferException e = assertThrows(BufferException.class, () -> ArrowCData.importDeviceArray(s, d));
            assertTrue(e.getMessage().contains("sync_event"), e.getMessage());
            List<Long> seen = new ArrayList<>();
            try (NDArray back = ArrowCData.importDeviceArray(s, d, (ev, device) -> seen.add(ev.address()))) {
                assertEquals(List.of(event.address()), seen);
                assertEquals(3, back.size());
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Hostile structs: rejected, nothing taken, no crash

    private void hostile(Consumer<MemorySegment[]> spoil, String expected) {
        try (NDArray a = array(DType.INT32, 4, 2)) {
            MemorySegment s = schema();
            MemorySegment out = array();
            ArrowCData.exportArray(a, s, out);
            MemorySegment[] structs = {s, out, childOf(out), childOf(s, 72)};
            MemorySegment saved = array();
            MemorySegment.copy(out, 0, saved, 0, 80);
            MemorySegment savedChild = array();
            MemorySegment.copy(structs[2], 0, savedChild, 0, 80);
            spoil.accept(structs);
            BufferException e = assertThrows(BufferException.class, () -> ArrowCData.importArray(s, out));
            assertTrue(e.getMessage().contains(expected), e.getMessage());
            assertNotEquals(0, s.get(JAVA_LONG, 56), "the schema stays the caller's");
            MemorySegment.copy(saved, 0, out, 0, 80);
            MemorySegment.copy(savedChild, 0, structs[2], 0, 80);
            ArrowCData.releaseArray(out);
            ArrowCData.releaseSchema(s);
        }
    }

    private static MemorySegment childOf(MemorySegment parent) {
        return childOf(parent, 80);
    }

    private static MemorySegment childOf(MemorySegment parent, long size) {
        long children = parent.get(JAVA_LONG, size == 72 ? 40 : 48);
        return MemorySegment.ofAddress(MemorySegment.ofAddress(children).reinterpret(8).get(JAVA_LONG, 0))
                .reinterpret(size);
    }

    @Test
    void hostileStructsAreRejected() {
        hostile(x -> x[1].set(JAVA_LONG, 64, 0), "the array is released");
        hostile(x -> x[1].set(JAVA_LONG, 24, 2), "n_buffers 2");
        hostile(x -> x[2].set(JAVA_LONG, 24, 7), "n_buffers 7");
        hostile(x -> x[1].set(JAVA_LONG, 0, -1), "length -1");
        hostile(x -> x[1].set(JAVA_LONG, 16, -5), "offset -5");
        hostile(x -> x[2].set(JAVA_LONG, 16, -5), "offset -5");
        hostile(x -> x[1].set(JAVA_LONG, 16, 1), "need 10 child items");
        hostile(x -> x[1].set(JAVA_LONG, 0, Long.MAX_VALUE), "overflows");
        hostile(x -> x[2].set(JAVA_LONG, 40, 0), "buffers is NULL");
        hostile(x -> MemorySegment.ofAddress(x[2].get(JAVA_LONG, 40)).reinterpret(16).set(JAVA_LONG, 8, 0),
                "data buffer is NULL");
        hostile(x -> x[2].set(JAVA_LONG, 8, 3), "null_count 3 without a validity bitmap");
        hostile(x -> x[1].set(JAVA_LONG, 48, 0), "children is NULL");
        hostile(x -> x[1].set(JAVA_LONG, 56, 0x1000), "a dictionary");
        hostile(x -> x[3].set(JAVA_LONG, 0, 0), "format is NULL");
        hostile(x -> x[0].set(JAVA_LONG, 48, 0x1000), "dictionary");
        hostile(x -> x[0].set(ADDRESS, 0, arena.allocateFrom("+w:7")), "list size is 7");
        hostile(x -> x[0].set(ADDRESS, 0, arena.allocateFrom("+w:x")), "not an int32");
        hostile(x -> x[0].set(ADDRESS, 0, arena.allocateFrom("u")), "format 'u'");
        hostile(x -> x[0].set(JAVA_LONG, 16, badMetadata(-1)), "pairs");
        hostile(x -> x[0].set(JAVA_LONG, 16, tensorMetadata("{\"shape\":[3,")), "not JSON");
        hostile(x -> x[0].set(JAVA_LONG, 16, tensorMetadata("{\"shape\":[2,1],\"permutation\":[1,0]}")),
                "permutation");
        hostile(x -> x[0].set(JAVA_LONG, 16, tensorMetadata("{\"shape\":[3]}")), "3 items");
    }

    private long badMetadata(int pairs) {
        MemorySegment m = arena.allocate(4);
        m.set(JAVA_INT, 0, pairs);
        return m.address();
    }

    private long tensorMetadata(String json) {
        byte[] bytes = ArrowMetadata.encode(Map.of(ArrowCData.EXTENSION_NAME, ArrowCData.FIXED_SHAPE_TENSOR,
                ArrowCData.EXTENSION_METADATA, json));
        return arena.allocateFrom(JAVA_BYTE, bytes).address();
    }

    @Test
    void aNullReleaseSchemaIsRefusedAndNullStructsTooAndForeignDevicesAreChecked() {
        try (NDArray a = array(DType.INT32, 2)) {
            MemorySegment s = schema();
            MemorySegment d = arena.allocate(ArrowCData.ARROW_DEVICE_ARRAY);
            ArrowCData.exportDeviceArray(a, s, d);
            MemorySegment release = s.get(ADDRESS, 56);
            s.set(JAVA_LONG, 56, 0);
            assertThrows(BufferException.class, () -> ArrowCData.importDeviceArray(s, d));
            s.set(ADDRESS, 56, release);
            d.set(JAVA_INT, 88, 999);
            assertThrows(BufferException.class, () -> ArrowCData.importDeviceArray(s, d));
            d.set(JAVA_INT, 88, 1);
            d.set(JAVA_LONG, 80, -1);
            assertThrows(BufferException.class, () -> ArrowCData.importDeviceArray(s, d));
            d.set(JAVA_LONG, 80, 0);
            assertThrows(IllegalArgumentException.class, () -> ArrowCData.importArray(MemorySegment.NULL, d));
            ArrowCData.releaseArray(d);
            ArrowCData.releaseSchema(s);
            // Released structs release nothing twice.
            ArrowCData.releaseArray(d);
            ArrowCData.releaseSchema(s);
        }
    }
}
