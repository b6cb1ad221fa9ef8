package io.datamem.cuda.internal;

import io.datamem.BackendException;
import io.datamem.cuda.CudaTests;
import jcuda.runtime.JCuda;
import jcuda.runtime.cudaStream_t;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * JCuda's runtime JNI library on a machine without a driver: it loads (the CUDA runtime inside it
 * is linked statically and looks for the driver only when called), and every call answers
 * {@code cudaErrorInsufficientDriver}, which datamem turns into a {@link BackendException} naming
 * it. datamem itself never loads JCuda without a driver; this test does so on purpose, in a JVM of
 * its own, to run the real error path.
 */
class JCudaWithoutDriverTest {

    @BeforeAll
    static void noDriver() {
        CudaTests.assumeNoDriver();
    }

    @Test
    void runtimeCallsReportTheMissingDriverAndDatamemNamesIt() {
        int[] count = {-1};
        int rc = JCuda.cudaGetDeviceCount(count);
        assertEquals(CudaErrors.INSUFFICIENT_DRIVER, rc, CudaErrors.name(rc));
        assertTrue(CudaTests.jcudaLoaded(), "the JNI library is mapped");
        BackendException e = assertThrows(BackendException.class, () -> CudaRuntime.check(rc, "cudaGetDeviceCount",
                "cuda:device=0", 0));
        assertEquals("cudaErrorInsufficientDriver", e.codeName());
        assertEquals("CUDA", e.backend());
        assertTrue(e.getMessage().startsWith("handler 'cuda:device=0': CUDA cudaGetDeviceCount failed with"
                + " cudaErrorInsufficientDriver (35)"), e.getMessage());
    }

    @Test
    void jcudaExceptionsSwitchedOnAreTranslatedBackToCodes() {
        JCuda.setExceptionsEnabled(true);
        try {
            BackendException e = assertThrows(BackendException.class, () -> CudaRuntime.enter(0));
            assertEquals("cudaErrorInsufficientDriver", e.codeName());
            assertEquals(CudaErrors.INSUFFICIENT_DRIVER, e.code());
        } finally {
            JCuda.setExceptionsEnabled(false);
        }
    }

    @Test
    void streamValuesBecomeJCudaHandlesAndBack() {
        for (long value : new long[] {1, 2, 0x7f12_3456_7800L}) {
            cudaStream_t s = Handles.stream(value);
            assertEquals(value, Handles.value(s));
        }
        assertEquals(0x5000L, Handles.value(Handles.event(0x5000L)));
    }

    @Test
    void theNativesAreFoundOnTheClassPath() {
        assertEquals("libJCudaRuntime-12.6.0-linux-x86_64.so", JCudaNatives.runtimeLibraryFileName());
        assertTrue(JCudaNatives.visibleToJCuda(), "the natives jar is on the test class path");
        assertTrue(JCudaNatives.prepare().startsWith("JCuda finds"), JCudaNatives.prepare());
    }
}
