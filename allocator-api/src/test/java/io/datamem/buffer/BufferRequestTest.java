package io.datamem.buffer;

import io.datamem.Device;
import io.datamem.DeviceType;
import io.datamem.MemoryKind;
import io.datamem.MemoryTraits;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link BufferRequest} used by an exporter that is not an array: a strided view of a segment. */
class BufferRequestTest {

    /** The smallest exporter: validate, pin, fill, add the segment and the release action, build. */
    static final class SegmentExporter implements BufferExporter {
        final MemorySegment segment;
        final long firstByte;
        final long[] shape;
        final long[] strides;
        final String format;
        final long itemSize;
        final MemoryTraits traits;
        final AtomicInteger pins = new AtomicInteger();

        SegmentExporter(MemorySegment segment, long firstByte, String format, long itemSize, long[] shape,
                        long[] strides, MemoryTraits traits) {
            this.segment = segment;
            this.firstByte = firstByte;
            this.format = format;
            this.itemSize = itemSize;
            this.shape = shape;
            this.strides = strides;
            this.traits = traits;
        }

        @Override
        public BufferView getBuffer(int flags) {
            BufferRequest request = BufferRequest.of(this, flags)
                    .memory(traits)
                    .readOnly(segment.isReadOnly())
                    .elements(format, format, itemSize)
                    .layout(segment.address() + firstByte, shape, strides);
            request.validate();
            pins.incrementAndGet();
            try {
                BufferView.Builder b = request.fill().releaseAction(pins::decrementAndGet);
                if (traits.hostAccessible()) {
                    b.segment(segment);
                }
                return b.build();
            } catch (RuntimeException | Error e) {
                pins.decrementAndGet();
                throw e;
            }
        }

        @Override
        public String toString() {
            return "SegmentExporter";
        }
    }

    private final Arena arena = Arena.ofConfined();
    private final MemorySegment memory = arena.allocate(96, 8);
    private final MemoryTraits host = MemoryTraits.host(8);

    @AfterEach
    void close() {
        arena.close();
    }

    private SegmentExporter exporter(long[] shape, long[] strides) {
        return new SegmentExporter(memory, 0, "d", 8, shape, strides, host);
    }

    @Test
    void fillsTheFieldsTheRequestDecides() {
        SegmentExporter e = exporter(new long[] {3, 4}, new long[] {32, 8});
        try (BufferView v = BufferExporter.request(e, BufferFlags.FULL_RO)) {
            assertEquals(memory.address(), v.address());
            assertEquals(96, v.len());
            assertEquals(8, v.itemSize());
            assertEquals("d", v.format());
            assertEquals(2, v.ndim());
            assertArrayEquals(new long[] {3, 4}, v.shape());
            assertArrayEquals(new long[] {32, 8}, v.strides());
            assertNull(v.suboffsets());
            assertFalse(v.readOnly());
            assertEquals(0, v.flags());
            assertEquals(1, e.pins.get());
        }
        assertEquals(0, e.pins.get());
        try (BufferView v = e.getBuffer(BufferFlags.SIMPLE)) {
            assertEquals(1, v.ndim());
            assertNull(v.shape());
            assertNull(v.strides());
            assertNull(v.format());
            assertEquals(8, v.itemSize(), "itemsize is kept without FORMAT, as in CPython");
            assertEquals(96, v.len());
        }
        try (BufferView v = e.getBuffer(BufferFlags.CONTIG_RO)) {
            assertArrayEquals(new long[] {3, 4}, v.shape());
            assertNull(v.strides());
        }
    }

