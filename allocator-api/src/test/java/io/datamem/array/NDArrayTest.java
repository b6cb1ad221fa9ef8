package io.datamem.array;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.testing.CountingAllocator;
import io.datamem.testing.Nep49SampleAllocator;
import io.datamem.testing.WithTraits;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Array behaviour: dtypes, element access, views, resize, lifetime, errors. */
class NDArrayTest {

    private final Nep49SampleAllocator sample = new Nep49SampleAllocator();
    private final CountingAllocator counting = new CountingAllocator(sample);
    private final DataMemHandler h = DataMemHandler.of("array-test", counting);

    @AfterEach
    void noLeaksNoViolations() {
        assertEquals(List.of(), sample.violations());
        assertEquals(0, counting.liveBlocks(), "every array closed and freed");
    }

    private NDArray zeros(DType dtype, long... shape) {
        return DataMem.callWith(h, () -> NDArray.zeros(dtype, shape));
    }

    private NDArray empty(DType dtype, long... shape) {
        return DataMem.callWith(h, () -> NDArray.empty(dtype, shape));
    }

    static List<DType> dtypes() {
        return DType.builtins();
    }

    @ParameterizedTest
    @MethodSource("dtypes")
    void everyDtypeRoundTripsItsValues(DType dtype) {
        try (NDArray a = zeros(dtype, 3, 4)) {
            assertEquals(12L * dtype.itemSize(), a.byteSize());
            assertArrayEquals(new long[] {4L * dtype.itemSize(), dtype.itemSize()}, a.strides());
            switch (dtype.kind()) {
                case BOOL -> {
                    a.setBoolean(true, 2, 3);
                    assertTrue(a.getBoolean(2, 3));
                    assertFalse(a.getBoolean(0, 0));
                    assertEquals(1, a.getLong(2, 3));
                }
                case SIGNED -> {
                    long min = -(1L << (dtype.itemSize() * 8 - 1));
                    a.setLong(min, 1, 1);
                    assertEquals(min, a.getLong(1, 1));
                    a.setLong(-7, 2, 3);
                    assertEquals(-7.0, a.getDouble(2, 3));
                    a.setLong(-min, 0, 0); // one past the maximum wraps to the minimum, as a C cast
                    assertEquals(min, a.getLong(0, 0));
                }
                case UNSIGNED -> {
                    long max = dtype.itemSize() == 8 ? -1L : (1L << (dtype.itemSize() * 8)) - 1;
                    a.setLong(max, 1, 1);
                    assertEquals(max, a.getLong(1, 1));
                    if (dtype.itemSize() == 8) {
                        assertEquals(0x1p64, a.getDouble(1, 1), 1e4, "uint64 max reads as 2^64");
                        a.setDouble(0x1.8p63, 0, 1);
                        assertEquals("13835058055282163712", Long.toUnsignedString(a.getLong(0, 1)));
                    } else {
                        assertEquals((double) max, a.getDouble(1, 1));
                    }
                }
                case FLOAT -> {
                    a.setDouble(1.5, 2, 3);
                    assertEquals(1.5, a.getDouble(2, 3));
                    a.setDouble(Double.NaN, 0, 1);
                    assertTrue(Double.isNaN(a.getDouble(0, 1)));
                    a.setLong(3, 0, 2);
                    assertEquals(3, a.getLong(0, 2));
                    if (dtype.itemSize() == 2) {
                        a.setDouble(65504, 1, 1); // float16 max
                        assertEquals(65504.0, a.getDouble(1, 1));
                        assertEquals((short) 0x3E00, a.segment().get(ValueLayout.JAVA_SHORT_UNALIGNED, 2L * 11), "1.5 in binary16");
                    }
                }
                case BFLOAT -> {
                    a.setDouble(1.0, 2, 3);
                    assertEquals((short) 0x3F80, a.segment().get(ValueLayout.JAVA_SHORT_UNALIGNED, 2L * 11));
                    a.setDouble(3.140625, 0, 0);
                    assertEquals(3.140625, a.getDouble(0, 0));
                    a.setDouble(1.00390625, 0, 1); // halfway between 1 and 1+2^-7: ties to even -> 1
                    assertEquals(1.0, a.getDouble(0, 1));
                    a.setDouble(Float.NaN, 1, 0);
                    assertTrue(Double.isNaN(a.getDouble(1, 0)));
                }
                case COMPLEX -> {
                    a.setComplex(1.5, -2.25, 2, 3);
                    assertArrayEquals(new double[] {1.5, -2.25}, a.getComplex(2, 3));
                    assertTrue(a.getBoolean(2, 3));
                    assertThrows(UnsupportedOperationException.class, () -> a.getDouble(2, 3));
                    a.setDouble(4, 0, 0);
                    assertArrayEquals(new double[] {4, 0}, a.getComplex(0, 0));
                }
                case CUSTOM -> throw new AssertionError("no custom builtin");
            }
        }
    }

