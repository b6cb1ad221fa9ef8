package io.datamem.jcuda;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.Device;
import io.datamem.DeviceType;
import io.datamem.MemoryKind;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.cuda.Cuda;
import jcuda.CudaException;
import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmemorytype;
import jcuda.driver.CUmodule;
import jcuda.driver.CUpointer_attribute;
import jcuda.driver.JCudaDriver;
import jcuda.runtime.JCuda;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.ByteOrder;
import java.nio.IntBuffer;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * JCuda on a GPU with datamem memory: a kernel launched through JCuda's driver API adds one to
 * each element of an array that datamem's {@code cuda:device=0} handler allocated, in place; and
 * memory JCuda allocated ({@code cuMemAlloc}, {@code cudaMallocHost}) becomes datamem arrays freed
 * through JCuda. Skipped without a CUDA GPU.
 */
@Tag("cuda")
class JCudaGpuTest {

    /** {@code add_one(double *data, unsigned n)}: data[i] += 1 for i < n, one thread per element. */
    private static final String ADD_ONE_PTX = """
            .version 7.0
            .target sm_50
            .address_size 64

            .visible .entry add_one(
                .param .u64 data,
                .param .u32 n
            )
            {
                .reg .pred %p<2>;
                .reg .b32 %r<6>;
                .reg .f64 %fd<3>;
                .reg .b64 %rd<5>;

                ld.param.u64 %rd1, [data];
                ld.param.u32 %r1, [n];
                mov.u32 %r2, %ctaid.x;
                mov.u32 %r3, %ntid.x;
                mov.u32 %r4, %tid.x;
                mad.lo.s32 %r5, %r2, %r3, %r4;
                setp.ge.u32 %p1, %r5, %r1;
                @%p1 bra DONE;
                cvta.to.global.u64 %rd2, %rd1;
                mul.wide.u32 %rd3, %r5, 8;
                add.s64 %rd4, %rd2, %rd3;
                ld.global.f64 %fd1, [%rd4];
                add.f64 %fd2, %fd1, 0d3FF0000000000000;
                st.global.f64 [%rd4], %fd2;
            DONE:
                ret;
            }
            """;

    private static CUdevice device;
    private static CUcontext primary;

    /**
     * Skips each test without a GPU (so that each is reported skipped, with the reason), and makes
     * the device's primary context, the one datamem's {@code cuda:*} handlers use, current in JCuda.
     */
    @BeforeEach
    void gpu() {
        assumeTrue(Cuda.isAvailable(), () -> "needs a CUDA GPU and its driver, unavailable here: "
                + Cuda.availability().reason() + ". The JCuda tests (tag cuda) run where one is:"
                + " ./mvnw -B test -pl datamem-jcuda -am -Dgroups=cuda (docs/cuda.md)");
        if (primary == null) {
            JCudaDriver.setExceptionsEnabled(true);
            JCuda.setExceptionsEnabled(true);
            JCudaDriver.cuInit(0);
            device = new CUdevice();
            JCudaDriver.cuDeviceGet(device, 0);
            CUcontext context = new CUcontext();
            JCudaDriver.cuDevicePrimaryCtxRetain(context, device);
            primary = context;
        }
        JCudaDriver.cuCtxSetCurrent(primary);
    }

    @AfterAll
    static void release() {
        if (primary != null) {
            JCudaDriver.cuDevicePrimaryCtxRelease(device);
        }
    }

