package io.datamem.cuda.internal;

import io.datamem.AllocationException;
import io.datamem.BackendException;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** CUDA error codes to names and to {@link BackendException}s, without a GPU. */
class CudaErrorsTest {

    @Test
    void codesHaveTheRuntimeNames() {
        assertEquals("cudaSuccess", CudaErrors.name(0));
        assertEquals("cudaErrorInvalidValue", CudaErrors.name(1));
        assertEquals("cudaErrorMemoryAllocation", CudaErrors.name(2));
        assertEquals("cudaErrorInsufficientDriver", CudaErrors.name(35));
        assertEquals("cudaErrorNoDevice", CudaErrors.name(100));
        assertEquals("cudaErrorInvalidDevice", CudaErrors.name(101));
        assertEquals("cudaErrorNotReady", CudaErrors.name(600));
        assertEquals("cudaErrorIllegalAddress", CudaErrors.name(700));
        assertEquals("cudaErrorHostMemoryAlreadyRegistered", CudaErrors.name(712));
        assertEquals("cudaErrorHostMemoryNotRegistered", CudaErrors.name(713));
        assertEquals("cudaErrorUnknown", CudaErrors.name(999));
        assertEquals("cudaError_t(123456)", CudaErrors.name(123456), "a code this JCuda does not know");
        assertEquals(2, CudaErrors.code("cudaErrorMemoryAllocation"));
        assertEquals(713, CudaErrors.code("cudaErrorHostMemoryNotRegistered"));
        assertEquals(-1, CudaErrors.code("cudaErrorFromTheFuture"));
    }

    @Test
    void onlyMemoryAllocationMeansExhaustion() {
        assertTrue(CudaErrors.isExhaustion(CudaErrors.MEMORY_ALLOCATION));
        for (int code : new int[] {0, 1, 35, 100, 700, 712, 999}) {
            assertFalse(CudaErrors.isExhaustion(code), CudaErrors.name(code));
        }
    }

    @Test
    void failuresBecomeBackendExceptionsNamingTheCode() {
        BackendException e = CudaErrors.exception("pool(cuda:device=1)", 4096, "cudaMalloc", 700,
                "an illegal memory access was encountered");
        assertInstanceOf(AllocationException.class, e);
        assertEquals("CUDA", e.backend());
        assertEquals(700, e.code());
        assertEquals("cudaErrorIllegalAddress", e.codeName());
        assertEquals("pool(cuda:device=1)", e.handlerName());
        assertEquals(4096, e.byteSize());
        assertEquals("handler 'pool(cuda:device=1)': CUDA cudaMalloc failed with cudaErrorIllegalAddress (700) for"
                + " 4096 bytes: an illegal memory access was encountered", e.getMessage());
        BackendException bare = CudaErrors.exception(null, 0, "cudaStreamSynchronize", 35, null);
        assertEquals("CUDA cudaStreamSynchronize failed with cudaErrorInsufficientDriver (35)", bare.getMessage());
    }
}
