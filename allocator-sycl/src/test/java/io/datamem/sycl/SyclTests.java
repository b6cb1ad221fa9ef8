package io.datamem.sycl;

import io.datamem.spi.Availability;
import io.datamem.usm.UsmKind;
import org.junit.jupiter.api.Assumptions;

/** Finding the OpenCL runtime the SYCL tests run on, or skipping with the reason. */
final class SyclTests {

    /** The selector the tests use: {@code -Ddatamem.sycl.test.selector=...}, else the default device. */
    static final SyclSelector SELECTOR = SyclSelector.parse(System.getProperty("datamem.sycl.test.selector",
            "default"));

    private SyclTests() {
    }

    /**
     * Skips the calling test unless a device with {@code cl_intel_unified_shared_memory} that can
     * allocate the kind is present.
     */
    static void assumeRuntime(UsmKind kind) {
        Availability a = SyclQueue.availability(SELECTOR, kind);
        Assumptions.assumeTrue(a.available(), () -> "skipped: the SYCL tests need an OpenCL device with "
                + "cl_intel_unified_shared_memory that can allocate USM " + kind.dpctlName() + " memory: " + a.reason()
                + (a.reason().contains("install-pocl.sh") ? "" : "; .ci/install-pocl.sh builds one (PoCL 6.0, a CPU"
                + " device) and the build finds it in ~/.cache/datamem/pocl-6.0 (docs/sycl.md)"));
    }

    static SyclQueue queue(UsmKind kind) {
        assumeRuntime(kind);
        return SyclQueue.of(SELECTOR);
    }

    /** The handler name of a kind on the tests' device: {@code sycl:KIND}, with the selector unless it is the default. */
    static String handlerName(UsmKind kind) {
        return "sycl:" + kind.dpctlName() + (SELECTOR.isDefault() ? "" : ":" + SELECTOR);
    }
}
