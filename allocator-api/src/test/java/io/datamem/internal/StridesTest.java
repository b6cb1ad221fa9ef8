package io.datamem.internal;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

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
}
