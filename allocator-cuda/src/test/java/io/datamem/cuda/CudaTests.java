package io.datamem.cuda;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.MemoryTraits;
import io.datamem.cuda.internal.CudaDriver;
import io.datamem.testing.WithTraits;
import org.junit.jupiter.api.Assumptions;

/** What the CUDA tests share: the GPU assumption with its message, and host-backed stand-ins. */
public final class CudaTests {

    /** How to run the GPU tests, for skip messages. */
    public static final String HOW_TO_RUN = "to run the GPU tests, use a machine with an NVIDIA GPU and"
            + " driver: ./mvnw -B verify runs them with everything, ./mvnw -B test -pl allocator-cuda -am"
            + " -Dgroups=cuda runs only them (docs/cuda.md)";

    private CudaTests() {
    }

    /**
     * Skips the calling test (or class, from {@code @BeforeAll}) unless CUDA works here; the
     * message says what is missing and how to run the GPU tests.
     */
    public static void assumeGpu() {
        Assumptions.assumeTrue(Cuda.isAvailable(), () -> "needs a CUDA GPU, unavailable here: "
                + Cuda.availability().reason() + ". " + HOW_TO_RUN);
    }

    /** Whether the driver library can be opened at all. */
    public static boolean driverPresent() {
        return CudaDriver.probe().driverVersion() > 0;
    }

    /** Skips the calling test on machines with a CUDA driver (it checks the machine without one). */
    public static void assumeNoDriver() {
        Assumptions.assumeFalse(driverPresent(), () -> "a CUDA driver is installed here (CUDA "
                + CudaDriver.versionString(CudaDriver.probe().driverVersion()) + "); this test checks a machine"
                + " without one, the GPU tests (tag cuda) check this one");
    }

    /**
     * Whether this JVM bound the CUDA driver's functions (datamem's downcalls to
     * {@code libcuda.so.1}), which must never happen without a working driver.
     */
    public static boolean driverBound() {
        return CudaDriver.bindingsInitialised();
    }

    /**
     * Host memory reporting the traits of CUDA memory (with datamem's CUDA interchange): for
     * exports and traits without a GPU. Nothing may copy it through CUDA.
     */
    public static DataMemAllocator hostBacked(MemoryTraits traits) {
        return new WithTraits(DataMem.handler("aligned:" + traits.byteAlignment()).allocator(), traits);
    }
}
