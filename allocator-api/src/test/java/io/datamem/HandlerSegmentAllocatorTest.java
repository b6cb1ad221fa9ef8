package io.datamem;

import io.datamem.testing.CountingAllocator;
import io.datamem.testing.FakeDeviceAllocator;
import org.junit.jupiter.api.Test;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A handler used directly as a {@link SegmentAllocator}: segments freed through it once unreachable,
 * alignment honoured, failures as the JDK's allocators report them.
 */
class HandlerSegmentAllocatorTest {

    private final CountingAllocator counting = new CountingAllocator(LibcAllocator.INSTANCE);
    private final DataMemHandler h = DataMemHandler.of("segment-allocator-test", counting);

    /** An allocator whose memory is always exhausted. */
    static final class Exhausted implements DataMemAllocator {
        int calls;

        @Override
        public MemorySegment malloc(long byteSize) {
            calls++;
            return MemorySegment.NULL;
        }

        @Override
        public MemorySegment calloc(long count, long elementByteSize) {
            calls++;
            return MemorySegment.NULL;
        }

        @Override
        public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
            calls++;
            return MemorySegment.NULL;
        }

        @Override
        public void free(MemorySegment ptr, long byteSize) {
        }
    }

    private void awaitAllFreed() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (counting.liveBlocks() > 0 && System.nanoTime() < deadline) {
            System.gc();
            Thread.sleep(20);
        }
    }

    @Test
    void theJdksDefaultMethodsAllocateThroughTheHandlerAndUnreachableSegmentsAreFreedWithTheirSize()
            throws Exception {
        SegmentAllocator allocator = h;
        List<MemorySegment> kept = new ArrayList<>();
        kept.add(allocator.allocateFrom("hello"));
        kept.add(allocator.allocateFrom(ValueLayout.JAVA_LONG, 1, 2, 3));
        kept.add(allocator.allocate(ValueLayout.JAVA_DOUBLE, 100));
        assertEquals("hello", kept.get(0).getString(0));
        assertEquals(3, kept.get(1).getAtIndex(ValueLayout.JAVA_LONG, 2));
        assertArrayEquals(new double[100], kept.get(2).toArray(ValueLayout.JAVA_DOUBLE), "zeroed, as the JDK's");
        assertEquals(3, counting.liveBlocks());
        Thread other = Thread.ofPlatform().start(() -> kept.get(2).setAtIndex(ValueLayout.JAVA_DOUBLE, 99, 1.5));
        other.join();
        assertEquals(1.5, kept.get(2).getAtIndex(ValueLayout.JAVA_DOUBLE, 99), "any thread may use the segment");
        MemorySegment slice = kept.get(2).asSlice(99 * 8, 8);
        kept.clear();
        System.gc();
        assertEquals(1.5, slice.get(ValueLayout.JAVA_DOUBLE, 0), "a derived segment keeps the block");
        assertTrue(counting.liveBlocks() >= 1);
        slice = null;
        awaitAllFreed();
        assertEquals(0, counting.liveBlocks(), "freed once unreachable");
        assertEquals(0, counting.liveBytes(), "with the exact size allocated");
    }

    @Test
    void aDowncallReturningAStructByValueAllocatesItThroughTheHandler() throws Throwable {
        // C's div_t div(int, int): a struct of two ints returned by value.
        StructLayout divT = MemoryLayout.structLayout(ValueLayout.JAVA_INT.withName("quot"),
                ValueLayout.JAVA_INT.withName("rem"));
        Linker linker = Linker.nativeLinker();
        MethodHandle div = linker.downcallHandle(linker.defaultLookup().find("div").orElseThrow(),
                FunctionDescriptor.of(divT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
        long before = counting.allocations();
        MemorySegment result = (MemorySegment) div.invokeExact((SegmentAllocator) h, 17, 5);
        assertEquals(3, result.get(ValueLayout.JAVA_INT, 0));
        assertEquals(2, result.get(ValueLayout.JAVA_INT, 4));
        assertEquals(before + 1, counting.allocations(), "the returned struct came from the handler");
    }

    @Test
    void alignmentBeyondTheAllocatorsGuaranteeIsHonouredByOverAllocating() throws Exception {
        List<MemorySegment> kept = new ArrayList<>();
        for (long alignment = 1; alignment <= (1 << 16); alignment <<= 1) {
            MemorySegment s = h.allocate(24, alignment);
            assertEquals(0, s.address() % alignment, "alignment " + alignment);
            assertEquals(24, s.byteSize());
            assertArrayEquals(new byte[24], s.toArray(ValueLayout.JAVA_BYTE), "zeroed when padded too");
            kept.add(s);
        }
        assertTrue(counting.liveBytes() > 24L * kept.size(), "the over-aligned blocks are padded");
        kept.clear();
        awaitAllFreed();
        assertEquals(0, counting.liveBytes(), "padded blocks are freed with their padded size");
    }

    @Test
    void zeroNegativeAndOversizedRequestsBehaveAsTheJdksAllocators() {
        MemorySegment zero = h.allocate(0);
        MemorySegment zero2 = h.allocate(0);
        assertEquals(0, zero.byteSize());
        assertNotEquals(0, zero.address(), "a zero-size segment has an address");
        assertNotEquals(zero.address(), zero2.address(), "and its own");
        long calls = counting.allocations();
        assertThrows(IllegalArgumentException.class, () -> h.allocate(-1));
        assertThrows(IllegalArgumentException.class, () -> h.allocate(8, 3));
        assertThrows(IllegalArgumentException.class, () -> h.allocate(8, 0));
        assertThrows(IllegalArgumentException.class, () -> h.allocate(ValueLayout.JAVA_LONG, -1));
        assertThrows(IllegalArgumentException.class, () -> h.allocate(ValueLayout.JAVA_LONG, Long.MAX_VALUE / 4),
                "count * size overflows: the JDK's default method rejects it");
        OutOfMemoryError huge = assertThrows(OutOfMemoryError.class, () -> h.allocate(Long.MAX_VALUE));
        assertTrue(huge.getMessage().contains("'segment-allocator-test'") && huge.getMessage().contains(
                String.valueOf(Long.MAX_VALUE)), huge.getMessage());
        assertThrows(OutOfMemoryError.class, () -> h.allocate(DataMemAllocator.MAX_BYTE_SIZE, 1L << 20),
                "the padding pushes it past the address space");
        assertEquals(calls, counting.allocations(), "none of these reached the allocator");
    }

    @Test
    void exhaustionIsAnOutOfMemoryErrorNamingTheHandlerAndTheBytes() {
        Exhausted exhausted = new Exhausted();
        DataMemHandler none = DataMemHandler.of("exhausted", exhausted);
        OutOfMemoryError e = assertThrows(OutOfMemoryError.class, () -> none.allocate(1000));
        assertTrue(e.getMessage().contains("'exhausted'") && e.getMessage().contains("1000 bytes"), e.getMessage());
        OutOfNativeMemoryException cause = assertInstanceOf(OutOfNativeMemoryException.class, e.getCause());
        assertEquals("exhausted", cause.handlerName());
        assertEquals(1000, cause.byteSize());
        assertThrows(OutOfMemoryError.class, () -> none.allocateFrom("text"));
        assertEquals(2, exhausted.calls);
    }

    @Test
    void memoryTheHostCannotReachIsRefused() {
        DataMemHandler device = DataMemHandler.of("fake-device", FakeDeviceAllocator.cudaDevice(counting));
        long calls = counting.allocations();
        UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
                () -> device.allocate(64));
        assertTrue(e.getMessage().contains("'fake-device'"), e.getMessage());
        assertEquals(calls, counting.allocations());
    }
}
