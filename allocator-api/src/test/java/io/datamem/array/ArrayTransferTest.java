package io.datamem.array;

import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The C-order walk and the host copies on their own, over heap segments. */
class ArrayTransferTest {

    private static List<Long> walk(long offset, long[] shape, long[] strides) {
        List<Long> out = new ArrayList<>();
        ArrayTransfer.forEachOffset(offset, shape, strides, ArrayLayout.elementCount(shape), out::add);
        return out;
    }

    @Test
    void walksInCOrder() {
        assertEquals(List.of(0L, 8L, 16L, 24L, 32L, 40L), walk(0, new long[] {2, 3}, new long[] {24, 8}));
        assertEquals(List.of(0L, 16L, 32L, 8L, 24L, 40L), walk(0, new long[] {2, 3}, new long[] {8, 16}),
                "a transposed layout is walked in its own C order");
        assertEquals(List.of(40L, 32L, 16L, 8L), walk(40, new long[] {2, 2}, new long[] {-24, -8}));
        assertEquals(List.of(7L), walk(7, new long[0], new long[0]), "0-d: one element");
        assertEquals(List.of(), walk(0, new long[] {3, 0}, new long[] {8, 8}));
    }

    @Test
    void copiesConvertAndSurviveOverlap() {
        MemorySegment heap = MemorySegment.ofArray(new double[6]);
        NDArray a = NDArray.wrap(heap, DType.FLOAT64, 2, 3);
        a.copyFrom(new double[] {1, 2, 3, 4, 5, 6});
        NDArray t = NDArray.wrap(heap, DType.FLOAT64, new long[] {3, 2}, new long[] {8, 24}, 0);
        ArrayTransfer.transfer(a.reshape(3, 2), t);   // same memory, another order: read first
        assertArrayEquals(new double[] {1, 3, 5, 2, 4, 6}, a.toDoubleArray());

        NDArray ints = NDArray.wrap(MemorySegment.ofArray(new int[6]), DType.INT32, 2, 3);
        ArrayTransfer.transfer(a, ints);
        assertArrayEquals(new long[] {1, 3, 5, 2, 4, 6}, ints.toLongArray());

        NDArray complex = NDArray.wrap(MemorySegment.ofArray(new double[2]), DType.COMPLEX128);
        complex.setComplex(1, 2);
        NDArray real = NDArray.wrap(MemorySegment.ofArray(new double[1]), DType.FLOAT64);
        assertThrows(IllegalArgumentException.class, () -> ArrayTransfer.transfer(complex, real));
    }
}