    @Test
    void dtypesKnowTheirInterchangeNames() {
        assertEquals("d", DType.FLOAT64.format());
        assertEquals("<f8", DType.FLOAT64.typestr());
        assertEquals(DType.FLOAT64, DType.ofDlpack(2, 64, 1));
        assertEquals(DType.BFLOAT16, DType.ofDlpack(4, 16, 1));
        assertEquals(DType.BOOL, DType.ofDlpack(6, 8, 1));
        assertEquals(DType.COMPLEX64, DType.of("complex64"));
        assertEquals("Zd", DType.COMPLEX128.format());
        assertThrows(IllegalArgumentException.class, () -> DType.of("float128"));
        assertThrows(IllegalArgumentException.class, () -> DType.custom("x", 4, 3, "[x$]", 3, 32, 1, "|V4"));
        assertThrows(IllegalArgumentException.class,
                () -> new DType("bad", DType.Kind.FLOAT, 4, 4, "f", 2, 64, 1, "<f4"));
        assertEquals(15, DType.builtins().size());
    }

    @Test
    void elementAccessChecksIndices() {
        try (NDArray a = zeros(DType.INT32, 2, 3)) {
            assertEquals("index 3 is out of bounds for axis 1 with size 3",
                    assertThrows(IndexOutOfBoundsException.class, () -> a.getLong(1, 3)).getMessage());
            assertThrows(IndexOutOfBoundsException.class, () -> a.getLong(-1, 0));
            assertEquals("index has 1 value(s) (expected: 2, one per axis of shape [2, 3])",
                    assertThrows(IllegalArgumentException.class, () -> a.getLong(1)).getMessage());
            assertThrows(IndexOutOfBoundsException.class, () -> a.segment().get(ValueLayout.JAVA_INT, 24));
        }
    }