    @Test
    void contiguityAndStridesAreHonoured() {
        SegmentExporter fortran = exporter(new long[] {3, 4}, new long[] {8, 24});
        BufferException c = assertThrows(BufferException.class, () -> fortran.getBuffer(BufferFlags.C_CONTIGUOUS));
        assertEquals(BufferFlags.C_CONTIGUOUS, c.flag());
        assertEquals("C_CONTIGUOUS requested, but SegmentExporter is not C-contiguous (shape [3, 4], strides [8, 24])",
                c.getMessage());
        BufferException noStrides = assertThrows(BufferException.class, () -> fortran.getBuffer(BufferFlags.ND));
        assertEquals(BufferFlags.STRIDES, noStrides.flag());
        assertTrue(noStrides.getMessage().startsWith("STRIDES not requested (the consumer then assumes C order)"),
                noStrides.getMessage());
        try (BufferView f = fortran.getBuffer(BufferFlags.F_CONTIGUOUS);
             BufferView any = fortran.getBuffer(BufferFlags.ANY_CONTIGUOUS)) {
            assertArrayEquals(new long[] {8, 24}, f.strides());
            assertEquals(96, any.len());
        }
        SegmentExporter stepped = exporter(new long[] {3, 2}, new long[] {32, 16});
        BufferException any = assertThrows(BufferException.class,
                () -> stepped.getBuffer(BufferFlags.ANY_CONTIGUOUS));
        assertEquals(BufferFlags.ANY_CONTIGUOUS, any.flag());
        assertTrue(any.getMessage().contains("neither C- nor Fortran-contiguous"), any.getMessage());
        assertThrows(BufferException.class, () -> stepped.getBuffer(BufferFlags.F_CONTIGUOUS));
        try (BufferView v = stepped.getBuffer(BufferFlags.STRIDED_RO)) {
            assertEquals(48, v.len());
        }
        assertEquals(0, fortran.pins.get() + stepped.pins.get(), "a refused request pins nothing");
    }

    @Test
    void readOnlyMemoryRefusesWritable() {
        SegmentExporter ro = new SegmentExporter(memory.asReadOnly(), 0, "d", 8, new long[] {12}, new long[] {8},
                host);
        BufferException w = assertThrows(BufferException.class, () -> ro.getBuffer(BufferFlags.WRITABLE));
        assertEquals(BufferFlags.WRITABLE, w.flag());
        assertEquals("WRITABLE requested, but SegmentExporter is read-only", w.getMessage());
        try (BufferView v = ro.getBuffer(BufferFlags.RECORDS_RO)) {
            assertTrue(v.readOnly());
        }
        try (BufferView v = exporter(new long[] {12}, new long[] {8}).getBuffer(BufferFlags.RECORDS)) {
            assertFalse(v.readOnly());
        }
    }

    @Test
    void formatWithoutShapeNeedsSingleByteItems() {
        BufferException e = assertThrows(BufferException.class,
                () -> exporter(new long[] {12}, null).getBuffer(BufferFlags.FORMAT));
        assertEquals(BufferFlags.ND, e.flag());
        assertEquals("ND not requested, so the buffer is 96 flat unsigned bytes, but FORMAT was requested and d"
                + " (format d) has 8-byte items: request ND with FORMAT, or drop FORMAT", e.getMessage());
        SegmentExporter bytes = new SegmentExporter(memory, 0, "B", 1, new long[] {96}, null, host);
        try (BufferView v = bytes.getBuffer(BufferFlags.FORMAT)) {
            assertEquals("B", v.format());
            assertNull(v.shape());
        }
    }

    @Test
    void deviceMemoryNeedsTheDeviceFlag() {
        MemoryTraits device = new MemoryTraits(MemoryKind.DEVICE, new Device(DeviceType.CUDA, 1), false, 256, 4096);
        SegmentExporter e = new SegmentExporter(memory, 0, "f", 4, new long[] {24}, null, device);
        BufferException refused = assertThrows(BufferException.class, () -> e.getBuffer(BufferFlags.FULL_RO));
        assertEquals(BufferFlags.DEVICE, refused.flag());
        assertTrue(refused.getMessage().startsWith("DEVICE not requested, but SegmentExporter is on cuda:1 (DEVICE"
                + " memory the host cannot access)"), refused.getMessage());
        try (BufferView v = e.getBuffer(BufferFlags.FULL_RO | BufferFlags.DEVICE)) {
            assertEquals(BufferFlags.DEVICE, v.flags());
            assertArrayEquals(new long[] {4}, v.strides());
        }
        try (BufferView v = exporter(new long[] {12}, null).getBuffer(BufferFlags.STRIDED_RO | BufferFlags.DEVICE)) {
            assertEquals(BufferFlags.DEVICE, v.flags(), "DEVICE is honoured for host memory too");
            assertNull(v.device());
        }
    }

