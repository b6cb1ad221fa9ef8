package io.datamem.array;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The 1- and 2-index accessors are the varargs accessors without the index array: same values,
 * same conversions, same exceptions and messages.
 */
class FixedArityAccessTest {

    @Test
    void theyReadAndWriteWhatTheVarargsAccessorsDo() {
        for (DType dtype : new DType[] {DType.FLOAT64, DType.FLOAT32, DType.INT8, DType.UINT16, DType.INT64,
                DType.BOOL, DType.FLOAT16}) {
            try (Arena arena = Arena.ofConfined()) {
                NDArray a = NDArray.wrap(arena.allocate(dtype.itemSize() * 12, 8), dtype, 3, 4);
                NDArray row = a.select(0, 1);                // 1-D view with an offset
                NDArray column = a.select(1, 2);             // 1-D view with a stride
                for (long i = 0; i < 3; i++) {
                    for (long j = 0; j < 4; j++) {
                        a.setDouble(i * 4 + j, i, j);
                    }
                }
                for (long i = 0; i < 3; i++) {
                    for (long j = 0; j < 4; j++) {
                        assertEquals(a.getDouble(new long[] {i, j}), a.getDouble(i, j), dtype + " [" + i + "," + j + "]");
                        assertEquals(a.getLong(new long[] {i, j}), a.getLong(i, j));
                    }
                }
                for (long j = 0; j < 4; j++) {
                    assertEquals(row.getDouble(new long[] {j}), row.getDouble(j));
                    row.setLong(1, j);
                    assertEquals(1, a.getLong(new long[] {1, j}));
                }
                for (long i = 0; i < 3; i++) {
                    column.setDouble(0.0, i);
                    assertEquals(0, column.getLong(i));
                    assertEquals(0, a.getLong(new long[] {i, 2}));
                }
                a.close();
            }
        }
    }

    @Test
    void theyFailAsTheVarargsAccessorsDo() {
        NDArray a = NDArray.wrap(MemorySegment.ofArray(new double[6]), DType.FLOAT64, 2, 3);
        NDArray v = a.reshape(6);
        assertEquals(message(() -> a.getDouble(new long[] {0})), message(() -> a.getDouble(0)));
        assertEquals("index has 1 value(s) (expected: 2, one per axis of shape [2, 3])", message(() -> a.getLong(0)));
        assertEquals(message(() -> v.getDouble(new long[] {0, 0})), message(() -> v.setDouble(1, 0, 0)));
        IndexOutOfBoundsException oob = assertThrows(IndexOutOfBoundsException.class, () -> a.setLong(1, 1, 3));
        assertEquals("index 3 is out of bounds for axis 1 with size 3", oob.getMessage());
        assertThrows(IndexOutOfBoundsException.class, () -> v.getDouble(-1));
        assertThrows(IndexOutOfBoundsException.class, () -> v.getLong(6));
        assertThrows(UnsupportedOperationException.class, () -> a.asReadOnly().setDouble(1, 0, 0));
        a.close();
        assertThrows(IllegalStateException.class, () -> a.getDouble(0, 0));
        assertThrows(IllegalStateException.class, () -> a.setLong(1, 0, 0));
    }

