package io.datamem.arrow;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.testing.CountingAllocator;
import io.datamem.testing.Nep49SampleAllocator;
import org.apache.arrow.c.ArrowArray;
import org.apache.arrow.c.ArrowSchema;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.UInt1Vector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A consumer no one here wrote: Arrow Java's C Data module ({@code org.apache.arrow:arrow-c-data})
 * imports datamem's exports into its vectors without copying (the vectors' data buffers are the
 * datamem arrays' memory), and datamem imports Arrow Java's exports the same way.
 */
class ArrowJavaInteropTest {

    private final Nep49SampleAllocator sample = new Nep49SampleAllocator();
    private final CountingAllocator counting = new CountingAllocator(sample);
    private final DataMemHandler h = DataMemHandler.of("arrow-java-test", counting);
    private BufferAllocator arrow;

    @BeforeEach
    void open() {
        arrow = new RootAllocator();
    }

    @AfterEach
    void nothingLeaks() {
        arrow.close();   // fails if Arrow Java still holds an imported buffer
        assertEquals(0, ArrowCData.outstandingExports(), "Arrow Java released every struct");
        assertEquals(List.of(), sample.violations());
        assertEquals(0, counting.liveBlocks(), "every array closed and freed");
    }

    private NDArray array(DType dtype, long... shape) {
        NDArray a = DataMem.callWith(h, () -> NDArray.zeros(dtype, shape));
        long[] values = new long[(int) a.size()];
        for (int i = 0; i < values.length; i++) {
            values[i] = dtype == DType.BOOL ? i % 3 == 0 ? 1 : 0 : i * 3L - 7 * (dtype.kind() == DType.Kind.UNSIGNED ? 0 : 1);
        }
        a.copyFrom(values);
        return a;
    }

    /** Exports into structs Arrow Java allocated, and imports them with Arrow Java's Data.importVector. */
    private FieldVector toArrowJava(NDArray a) {
        try (ArrowSchema schema = ArrowSchema.allocateNew(arrow); ArrowArray array = ArrowArray.allocateNew(arrow)) {
            ArrowCData.exportArray(a, MemorySegment.ofAddress(schema.memoryAddress()),
                    MemorySegment.ofAddress(array.memoryAddress()));
            return Data.importVector(arrow, ArrowArray.wrap(array.memoryAddress()),
                    ArrowSchema.wrap(schema.memoryAddress()), null);
        }
    }

    @Test
    void arrowJavaReadsPrimitiveArraysWithoutCopying() {
        try (NDArray a = array(DType.INT32, 1000)) {
            try (FieldVector v = toArrowJava(a)) {
                IntVector ints = assertInstanceOf(IntVector.class, v);
                assertEquals(1000, ints.getValueCount());
                assertEquals(a.address(), ints.getDataBuffer().memoryAddress(), "Arrow Java reads datamem's memory");
                for (int i = 0; i < 1000; i++) {
                    assertEquals(a.getLong(i), ints.get(i));
                }
                assertEquals(0, ints.getNullCount());
                a.setLong(42, 5);
                assertEquals(42, ints.get(5), "the same bytes, not a copy");
                assertThrows(IllegalStateException.class, a::close, "Arrow Java's vector pins the array");
            }
            assertEquals(0, ArrowCData.outstandingExports(), "closing the vector released the structs");
        }
        try (NDArray a = array(DType.FLOAT64, 17); FieldVector v = toArrowJava(a)) {
            Float8Vector f = assertInstanceOf(Float8Vector.class, v);
            assertEquals(a.address(), f.getDataBuffer().memoryAddress());
            for (int i = 0; i < 17; i++) {
                assertEquals(a.getDouble(i), f.get(i));
            }
        }
        try (NDArray a = array(DType.INT64, 5); FieldVector v = toArrowJava(a)) {
            BigIntVector l = assertInstanceOf(BigIntVector.class, v);
            assertEquals(a.address(), l.getDataBuffer().memoryAddress());
            assertEquals(a.getLong(4), l.get(4));
        }
        try (NDArray a = array(DType.INT16, 5); FieldVector v = toArrowJava(a)) {
            SmallIntVector s = assertInstanceOf(SmallIntVector.class, v);
            assertEquals(a.address(), s.getDataBuffer().memoryAddress());
            assertEquals(a.getLong(3), s.get(3));
        }
        try (NDArray a = array(DType.UINT8, 5); FieldVector v = toArrowJava(a)) {
            UInt1Vector u = assertInstanceOf(UInt1Vector.class, v);
            assertEquals(a.address(), u.getDataBuffer().memoryAddress());
            assertEquals(a.getLong(4), u.get(4) & 0xFF);
        }
    }