    @Test
    void zeroDimensionalAndEmptyLayouts() {
        try (BufferView v = exporter(new long[0], new long[0]).getBuffer(BufferFlags.FULL_RO)) {
            assertEquals(0, v.ndim());
            assertNull(v.shape());
            assertNull(v.strides());
            assertEquals(8, v.len());
        }
        try (BufferView v = exporter(new long[] {0, 3}, new long[] {-5, 7}).getBuffer(BufferFlags.C_CONTIGUOUS)) {
            assertEquals(0, v.len(), "no element: contiguous in both orders");
        }
    }

    @Test
    void theDescriptionIsChecked() {
        assertThrows(NullPointerException.class, () -> BufferRequest.of(null, 0));
        BufferRequest r = BufferRequest.of("x", BufferFlags.STRIDED_RO);
        assertEquals(BufferFlags.STRIDED_RO, r.flags());
        assertThrows(IllegalStateException.class, r::validate, "no layout yet");
        assertThrows(IllegalArgumentException.class, () -> r.elements("x", "x", 0));
        assertThrows(NullPointerException.class, () -> r.memory(null));
        assertThrows(IllegalArgumentException.class, () -> r.layout(0, new long[] {2}, new long[] {8, 8}));
        assertThrows(IllegalArgumentException.class, () -> r.layout(0, new long[] {-1}, null));
        assertThrows(IllegalArgumentException.class, () -> r.layout(0, new long[BufferView.MAX_NDIM + 1], null));
        r.layout(0, new long[] {Long.MAX_VALUE / 2, 3}, null);
        assertThrows(IllegalArgumentException.class, r::validate, "len overflows");
        BufferView v = BufferRequest.of("x", BufferFlags.STRIDED_RO).layout(0, new long[] {2, 3}, null)
                .elements("int32", "i", 4).fill().build();
        assertArrayEquals(new long[] {12, 4}, v.strides(), "C order, with the item size set after the layout");
        assertEquals(24, v.len());
    }

    @Test
    void answersAsAnArrayDoesForTheSameMemory() {
        NDArray array = NDArray.wrap(memory, DType.FLOAT64, new long[] {3, 4}, new long[] {8, 24}, 0);
        SegmentExporter same = exporter(new long[] {3, 4}, new long[] {8, 24});
        for (int flags : List.of(BufferFlags.SIMPLE, BufferFlags.ND, BufferFlags.FORMAT, BufferFlags.STRIDES,
                BufferFlags.C_CONTIGUOUS, BufferFlags.F_CONTIGUOUS, BufferFlags.ANY_CONTIGUOUS, BufferFlags.FULL,
                BufferFlags.RECORDS_RO, BufferFlags.STRIDED | BufferFlags.DEVICE)) {
            BufferException a = null;
            BufferException b = null;
            try (BufferView x = array.getBuffer(flags); BufferView y = same.getBuffer(flags)) {
                assertEquals(x.len(), y.len());
                assertEquals(x.ndim(), y.ndim());
                assertArrayEquals(x.shape(), y.shape());
                assertArrayEquals(x.strides(), y.strides());
                assertEquals(x.format(), y.format());
                assertEquals(x.flags(), y.flags());
            } catch (BufferException e) {
                a = assertThrows(BufferException.class, () -> array.getBuffer(flags));
                b = assertThrows(BufferException.class, () -> same.getBuffer(flags));
            }
            if (a != null) {
                assertEquals(a.flag(), b.flag(), BufferFlags.describe(flags));
                assertEquals(a.getMessage().replace(array.toString(), "E").replace("float64", "d"),
                        b.getMessage().replace("SegmentExporter", "E"), BufferFlags.describe(flags));
            }
        }
    }
}
