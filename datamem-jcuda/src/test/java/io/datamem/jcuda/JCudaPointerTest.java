package io.datamem.jcuda;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.MemoryKind;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.array.Slice;
import io.datamem.testing.FakeDeviceAllocator;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * datamem arrays as JCuda pointers, without a GPU: the pointers hold the array's own address (as
 * JCuda's native code reads it: native pointer plus byte offset), the array is held against
 * closing until the hold is closed, and what JCuda cannot address is refused. JCuda's pointer
 * classes are plain Java; nothing here loads JCuda's natives. {@link JCudaGpuTest} runs JCuda on a
 * GPU.
 */
class JCudaPointerTest {

    private static final DataMemHandler FAKE_CUDA_DEVICE = new DataMemHandler("fake_cuda_device", 1,
            FakeDeviceAllocator.cudaDevice(DataMem.builtinDefault().allocator()));

    @Test
    void hostMemoryIsAPointerButNoDevicePointer() {
        try (NDArray x = NDArray.zeros(DType.FLOAT32, 64);
             JCudaPointer p = JCudaPointer.of(x)) {
            Pointer pointer = p.pointer();
            assertEquals(x.address(), Addresses.of(pointer), "the array's own address");
            assertNotSame(pointer, p.pointer(), "a new object each time: JCuda's natives may write into them");
            UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class, p::devicePointer);
            assertTrue(e.getMessage().contains("plain host memory") && e.getMessage().contains("cuda:pinned"),
                    e.getMessage());
            assertThrows(IllegalStateException.class, x::close, "held");
        }
    }

    @Test
    void cudaDeviceMemoryIsADevicePointerAtTheArraysAddress() {
        NDArray x = DataMem.callWith(FAKE_CUDA_DEVICE, () -> NDArray.zeros(DType.FLOAT64, 4, 8));
        assertEquals(MemoryKind.DEVICE, x.traits().kind());
        NDArray row = x.slice(Slice.range(2, 3));
        JCudaPointer p = JCudaPointer.of(row);
        CUdeviceptr d = p.devicePointer();
        assertEquals(x.address() + 2 * 8 * 8, Addresses.of(d), "a view at its first element");
        assertEquals(Addresses.of(d), Addresses.of(p.pointer()), "the same address for the runtime API");
        assertEquals(x.address() + 2 * 8 * 8 + 24, Addresses.of(d.withByteOffset(24)),
                "JCuda's own offsets add to it");
        IllegalStateException close = assertThrows(IllegalStateException.class, x::close);
        assertTrue(close.getMessage().contains("export(s) still held"), close.getMessage());
        assertThrows(IllegalStateException.class, () -> x.resize(64));
        p.close();
        p.close();
        assertTrue(p.isReleased());
        assertThrows(IllegalStateException.class, p::devicePointer);
        assertThrows(IllegalStateException.class, p::pointer);
        x.close();
        assertTrue(row.isClosed());
    }

    @Test
    void eachHoldIsReleasedExactlyOnce() {
        NDArray x = NDArray.zeros(DType.INT32, 16);
        JCudaPointer first = JCudaPointer.of(x);
        JCudaPointer second = JCudaPointer.of(x);
        first.close();
        first.close();
        assertThrows(IllegalStateException.class, x::close, "the second hold remains");
        second.close();
        x.close();
        assertThrows(IllegalStateException.class, () -> JCudaPointer.of(x), "closed");
    }

    @Test
    void memoryOfOtherDevicesAndHeapArraysAreRefused() {
        DataMemHandler sycl = new DataMemHandler("fake_sycl_device", 1,
                FakeDeviceAllocator.sycl(DataMem.builtinDefault().allocator(), MemoryKind.DEVICE));
        NDArray onSycl = DataMem.callWith(sycl, () -> NDArray.zeros(DType.INT8, 8));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> JCudaPointer.of(onSycl));
        assertTrue(e.getMessage().contains("expected: host memory or CUDA memory"), e.getMessage());
        onSycl.close();   // the refused export released its hold

        NDArray heap = NDArray.wrap(MemorySegment.ofArray(new float[4]), DType.FLOAT32, 4);
        assertThrows(UnsupportedOperationException.class, () -> JCudaPointer.of(heap));
    }

    @Test
    void importsRefusePointersWithoutANativeAddressBeforeCallingJCuda() {
        IllegalArgumentException javaArray = assertThrows(IllegalArgumentException.class,
                () -> JCudaArrays.fromCudaMallocHost(Pointer.to(new float[4]), 16, DType.FLOAT32, 4));
        assertTrue(javaArray.getMessage().contains("holds no native address"), javaArray.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> JCudaArrays.fromCudaMallocHost(new Pointer(), 16, DType.FLOAT32, 4));
        assertThrows(IllegalArgumentException.class,
                () -> JCudaArrays.fromCuMemAlloc(new CUdeviceptr(), 16, DType.FLOAT32, 4));
    }
}
