package io.datamem.cuda.internal;

import io.datamem.BackendException;
import io.datamem.cuda.CudaTests;
import org.junit.jupiter.api.Test;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodType;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The FFM bindings to the CUDA driver API without a driver: the exported names and C signatures
 * datamem binds (as {@code cuda.h} of CUDA 12 declares them), what happens when the library lacks a
 * function, and errors named from the driver's codes without any downcall. Nothing here binds the
 * real library.
 */
class DriverBindingsTest {

    /** Every function, by exported name, with the C signature written out from {@code cuda.h}. */
    private static Map<String, FunctionDescriptor> expected() {
        Map<String, FunctionDescriptor> m = new LinkedHashMap<>();
        MemoryLayout ptr = ADDRESS;        // pointers, handles, out-parameters
        MemoryLayout u32 = JAVA_INT;       // CUresult, CUdevice, int, unsigned int, enums
        MemoryLayout u64 = JAVA_LONG;      // size_t, CUdeviceptr
        m.put("cuCtxGetCurrent", FunctionDescriptor.of(u32, ptr));
        m.put("cuCtxSetCurrent", FunctionDescriptor.of(u32, ptr));
        m.put("cuCtxPushCurrent_v2", FunctionDescriptor.of(u32, ptr));
        m.put("cuCtxPopCurrent_v2", FunctionDescriptor.of(u32, ptr));
        m.put("cuDeviceGet", FunctionDescriptor.of(u32, ptr, u32));
        m.put("cuDevicePrimaryCtxRetain", FunctionDescriptor.of(u32, ptr, u32));
        m.put("cuMemHostAlloc", FunctionDescriptor.of(u32, ptr, u64, u32));
        m.put("cuMemFreeHost", FunctionDescriptor.of(u32, ptr));
        m.put("cuMemAlloc_v2", FunctionDescriptor.of(u32, ptr, u64));
        m.put("cuMemAllocManaged", FunctionDescriptor.of(u32, ptr, u64, u32));
        m.put("cuMemFree_v2", FunctionDescriptor.of(u32, u64));
        m.put("cuMemHostRegister_v2", FunctionDescriptor.of(u32, ptr, u64, u32));
        m.put("cuMemHostUnregister", FunctionDescriptor.of(u32, ptr));
        m.put("cuMemsetD8_v2", FunctionDescriptor.of(u32, u64, JAVA_BYTE, u64));
        m.put("cuMemcpy", FunctionDescriptor.of(u32, u64, u64, u64));
        m.put("cuMemcpyAsync", FunctionDescriptor.of(u32, u64, u64, u64, ptr));
        m.put("cuPointerGetAttributes", FunctionDescriptor.of(u32, u32, ptr, ptr, u64));
        m.put("cuMemGetAddressRange_v2", FunctionDescriptor.of(u32, ptr, ptr, u64));
        m.put("cuIpcGetMemHandle", FunctionDescriptor.of(u32, ptr, u64));
        m.put("cuIpcOpenMemHandle_v2", FunctionDescriptor.of(u32, ptr,
                java.lang.foreign.MemoryLayout.structLayout(java.lang.foreign.MemoryLayout.sequenceLayout(64, JAVA_BYTE)
                        .withName("reserved")), u32));
        m.put("cuIpcCloseMemHandle", FunctionDescriptor.of(u32, u64));
        m.put("cuStreamCreate", FunctionDescriptor.of(u32, ptr, u32));
        m.put("cuStreamDestroy_v2", FunctionDescriptor.of(u32, ptr));
        m.put("cuStreamQuery", FunctionDescriptor.of(u32, ptr));
        m.put("cuStreamSynchronize", FunctionDescriptor.of(u32, ptr));
        m.put("cuStreamWaitEvent", FunctionDescriptor.of(u32, ptr, ptr, u32));
        m.put("cuEventCreate", FunctionDescriptor.of(u32, ptr, u32));
        m.put("cuEventRecord", FunctionDescriptor.of(u32, ptr, ptr));
        m.put("cuEventSynchronize", FunctionDescriptor.of(u32, ptr));
        m.put("cuEventDestroy_v2", FunctionDescriptor.of(u32, ptr));
        m.put("cuGetErrorName", FunctionDescriptor.of(u32, u32, ptr));
        m.put("cuGetErrorString", FunctionDescriptor.of(u32, u32, ptr));
        return m;
    }

