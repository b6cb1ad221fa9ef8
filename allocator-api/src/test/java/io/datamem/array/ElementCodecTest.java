package io.datamem.array;

import io.datamem.format.CustomDTypes;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The element conversions on their own, over a heap segment at an unaligned offset. */
class ElementCodecTest {

    private final MemorySegment seg = MemorySegment.ofArray(new byte[40]);

    @Test
    void everyRealDTypeRoundTripsSmallIntegers() {
        for (DType t : DType.builtins()) {
            if (t.kind() == DType.Kind.COMPLEX) {
                continue;
            }
            long v = t.kind() == DType.Kind.BOOL ? 1 : 7;
            ElementCodec.writeLong(t, seg, 3, v);
            assertEquals(v, ElementCodec.readLong(t, seg, 3), t.toString());
            assertEquals(v, ElementCodec.readDouble(t, seg, 3), t.toString());
            assertTrue(ElementCodec.readBoolean(t, seg, 3), t.toString());
            ElementCodec.writeDouble(t, seg, 3, 0.0);
            assertFalse(ElementCodec.readBoolean(t, seg, 3), t.toString());
        }
    }

    @Test
    void integersConvertAsACCast() {
        ElementCodec.writeDouble(DType.INT32, seg, 1, -2.9);
        assertEquals(-2, ElementCodec.readLong(DType.INT32, seg, 1));
        ElementCodec.writeLong(DType.INT8, seg, 1, 0x1FF);
        assertEquals(-1, ElementCodec.readLong(DType.INT8, seg, 1));
        assertEquals(0xFF, ElementCodec.readLong(DType.UINT8, seg, 1));
        assertEquals(-1.0, ElementCodec.readDouble(DType.INT8, seg, 1));
        assertEquals(255.0, ElementCodec.readDouble(DType.UINT8, seg, 1));
        ElementCodec.writeDouble(DType.UINT64, seg, 1, 0x1p63 + 2048);
        assertEquals(Long.MIN_VALUE + 2048, ElementCodec.readLong(DType.UINT64, seg, 1));
        assertEquals(0x1p63 + 2048, ElementCodec.readDouble(DType.UINT64, seg, 1));
        ElementCodec.writeLong(DType.BOOL, seg, 1, 42);
        assertEquals(1, seg.get(ValueLayout.JAVA_BYTE, 1));
    }

    @Test
    void bfloat16RoundsToNearestEven() {
        assertEquals((short) 0x3F80, bfloat16Bits(1.0f));
        assertEquals((short) 0x3F80, bfloat16Bits(Float.intBitsToFloat(0x3F808000)), "tie to even");
        assertEquals((short) 0x3F82, bfloat16Bits(Float.intBitsToFloat(0x3F818000)), "tie to even");
        assertTrue(Float.isNaN(Float.intBitsToFloat(bfloat16Bits(Float.NaN) << 16)));
        ElementCodec.writeLong(DType.BFLOAT16, seg, 5, 3);
        assertEquals((short) 0x4040, seg.get(ValueLayout.JAVA_SHORT_UNALIGNED, 5), "3 as bfloat16");
        ElementCodec.writeDouble(DType.BFLOAT16, seg, 5, 1.5);
        assertEquals(1.5, ElementCodec.readDouble(DType.BFLOAT16, seg, 5));
    }

    @Test
    void complexReadsAndWrites() {
        ElementCodec.writeComplex(DType.COMPLEX64, seg, 2, 1.5, -2.5);
        assertArrayEquals(new double[] {1.5, -2.5}, ElementCodec.readComplex(DType.COMPLEX64, seg, 2));
        ElementCodec.writeAsComplex(DType.COMPLEX128, seg, 2, 3, 4);
        assertArrayEquals(new double[] {3, 4}, ElementCodec.readAsComplex(DType.COMPLEX128, seg, 2));
        assertTrue(ElementCodec.readBoolean(DType.COMPLEX128, seg, 2));
        ElementCodec.writeDouble(DType.COMPLEX128, seg, 2, 6);
        assertArrayEquals(new double[] {6, 0}, ElementCodec.readComplex(DType.COMPLEX128, seg, 2));
        ElementCodec.writeAsComplex(DType.FLOAT32, seg, 2, 2, 0);
        assertArrayEquals(new double[] {2, 0}, ElementCodec.readAsComplex(DType.FLOAT32, seg, 2));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ElementCodec.writeAsComplex(DType.FLOAT32, seg, 2, 2, 1));
        assertEquals("imaginary: 1.0 (expected: 0 for real dtype float32)", e.getMessage());
        UnsupportedOperationException r = assertThrows(UnsupportedOperationException.class,
                () -> ElementCodec.readDouble(DType.COMPLEX64, seg, 2));
        assertEquals("dtype complex64 is complex: read it with getComplex", r.getMessage());
        assertThrows(UnsupportedOperationException.class, () -> ElementCodec.readLong(DType.COMPLEX64, seg, 2));
    }

    @Test
    void customDTypesAreRefused() {
        DType f8 = CustomDTypes.FLOAT8_E4M3FN;
        UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
                () -> ElementCodec.readDouble(f8, seg, 0));
        assertEquals(ElementCodec.customAccess(f8).getMessage(), e.getMessage());
        assertTrue(e.getMessage().contains("custom dtype") && e.getMessage().contains("segment()"), e.getMessage());
        assertThrows(UnsupportedOperationException.class, () -> ElementCodec.readLong(f8, seg, 0));
        assertThrows(UnsupportedOperationException.class, () -> ElementCodec.writeDouble(f8, seg, 0, 1));
        assertThrows(UnsupportedOperationException.class, () -> ElementCodec.writeLong(f8, seg, 0, 1));
    }

    /** The bits writeDouble stores for {@code f} in a bfloat16 element. */
    private short bfloat16Bits(float f) {
        ElementCodec.writeDouble(DType.BFLOAT16, seg, 7, f);
        return seg.get(ValueLayout.JAVA_SHORT_UNALIGNED, 7);
    }
}