    @Test
    void viewsShareMemoryAndReportTheirBasesHandler() {
        try (NDArray a = zeros(DType.FLOAT64, 4, 6)) {
            for (int i = 0; i < 4; i++) {
                for (int j = 0; j < 6; j++) {
                    a.setDouble(i * 10 + j, i, j);
                }
            }
            NDArray s = a.slice(Slice.range(1, 3), Slice.range(0, 6, 2));
            assertArrayEquals(new long[] {2, 3}, s.shape());
            assertArrayEquals(new long[] {48, 16}, s.strides());
            assertEquals(14.0, s.getDouble(0, 2));
            assertFalse(s.ownsData());
            assertSame(h, s.handler());
            s.setDouble(-1, 1, 1);
            assertEquals(-1.0, a.getDouble(2, 2));

            NDArray rev = a.slice(Slice.every(-1));
            assertEquals(30.0, rev.getDouble(0, 0));
            assertArrayEquals(new long[] {-48, 8}, rev.strides());
            assertEquals(a.byteSize(), rev.segment().byteSize());

            NDArray t = a.transpose();
            assertArrayEquals(new long[] {6, 4}, t.shape());
            assertEquals(a.getDouble(3, 5), t.getDouble(5, 3));
            assertFalse(t.isCContiguous());
            assertTrue(t.isFContiguous());

            NDArray row = a.select(0, -1);
            assertArrayEquals(new long[] {6}, row.shape());
            assertEquals(35.0, row.getDouble(5));
            assertThrows(IndexOutOfBoundsException.class, () -> a.select(0, 4));

            NDArray r = a.reshape(3, -1);
            assertArrayEquals(new long[] {3, 8}, r.shape());
            assertFalse(r.ownsData());
            assertEquals(a.getDouble(1, 1), r.getDouble(0, 7));
            assertThrows(IllegalArgumentException.class, () -> a.reshape(5, 5));
            assertThrows(IllegalArgumentException.class, () -> a.reshape(-1, -1));
            for (long[] huge : new long[][] {{Long.MAX_VALUE, 2}, {Long.MAX_VALUE, Long.MAX_VALUE}, {-1, 1L << 62, 4},
                    {1L << 32, 1L << 32}}) {
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> a.reshape(huge));
                assertTrue(e.getMessage().startsWith("cannot reshape array of size 24 into shape "
                        + Arrays.toString(huge)), e.getMessage());
            }
            MemorySegment block = a.segment();
            IllegalArgumentException strided = assertThrows(IllegalArgumentException.class, () -> NDArray.wrap(block,
                    DType.FLOAT64, new long[] {3, 2}, new long[] {Long.MAX_VALUE / 2, 8}, 0));
            assertEquals("strides [" + Long.MAX_VALUE / 2 + ", 8] with shape [3, 2] overflow a long",
                    strided.getMessage());

            NDArray copy = DataMem.callWith(h, () -> t.reshape(24)); // not contiguous: a copy
            assertTrue(copy.ownsData());
            assertEquals(a.getDouble(1, 0), copy.getDouble(1));
            copy.close();

            NDArray empty = a.slice(Slice.range(3, 1));
            assertEquals(0, empty.size());
            assertEquals(0, empty.segment().byteSize());
        }
    }

    @Test
    void copyFromConvertsAndHandlesOverlap() {
        try (NDArray a = zeros(DType.INT64, 6); NDArray f = zeros(DType.FLOAT32, 6)) {
            a.copyFrom(new long[] {0, 1, 2, 3, 4, 5});
            f.copyFrom(a);
            assertArrayEquals(new double[] {0, 1, 2, 3, 4, 5}, f.toDoubleArray());
            NDArray rev = a.slice(Slice.every(-1));
            a.copyFrom(rev);                     // overlapping, reversed: read first
            assertArrayEquals(new long[] {5, 4, 3, 2, 1, 0}, a.toLongArray());
            assertThrows(IllegalArgumentException.class, () -> a.copyFrom(new long[] {1, 2}));
            try (NDArray c = zeros(DType.COMPLEX128, 6)) {
                c.setComplex(1, 2, 0);
                assertThrows(IllegalArgumentException.class, () -> f.copyFrom(c));
            }
            try (NDArray other = zeros(DType.INT64, 3)) {
                assertThrows(IllegalArgumentException.class, () -> a.copyFrom(other));
            }
            f.fill(2.5);
            assertArrayEquals(new double[] {2.5, 2.5, 2.5, 2.5, 2.5, 2.5}, f.toDoubleArray());
            a.fill(0L);
            assertArrayEquals(new long[6], a.toLongArray());
        }
    }

    @Test
    void resizeReallocatesThroughTheCapturedHandlerAndInvalidatesViews() {
        NDArray a = zeros(DType.INT16, 10);
        a.copyFrom(new long[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
        NDArray view = a.slice(Slice.range(0, 5));
        MemorySegment old = a.segment();
        DataMem.runWith(DataMem.builtinDefault(), () -> a.resize(2, 10));
        assertEquals(40, counting.liveBytes());
        assertArrayEquals(new long[] {2, 10}, a.shape());
        assertEquals(10, a.getLong(0, 9));
        assertEquals(0, a.getLong(1, 9));
        assertThrows(IllegalStateException.class, () -> view.getLong(0), "views are invalid after resize");
        assertThrows(IllegalStateException.class, () -> old.get(ValueLayout.JAVA_SHORT, 0));
        a.resize(3);
        assertArrayEquals(new long[] {1, 2, 3}, a.toLongArray());
        assertEquals("resize needs an array that owns its memory; NDArray[int16, shape [3], handler array-test, view]"
                + " is a view", assertThrows(IllegalStateException.class, () -> a.reshape(3).resize(4)).getMessage());
        a.resize(0);
        assertEquals(0, a.size());
        a.close();
        assertThrows(IllegalStateException.class, () -> a.resize(2));
    }

    @Test
    void closeIsIdempotentFreesOnceAndInvalidatesEverything() {
        NDArray a = zeros(DType.FLOAT64, 16);
        NDArray v = a.reshape(4, 4);
        MemorySegment seg = a.segment();
        a.close();
        a.close();
        assertTrue(a.isClosed());
        assertTrue(v.isClosed());
        assertEquals(0, counting.liveBlocks());
        assertTrue(assertThrows(IllegalStateException.class, () -> a.getDouble(0)).getMessage().contains("closed"));
        assertThrows(IllegalStateException.class, () -> v.getDouble(0, 0));
        assertThrows(IllegalStateException.class, () -> seg.get(ValueLayout.JAVA_DOUBLE, 0));
        assertThrows(IllegalStateException.class, a::segment);
        v.close();
    }

    @Test
    void badShapesAreRejectedBeforeAnyNativeCall() {
        assertEquals("shape[1]: -3 (expected: >= 0)", assertThrows(IllegalArgumentException.class,
                () -> empty(DType.FLOAT64, 2, -3)).getMessage());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> empty(DType.FLOAT64, 1L << 40, 1L << 40));
        assertTrue(e.getMessage().contains("needs more than"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> empty(DType.FLOAT64, Long.MAX_VALUE));
        assertThrows(IllegalArgumentException.class, () -> empty(DType.INT8, 1L << 58));
        assertThrows(IllegalArgumentException.class, () -> empty(DType.INT8, new long[65]));
        assertThrows(NullPointerException.class, () -> empty(null, 3));
        assertEquals(0, counting.allocations(), "no native call was made");
        try (NDArray zeroSize = zeros(DType.FLOAT64, 0, 1L << 62)) {
            assertEquals(0, zeroSize.size());
            assertEquals(0, zeroSize.segment().byteSize());
        }
        try (NDArray scalar = zeros(DType.FLOAT64)) {
            assertEquals(1, scalar.size());
            scalar.setDouble(3);
            assertEquals(3.0, scalar.getDouble());
        }
    }

    @Test
    void wrapAndAdoptCheckTheExtent() {
        MemorySegment heap = MemorySegment.ofArray(new byte[64]);
        assertThrows(IllegalArgumentException.class, () -> NDArray.wrap(heap, DType.FLOAT64, 9));
        assertThrows(IllegalArgumentException.class,
                () -> NDArray.wrap(heap, DType.FLOAT64, new long[] {2}, new long[] {-8}, 0));
        NDArray ok = NDArray.wrap(heap, DType.FLOAT64, new long[] {2}, new long[] {-8}, 8);
        ok.setDouble(1.0, 1);
        assertEquals(1.0, heap.get(ValueLayout.JAVA_DOUBLE_UNALIGNED, 0));
        MemorySegment block = counting.malloc(32);
        assertThrows(IllegalArgumentException.class,
                () -> NDArray.adopt(h, block, 32, DType.FLOAT64, new long[] {5}, null, 0));
        assertEquals(1, counting.liveBlocks(), "a rejected adopt leaves ownership with the caller");
        NDArray adopted = NDArray.adopt(h, block, 32, DType.FLOAT64, new long[] {4}, null, 0);
        adopted.close();
    }

    @Test
    void unclosedUnreachableOwnersAreFreedByTheCleanerAndCounted() throws Exception {
        long before = NDArray.leakCount();
        DataMem.runWith(h, () -> {
            for (int i = 0; i < 5; i++) {
                NDArray.zeros(DType.INT8, 1000);
            }
        });
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (counting.liveBlocks() > 0 && System.nanoTime() < deadline) {
            System.gc();
            Thread.sleep(20);
        }
        assertEquals(0, counting.liveBlocks(), "the cleaner freed every leaked array through its handler");
        assertEquals(before + 5, NDArray.leakCount());
    }

    @Test
    void deviceMemoryHasNoHostView() {
        DataMemAllocator device = new WithTraits(sample, new io.datamem.MemoryTraits(io.datamem.MemoryKind.DEVICE,
                new io.datamem.Device(io.datamem.DeviceType.CUDA, 0), false, 256, 4096));
        DataMemHandler dev = DataMemHandler.of("fake-device", device);
        NDArray a = DataMem.callWith(dev, () -> NDArray.empty(DType.FLOAT32, 8));
        UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class, () -> a.getDouble(0));
        assertTrue(e.getMessage().contains("cuda:0") && e.getMessage().contains("copy"), e.getMessage());
        assertThrows(UnsupportedOperationException.class, a::segment);
        assertThrows(UnsupportedOperationException.class, dev::openArena);
        assertTrue(a.address() != 0);
        a.close();
        assertEquals(0, sample.liveBlocks());
    }

    @Test
    void toStringDescribesTheArray() {
        try (NDArray a = zeros(DType.UINT8, 2)) {
            assertEquals("NDArray[uint8, shape [2], handler array-test, owner]", a.toString());
            assertNotSame(a, a.reshape(2));
        }
    }
}
