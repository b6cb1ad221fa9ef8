package io.datamem.cuda.internal;

import io.datamem.AllocationException;
import io.datamem.BackendException;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** CUDA driver error codes ({@code CUresult}) to names and to {@link BackendException}s, without a GPU. */
class CudaErrorsTest {

    @Test
    void codesHaveTheDriverNames() {
        assertEquals("CUDA_SUCCESS", CudaErrors.name(0));
        assertEquals("CUDA_ERROR_INVALID_VALUE", CudaErrors.name(1));
        assertEquals("CUDA_ERROR_OUT_OF_MEMORY", CudaErrors.name(2));
        assertEquals("CUDA_ERROR_NOT_INITIALIZED", CudaErrors.name(3));
        assertEquals("CUDA_ERROR_STUB_LIBRARY", CudaErrors.name(34));
        assertEquals("CUDA_ERROR_NO_DEVICE", CudaErrors.name(100));
        assertEquals("CUDA_ERROR_INVALID_DEVICE", CudaErrors.name(101));
        assertEquals("CUDA_ERROR_INVALID_CONTEXT", CudaErrors.name(201));
        assertEquals("CUDA_ERROR_INVALID_HANDLE", CudaErrors.name(400));
        assertEquals("CUDA_ERROR_NOT_READY", CudaErrors.name(600));
        assertEquals("CUDA_ERROR_ILLEGAL_ADDRESS", CudaErrors.name(700));
        assertEquals("CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", CudaErrors.name(712));
        assertEquals("CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED", CudaErrors.name(713));
        assertEquals("CUDA_ERROR_UNKNOWN", CudaErrors.name(999));
        assertEquals("CUresult(123456)", CudaErrors.name(123456), "a code the table does not know");
        assertFalse(CudaErrors.known(123456));
        assertTrue(CudaErrors.known(712));
        assertEquals(2, CudaErrors.code("CUDA_ERROR_OUT_OF_MEMORY"));
        assertEquals(713, CudaErrors.code("CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED"));
        assertEquals(-1, CudaErrors.code("CUDA_ERROR_FROM_THE_FUTURE"));
        assertEquals(-1, CudaErrors.code("cudaErrorMemoryAllocation"), "runtime names are not driver names");
        assertEquals(CudaErrors.NOT_READY, CudaErrors.code("CUDA_ERROR_NOT_READY"));
        assertEquals(CudaErrors.HOST_MEMORY_ALREADY_REGISTERED, CudaErrors.code("CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED"));
    }

    @Test
    void onlyOutOfMemoryMeansExhaustion() {
        assertTrue(CudaErrors.isExhaustion(CudaErrors.OUT_OF_MEMORY));
        for (int code : new int[] {0, 1, 3, 34, 100, 201, 600, 700, 712, 999}) {
            assertFalse(CudaErrors.isExhaustion(code), CudaErrors.name(code));
        }
    }

    @Test
    void failuresBecomeBackendExceptionsNamingTheCode() {
        BackendException e = CudaErrors.exception("pool(cuda:device=1)", 4096, "cuMemAlloc", 700,
                "an illegal memory access was encountered");
        assertInstanceOf(AllocationException.class, e);
        assertEquals("CUDA", e.backend());
        assertEquals(700, e.code());
        assertEquals("CUDA_ERROR_ILLEGAL_ADDRESS", e.codeName());
        assertEquals("pool(cuda:device=1)", e.handlerName());
        assertEquals(4096, e.byteSize());
        assertEquals("handler 'pool(cuda:device=1)': CUDA cuMemAlloc failed with CUDA_ERROR_ILLEGAL_ADDRESS (700) for"
                + " 4096 bytes: an illegal memory access was encountered", e.getMessage());
        BackendException bare = CudaErrors.exception(null, 0, "cuStreamSynchronize", 3, null);
        assertEquals("CUDA cuStreamSynchronize failed with CUDA_ERROR_NOT_INITIALIZED (3)", bare.getMessage());
    }
}