    @Test
    void everyStrideAndExtremeIndex() {
        try (Arena arena = Arena.ofConfined()) {
            NDArray a = NDArray.wrap(arena.allocate(8 * 12, 8), DType.FLOAT64, 3, 4);
            for (long i = 0; i < 3; i++) {
                for (long j = 0; j < 4; j++) {
                    a.setDouble(i * 4 + j, i, j);
                }
            }
            NDArray t = a.transpose();                                   // strides {8, 32}
            NDArray reversed = a.reshape(12).slice(Slice.range(11, -13, -1));   // stride -8
            NDArray everyThird = a.reshape(12).slice(Slice.every(3));          // stride 24
            for (long i = 0; i < 4; i++) {
                for (long j = 0; j < 3; j++) {
                    assertEquals(j * 4 + i, t.getDouble(i, j));
                }
            }
            for (long i = 0; i < 12; i++) {
                assertEquals(11 - i, reversed.getDouble(i));
            }
            for (long i = 0; i < 4; i++) {
                assertEquals(3 * i, everyThird.getDouble(i));
            }
            for (long bad : new long[] {Long.MIN_VALUE, -1, 12, Long.MAX_VALUE}) {
                assertEquals("index " + bad + " is out of bounds for axis 0 with size 12",
                        assertThrows(IndexOutOfBoundsException.class, () -> reversed.getDouble(bad)).getMessage());
            }
            assertEquals("index " + Long.MIN_VALUE + " is out of bounds for axis 1 with size 3",
                    assertThrows(IndexOutOfBoundsException.class, () -> t.setDouble(0, 3, Long.MIN_VALUE)).getMessage());
            NDArray scalar = a.select(0, 1).select(0, 2);
            assertEquals("index has 1 value(s) (expected: 0, one per axis of shape [])",
                    message(() -> scalar.getDouble(0)));
            NDArray empty = a.slice(Slice.range(1, 1), Slice.all());
            assertEquals("index 0 is out of bounds for axis 0 with size 0",
                    assertThrows(IndexOutOfBoundsException.class, () -> empty.getDouble(0, 0)).getMessage());
            a.close();
        }
    }

    @Test
    void aResizedOwnerChecksItsNewShape() {
        try (NDArray a = NDArray.zeros(DType.FLOAT64, 4)) {
            a.setDouble(1, 3);
            a.resize(2, 5);
            assertEquals(1, a.getDouble(0, 3));
            a.setDouble(7, 1, 4);
            assertEquals(7, a.getDouble(1, 4));
            assertThrows(IndexOutOfBoundsException.class, () -> a.getDouble(2, 0));
            assertThrows(IllegalArgumentException.class, () -> a.getDouble(3));
            a.resize(6);
            assertEquals(0, a.getDouble(5));
            assertThrows(IndexOutOfBoundsException.class, () -> a.getDouble(6));
        }
    }

    @Test
    void theDenseFloat64PathChecksAsTheGeneralOne() throws Exception {
        try (NDArray m = NDArray.zeros(DType.FLOAT64, 3, 4); NDArray v = NDArray.zeros(DType.FLOAT64, 12)) {
            for (long i = 0; i < 3; i++) {
                for (long j = 0; j < 4; j++) {
                    m.setDouble(i * 4 + j, i, j);
                    v.setDouble(i * 4 + j, i * 4 + j);
                }
            }
            for (long bad : new long[] {Long.MIN_VALUE, -1, 12, Long.MAX_VALUE}) {
                assertEquals("index " + bad + " is out of bounds for axis 0 with size 12",
                        assertThrows(IndexOutOfBoundsException.class, () -> v.getDouble(bad)).getMessage());
                assertThrows(IndexOutOfBoundsException.class, () -> v.setDouble(0, bad));
            }
            assertEquals("index 4 is out of bounds for axis 1 with size 4",
                    assertThrows(IndexOutOfBoundsException.class, () -> m.getDouble(0, 4)).getMessage());
            assertEquals("index -1 is out of bounds for axis 0 with size 3",
                    assertThrows(IndexOutOfBoundsException.class, () -> m.setDouble(0, -1, 0)).getMessage());
            // Rows that are not C-contiguous (columns 1 and 2 of each row): the general path
            NDArray middle = m.slice(Slice.all(), Slice.range(1, 3));
            for (long i = 0; i < 3; i++) {
                assertEquals(i * 4 + 1, middle.getDouble(i, 0));
                assertEquals(i * 4 + 2, middle.getDouble(i, 1));
            }
            assertThrows(IndexOutOfBoundsException.class, () -> middle.getDouble(0, 2));
            middle.setDouble(-1, 2, 1);
            assertEquals(-1, m.getDouble(2, 2));
            // Another thread, once the arrays are shared
            v.share();
            m.share();
            Thread other = Thread.ofPlatform().start(() -> {
                v.setDouble(42, 11);
                m.setDouble(43, 2, 3);
            });
            other.join();
            assertEquals(42, v.getDouble(11));
            assertEquals(43, m.getDouble(2, 3));
        }
    }

    private static String message(Runnable r) {
        return assertThrows(IllegalArgumentException.class, r::run).getMessage();
    }
}