    @Test
    void aJCudaKernelAddsOneToDatamemDeviceMemoryInPlace() {
        DataMemHandler gpu = DataMem.handler("cuda:device=0");
        int n = 1000;
        double[] host = new double[n];
        for (int i = 0; i < n; i++) {
            host[i] = i * 0.25;
        }
        NDArray x = DataMem.callWith(gpu, () -> NDArray.empty(DType.FLOAT64, n));
        assertEquals(MemoryKind.DEVICE, x.traits().kind());
        CUmodule module = new CUmodule();
        try (JCudaPointer p = JCudaPointer.of(x)) {
            CUdeviceptr data = p.devicePointer();
            assertEquals(x.address(), Addresses.of(data), "datamem's device address, no copy");
            int[] type = new int[1];
            JCudaDriver.cuPointerGetAttribute(Pointer.to(type), CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                    data);
            assertEquals(CUmemorytype.CU_MEMORYTYPE_DEVICE, type[0], "the driver sees device memory there");
            JCudaDriver.cuMemcpyHtoD(data, Pointer.to(host), 8L * n);

            JCudaDriver.cuModuleLoadData(module, (ADD_ONE_PTX + "\0").getBytes(StandardCharsets.US_ASCII));
            CUfunction addOne = new CUfunction();
            JCudaDriver.cuModuleGetFunction(addOne, module, "add_one");
            Pointer parameters = Pointer.to(Pointer.to(p.devicePointer()), Pointer.to(new int[] {n}));
            JCudaDriver.cuLaunchKernel(addOne, (n + 255) / 256, 1, 1, 256, 1, 1, 0, null, parameters, null);
            JCudaDriver.cuCtxSynchronize();

            assertThrows(IllegalStateException.class, x::close, "held while JCuda uses it");
            double[] back = new double[n];
            JCudaDriver.cuMemcpyDtoH(Pointer.to(back), p.devicePointer(), 8L * n);
            for (int i = 0; i < n; i++) {
                assertEquals(host[i] + 1, back[i], "element " + i);
            }
        } finally {
            JCudaDriver.cuModuleUnload(module);
        }
        x.close();
        assertTrue(x.isClosed());
    }

    @Test
    void cuMemAllocMemoryBecomesADeviceArrayFreedThroughCuMemFree() {
        CUdeviceptr d = new CUdeviceptr();
        JCudaDriver.cuMemAlloc(d, 4096);
        NDArray a = JCudaArrays.fromCuMemAlloc(d, 4096, DType.FLOAT32, 1024);
        assertEquals(Addresses.of(d), a.address());
        assertEquals(JCudaArrays.HANDLER_NAME, a.handler().name());
        assertEquals(MemoryKind.DEVICE, a.traits().kind());
        assertEquals(new Device(DeviceType.CUDA, 0), a.traits().device());
        try (JCudaPointer p = JCudaPointer.of(a)) {
            JCudaDriver.cuMemsetD32(p.devicePointer(), Float.floatToIntBits(2.5f), 1024);
            float[] out = new float[1024];
            JCudaDriver.cuMemcpyDtoH(Pointer.to(out), d, 4096);
            for (float v : out) {
                assertEquals(2.5f, v);
            }
        }
        a.close();
        assertThrows(CudaException.class, () -> JCudaDriver.cuMemGetAddressRange(new CUdeviceptr(), new long[1], d),
                "closing the array freed the allocation");

        CUdeviceptr small = new CUdeviceptr();
        JCudaDriver.cuMemAlloc(small, 256);
        IllegalArgumentException tooLarge = assertThrows(IllegalArgumentException.class,
                () -> JCudaArrays.fromCuMemAlloc(small, 512, DType.INT8, 512));
        assertTrue(tooLarge.getMessage().contains("at most 256"), tooLarge.getMessage());
        JCudaDriver.cuMemFree(small);   // the refused import left it to the caller
    }

    @Test
    void cudaMallocHostMemoryBecomesAPinnedArrayFreedThroughCudaFreeHost() {
        Pointer h = new Pointer();
        JCuda.cudaMallocHost(h, 1024);
        NDArray a = JCudaArrays.fromCudaMallocHost(h, 1024, DType.INT32, 256);
        assertEquals(MemoryKind.HOST_PINNED, a.traits().kind());
        assertEquals(Addresses.of(h), a.address());
        a.fill(7L);
        IntBuffer seen = h.getByteBuffer(0, 1024).order(ByteOrder.nativeOrder()).asIntBuffer();
        assertEquals(7, seen.get(255), "one memory, seen from both sides");
        try (JCudaPointer p = JCudaPointer.of(a)) {
            assertEquals(a.address(), Addresses.of(p.devicePointer()), "pinned memory is device-addressable");
        }
        a.close();
        a.close();
    }
}
