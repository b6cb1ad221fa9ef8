package io.datamem.array;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The layout arithmetic on its own: what NDArray's factories, views and accessors compute. */
class ArrayLayoutTest {

    @Test
    void shapesAndStridesAreCheckedAndCopied() {
        long[] shape = {2, 3};
        long[] checked = ArrayLayout.checkShape(shape);
        assertArrayEquals(shape, checked);
        checked[0] = 9;
        assertEquals(2, shape[0], "a copy");
        assertEquals("shape[1]: -1 (expected: >= 0)", assertThrows(IllegalArgumentException.class,
                () -> ArrayLayout.checkShape(new long[] {1, -1})).getMessage());
        assertEquals("ndim: 65 (expected: <= 64)", assertThrows(IllegalArgumentException.class,
                () -> ArrayLayout.checkShape(new long[NDArray.MAX_NDIM + 1])).getMessage());
        assertThrows(NullPointerException.class, () -> ArrayLayout.checkShape(null));
        assertEquals("strides: 1 values (expected: 2, one per axis)", assertThrows(IllegalArgumentException.class,
                () -> ArrayLayout.checkStrides(new long[] {8}, 2)).getMessage());
    }

    @Test
    void countsSizesAndCStrides() {
        assertEquals(1, ArrayLayout.elementCount(new long[0]));
        assertEquals(24, ArrayLayout.elementCount(new long[] {2, 3, 4}));
        assertEquals(0, ArrayLayout.elementCount(new long[] {Long.MAX_VALUE, 0}));
        assertEquals(-1, ArrayLayout.elementCount(new long[] {1L << 32, 1L << 32}));
        assertEquals(192, ArrayLayout.byteSizeOf(DType.FLOAT64, new long[] {24}, 24));
        assertThrows(IllegalArgumentException.class,
                () -> ArrayLayout.byteSizeOf(DType.FLOAT64, new long[] {1L << 62}, 1L << 62));
        assertArrayEquals(new long[] {96, 32, 8}, ArrayLayout.cStrides(DType.FLOAT64, new long[] {2, 3, 4}));
        assertArrayEquals(new long[] {4, 4}, ArrayLayout.cStrides(DType.INT32, new long[] {3, 0}));
    }

    @Test
    void extentMustLieWithinTheBlock() {
        ArrayLayout.checkExtent(DType.INT32, new long[] {4}, new long[] {4}, 0, 16);
        ArrayLayout.checkExtent(DType.INT32, new long[] {4}, new long[] {-4}, 12, 16);
        ArrayLayout.checkExtent(DType.INT32, new long[] {0}, new long[] {4}, 16, 16);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ArrayLayout.checkExtent(DType.INT32, new long[] {4}, new long[] {4}, 4, 16));
        assertEquals("shape [4], strides [4] and byteOffset 4 reach bytes [4, 20) (expected: within the 16 bytes"
                + " available)", e.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> ArrayLayout.checkExtent(DType.INT32, new long[] {4}, new long[] {-4}, 8, 16));
        assertEquals("byteOffset: -1 (expected: >= 0)", assertThrows(IllegalArgumentException.class,
                () -> ArrayLayout.checkExtent(DType.INT32, new long[] {1}, new long[] {4}, -1, 16)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> ArrayLayout.checkExtent(DType.INT32, new long[] {3},
                new long[] {Long.MAX_VALUE}, 0, 16));
    }

    @Test
    void reshapeInfersOneLength() {
        assertArrayEquals(new long[] {3, 4}, ArrayLayout.inferShape(new long[] {3, -1}, 12));
        assertArrayEquals(new long[] {12}, ArrayLayout.inferShape(new long[] {-1}, 12));
        assertEquals("newShape [-1, -1] (expected: at most one -1)", assertThrows(IllegalArgumentException.class,
                () -> ArrayLayout.inferShape(new long[] {-1, -1}, 12)).getMessage());
        assertEquals("cannot reshape 12 elements into [5, -1]", assertThrows(IllegalArgumentException.class,
                () -> ArrayLayout.inferShape(new long[] {5, -1}, 12)).getMessage());
        assertEquals("cannot reshape array of size 12 into shape [5]", assertThrows(IllegalArgumentException.class,
                () -> ArrayLayout.inferShape(new long[] {5}, 12)).getMessage());
        assertEquals("newShape[0]: -2 (expected: >= -1)", assertThrows(IllegalArgumentException.class,
                () -> ArrayLayout.inferShape(new long[] {-2}, 12)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> ArrayLayout.inferShape(new long[] {1L << 40, 1L << 40}, 12));
    }

    @Test
    void contiguityAndAxes() {
        assertTrue(ArrayLayout.isContiguous(DType.FLOAT32, new long[] {3, 4}, new long[] {16, 4}, false));
        assertFalse(ArrayLayout.isContiguous(DType.FLOAT32, new long[] {3, 4}, new long[] {16, 4}, true));
        assertTrue(ArrayLayout.isContiguous(DType.FLOAT32, new long[] {3, 4}, new long[] {4, 12}, true));
        ArrayLayout.checkAxis(new long[] {3, 4}, 1);
        assertEquals("axis: 2 (expected: 0..1)", assertThrows(IllegalArgumentException.class,
                () -> ArrayLayout.checkAxis(new long[] {3, 4}, 2)).getMessage());
    }

    @Test
    void elementOffsetsOfAnyNumberOfAxes() {
        long[] shape = {3, 4};
        long[] strides = {-32, 8};
        assertEquals(100 - 64 + 24, ArrayLayout.elementOffset(shape, strides, 100, new long[] {2, 3}));
        assertEquals(100, ArrayLayout.elementOffset(new long[0], new long[0], 100, new long[0]));
        assertEquals("index has 1 value(s) (expected: 2, one per axis of shape [3, 4])",
                assertThrows(IllegalArgumentException.class,
                        () -> ArrayLayout.elementOffset(shape, strides, 0, new long[] {0})).getMessage());
        assertEquals("index 4 is out of bounds for axis 1 with size 4", assertThrows(IndexOutOfBoundsException.class,
                () -> ArrayLayout.elementOffset(shape, strides, 0, new long[] {0, 4})).getMessage());
        assertEquals("index -1 is out of bounds for axis 0 with size 3", assertThrows(IndexOutOfBoundsException.class,
                () -> ArrayLayout.elementOffset(shape, strides, 0, new long[] {-1, 0})).getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> ArrayLayout.elementOffset(shape, strides, 0, new long[] {0}));
    }
}
