package io.datamem.internal;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class StridesTest {

    @Test
    void cContiguousReachesUpwardOnly() {
        long[] shape = {3, 4};
        long[] strides = {32, 8};
        assertEquals(0, Strides.lowestByte(shape, strides));
        assertEquals(2 * 32 + 3 * 8, Strides.highestByte(shape, strides));
    }

    @Test
    void negativeStridesReachDownward() {
        long[] shape = {3, 4, 1};
        long[] strides = {-32, 8, -1000};   // a size-1 dimension reaches nowhere, whatever its stride
        assertEquals(-64, Strides.lowestByte(shape, strides));
        assertEquals(24, Strides.highestByte(shape, strides));
    }

    @Test
    void zeroDimensionsAndZeroStridesReachNothing() {
        assertEquals(0, Strides.lowestByte(new long[0], new long[0]));
        assertEquals(0, Strides.highestByte(new long[] {5}, new long[] {0}));
    }

    @Test
    void overflowIsAnArithmeticException() {
        long[] shape = {3};
        assertThrows(ArithmeticException.class, () -> Strides.highestByte(shape, new long[] {Long.MAX_VALUE / 2 + 1}));
        assertThrows(ArithmeticException.class, () -> Strides.lowestByte(new long[] {2, 2},
                new long[] {Long.MIN_VALUE, -1}));
    }

    @Test
    void contiguityAsNumPyDecidesIt() {
        assertTrue(Strides.isContiguous(new long[] {3, 4}, new long[] {32, 8}, 8, false));
        assertFalse(Strides.isContiguous(new long[] {3, 4}, new long[] {32, 8}, 8, true));
        assertTrue(Strides.isContiguous(new long[] {3, 4}, new long[] {8, 24}, 8, true));
        assertFalse(Strides.isContiguous(new long[] {3, 4}, new long[] {64, 16}, 8, false), "a gap");
        assertTrue(Strides.isContiguous(new long[] {3, 1, 4}, new long[] {32, -999, 8}, 8, false),
                "a length-1 axis may have any stride");
        assertTrue(Strides.isContiguous(new long[] {0, 4}, new long[] {-5, 7}, 8, false), "no element");
        assertTrue(Strides.isContiguous(new long[] {1, 1}, new long[] {3, 5}, 8, true), "one element");
        assertTrue(Strides.isContiguous(new long[0], new long[0], 8, false), "0-d");
        assertFalse(Strides.isContiguous(new long[] {4}, new long[] {-8}, 8, false), "reversed");
    }
}