    @Test
    void everyFunctionIsBoundByItsExportedNameWithTheHeadersSignature() {
        Map<String, FunctionDescriptor> expected = expected();
        assertEquals(List.copyOf(expected.keySet()), List.copyOf(DriverSymbols.FUNCTIONS.keySet()));
        expected.forEach((name, descriptor) -> assertEquals(descriptor, DriverSymbols.FUNCTIONS.get(name), name));
        // the unversioned symbols of these are older ABIs (32-bit sizes and device pointers before
        // CUDA 3.2, older semantics for the others); the _ptds/_ptsz variants make stream 0 the
        // per-thread stream
        for (String old : List.of("cuMemAlloc", "cuMemFree", "cuMemsetD8", "cuMemHostRegister", "cuStreamDestroy",
                "cuEventDestroy", "cuCtxPushCurrent", "cuCtxPopCurrent", "cuMemcpy_ptds", "cuMemcpyAsync_ptsz",
                "cuStreamSynchronize_ptsz", "cuEventRecord_ptsz")) {
            assertFalse(DriverSymbols.FUNCTIONS.containsKey(old), old);
        }
    }

    @Test
    void aFunctionTheDriverLacksIsReportedAndFailsNamingIt() throws Throwable {
        SymbolLookup empty = name -> Optional.empty();
        List<String> missing = new ArrayList<>();
        MethodHandle h = DriverSymbols.bind(empty, "cuMemAlloc_v2", missing);
        assertEquals(List.of("cuMemAlloc_v2"), missing);
        assertEquals(MethodType.methodType(int.class, MemorySegment.class, long.class), h.type(),
                "the same type as the real downcall, so callers' invokeExact links");
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> { int _ = (int) h.invokeExact(MemorySegment.NULL, 16L); });
        assertTrue(e.getMessage().contains("libcuda.so.1 does not export cuMemAlloc_v2"), e.getMessage());
        assertTrue(e.getMessage().contains("CUDA 12 driver"), e.getMessage());
        assertEquals("the CUDA driver library libcuda.so.1 does not export cuMemsetD8_v2, cuMemcpy (datamem's"
                + " CUDA backend needs a CUDA 12 driver, R525 or newer)",
                DriverSymbols.message(List.of("cuMemsetD8_v2", "cuMemcpy")));
        assertThrows(IllegalArgumentException.class, () -> DriverSymbols.bind(empty, "cudaMalloc", missing),
                "only the functions of the table");
    }

    @Test
    void failuresAreNamedByTheDriversCodes() {
        assertDoesNotThrow(() -> CudaRuntime.check(CudaErrors.SUCCESS, "cuMemAlloc", "cuda:device=0", 4096));
        BackendException e = assertThrows(BackendException.class,
                () -> CudaRuntime.check(CudaErrors.INVALID_VALUE, "cuMemAlloc", "cuda:device=0", 4096));
        assertEquals("CUDA", e.backend());
        assertEquals(1, e.code());
        assertEquals("CUDA_ERROR_INVALID_VALUE", e.codeName());
        assertTrue(e.getMessage().startsWith("handler 'cuda:device=0': CUDA cuMemAlloc failed with"
                + " CUDA_ERROR_INVALID_VALUE (1) for 4096 bytes"), e.getMessage());
        BackendException unknown = assertThrows(BackendException.class,
                () -> CudaRuntime.check(4242, "cuStreamQuery", null, 0));
        assertEquals(4242, unknown.code());
        if (!CudaTests.driverPresent()) {
            assertEquals("CUresult(4242)", unknown.codeName(), "named without asking a driver");
            assertFalse(CudaDriver.bindingsInitialised(), "naming an error bound the driver");
        }
    }

    @Test
    void withoutADriverEveryCallFailsBeforeAnyDowncall() {
        CudaTests.assumeNoDriver();
        assertFalse(CudaRuntime.availability().available());
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> CudaRuntime.primaryContext(0));
        assertTrue(e.getMessage().startsWith("CUDA is unavailable: no CUDA driver"), e.getMessage());
        assertThrows(IllegalStateException.class, CudaRuntime::currentContext);
        assertThrows(IllegalStateException.class, () -> CudaRuntime.makeCurrent(0));
        assertFalse(CudaDriver.bindingsInitialised(), "the driver's functions were bound without a driver");
    }
}