    @Test
    void arrowJavaReadsBoolArraysAsABitmapCopy() {
        try (NDArray a = array(DType.BOOL, 13); FieldVector v = toArrowJava(a)) {
            BitVector bits = assertInstanceOf(BitVector.class, v);
            for (int i = 0; i < 13; i++) {
                assertEquals(a.getBoolean(i) ? 1 : 0, bits.get(i), "bit " + i);
            }
        }
    }

    @Test
    void arrowJavaReadsTensorsAsFixedSizeListsWithTheExtensionMetadata() {
        try (NDArray a = array(DType.FLOAT32, 3, 2, 4); FieldVector v = toArrowJava(a)) {
            FixedSizeListVector list = assertInstanceOf(FixedSizeListVector.class, v);
            assertEquals(3, list.getValueCount());
            assertEquals(8, list.getListSize());
            assertEquals(ArrowCData.FIXED_SHAPE_TENSOR, list.getField().getMetadata().get(ArrowCData.EXTENSION_NAME));
            assertEquals("{\"shape\":[2,4]}", list.getField().getMetadata().get(ArrowCData.EXTENSION_METADATA));
            Float4Vector values = assertInstanceOf(Float4Vector.class, list.getDataVector());
            assertEquals(24, values.getValueCount());
            assertEquals(a.address(), values.getDataBuffer().memoryAddress(), "the tensor's memory, not a copy");
            for (int i = 0; i < 3; i++) {
                for (int j = 0; j < 2; j++) {
                    for (int k = 0; k < 4; k++) {
                        assertEquals(a.getDouble(new long[] {i, j, k}), values.get(i * 8 + j * 4 + k));
                    }
                }
            }
        }
    }

    @Test
    void datamemReadsArrowJavaVectorsWithoutCopying() {
        try (IntVector v = new IntVector("v", arrow)) {
            v.allocateNew(100);
            for (int i = 0; i < 100; i++) {
                v.set(i, i * i);
            }
            v.setValueCount(100);
            try (ArrowSchema schema = ArrowSchema.allocateNew(arrow); ArrowArray array = ArrowArray.allocateNew(arrow)) {
                Data.exportVector(arrow, v, null, array, schema);
                try (NDArray imported = ArrowCData.importArray(MemorySegment.ofAddress(schema.memoryAddress()),
                        MemorySegment.ofAddress(array.memoryAddress()))) {
                    assertEquals(DType.INT32, imported.dtype());
                    assertArrayEquals(new long[] {100}, imported.shape());
                    assertEquals(v.getDataBuffer().memoryAddress(), imported.address(), "Arrow Java's own buffer");
                    for (int i = 0; i < 100; i++) {
                        assertEquals(i * i, imported.getLong(i));
                    }
                    assertTrue(imported.isReadOnly());
                }
            }
        }
    }

    @Test
    void aRoundTripThroughArrowJavaComesBackToTheSameMemory() {
        try (NDArray a = array(DType.UINT32, 2, 3)) {
            try (FieldVector v = toArrowJava(a);
                 ArrowSchema schema = ArrowSchema.allocateNew(arrow);
                 ArrowArray array = ArrowArray.allocateNew(arrow)) {
                Data.exportVector(arrow, v, null, array, schema);
                try (NDArray back = ArrowCData.importArray(MemorySegment.ofAddress(schema.memoryAddress()),
                        MemorySegment.ofAddress(array.memoryAddress()))) {
                    assertArrayEquals(new long[] {2, 3}, back.shape());
                    assertEquals(a.address(), back.address(), "datamem -> Arrow Java -> datamem, one buffer");
                    assertArrayEquals(a.toDoubleArray(), back.toDoubleArray());
                }
            }
        }
    }
}
