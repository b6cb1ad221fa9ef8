package io.datamem.jna;

import com.sun.jna.Pointer;
import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.array.Slice;
import io.datamem.testing.FakeDeviceAllocator;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * datamem arrays handed to a JNA-bound C function ({@code native/jna_probe.c}): the function reads
 * and writes the array's own memory (the same address, no copy), and the array cannot be closed or
 * resized while the pointer is held.
 */
class JnaPointerTest {

    private static JnaProbe probe;

    @BeforeAll
    static void compileTheProbe(@TempDir Path dir) {
        probe = JnaProbe.load(dir);
    }

    @Test
    void aJnaBoundFunctionReadsAndWritesTheArrayInPlace() {
        try (NDArray x = NDArray.empty(DType.FLOAT64, 4, 3)) {
            for (int i = 0; i < 12; i++) {
                x.setDouble(i, i / 3, i % 3);
            }
            try (JnaPointer p = JnaPointer.of(x)) {
                assertEquals(x.address(), Pointer.nativeValue(p.pointer()), "the array's address, not a copy's");
                assertEquals(x.address(), probe.jna_probe_address_of(p.pointer()), "what the C function received");
                assertEquals(66.0, probe.jna_probe_add_one(p.pointer(), 12), "the C function read the elements");
                assertSame(x, p.array());
            }
            double[] expected = new double[12];
            for (int i = 0; i < 12; i++) {
                expected[i] = i + 1;
            }
            assertArrayEquals(expected, x.toDoubleArray(), "and wrote them in place");
        }
    }

    @Test
    void theArrayCannotBeClosedOrResizedWhileThePointerIsHeld() {
        NDArray x = NDArray.zeros(DType.INT32, 100);
        JnaPointer p = JnaPointer.of(x);
        IllegalStateException close = assertThrows(IllegalStateException.class, x::close);
        assertTrue(close.getMessage().contains("export(s) still held"), close.getMessage());
        assertThrows(IllegalStateException.class, () -> x.resize(200));
        assertFalse(x.isClosed(), "the refused close left the array usable");
        x.setLong(7, 3);
        assertEquals(7, p.pointer().getInt(12), "JNA reads what the array wrote");
        p.close();
        assertTrue(p.isReleased());
        IllegalStateException late = assertThrows(IllegalStateException.class, p::pointer);
        assertTrue(late.getMessage().contains("is closed"), late.getMessage());
        x.close();
        assertTrue(x.isClosed());
    }

    @Test
    void eachHoldIsReleasedExactlyOnce() {
        NDArray x = NDArray.zeros(DType.FLOAT32, 10);
        JnaPointer first = JnaPointer.of(x);
        JnaPointer second = JnaPointer.of(x);
        first.close();
        first.close();   // a second close must not release the other hold
        assertThrows(IllegalStateException.class, x::close, "the second pointer still holds it");
        second.close();
        x.close();
        assertTrue(x.isClosed());
    }

    @Test
    void aViewIsHandedOverAtItsFirstElementAndHoldsItsOwner() {
        NDArray owner = NDArray.zeros(DType.INT64, 10);
        for (int i = 0; i < 10; i++) {
            owner.setLong(i, i);
        }
        NDArray tail = owner.slice(Slice.range(4, 10));
        try (JnaPointer p = JnaPointer.of(tail)) {
            assertEquals(owner.address() + 4 * 8, Pointer.nativeValue(p.pointer()));
            assertEquals(4, p.pointer().getLong(0));
            assertThrows(IllegalStateException.class, owner::close, "the view's hold keeps its owner open");
        }
        owner.close();
        assertThrows(IllegalStateException.class, () -> JnaPointer.of(tail), "a view of a closed owner");
    }

    @Test
    void closedHeapAndDeviceArraysAreRefused() {
        NDArray closed = NDArray.zeros(DType.INT8, 4);
        closed.close();
        assertThrows(IllegalStateException.class, () -> JnaPointer.of(closed));

        NDArray heap = NDArray.wrap(MemorySegment.ofArray(new double[4]), DType.FLOAT64, 4);
        assertThrows(UnsupportedOperationException.class, () -> JnaPointer.of(heap));
        heap.close();

        DataMemHandler device = new DataMemHandler("fake_cuda_device", 1,
                FakeDeviceAllocator.cudaDevice(DataMem.builtinDefault().allocator()));
        NDArray onDevice = DataMem.callWith(device, () -> NDArray.zeros(DType.FLOAT32, 8));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> JnaPointer.of(onDevice));
        assertTrue(e.getMessage().contains("the host cannot access") && e.getMessage().contains("datamem-jcuda"),
                e.getMessage());
        onDevice.close();   // the refused export released its hold
        assertTrue(onDevice.isClosed());
    }

    @Test
    void aNativeSegmentIsAPointerToItsFirstByte() {
        try (Arena arena = DataMem.builtinDefault().openArena()) {
            MemorySegment block = arena.allocate(ValueLayout.JAVA_DOUBLE, 3);
            block.setAtIndex(ValueLayout.JAVA_DOUBLE, 2, 41.0);
            Pointer p = JnaPointer.pointerTo(block);
            assertEquals(block.address(), Pointer.nativeValue(p));
            assertEquals(41.0, probe.jna_probe_add_one(p.share(16), 1));
            assertEquals(42.0, block.getAtIndex(ValueLayout.JAVA_DOUBLE, 2));
        }
        assertThrows(IllegalArgumentException.class, () -> JnaPointer.pointerTo(MemorySegment.ofArray(new int[2])));
        Arena closed = Arena.ofConfined();
        MemorySegment gone = closed.allocate(8);
        closed.close();
        assertThrows(IllegalStateException.class, () -> JnaPointer.pointerTo(gone));
    }
}
