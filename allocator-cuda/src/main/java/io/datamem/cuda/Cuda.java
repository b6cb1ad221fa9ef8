package io.datamem.cuda;

import io.datamem.cuda.internal.CudaDriver;
import io.datamem.cuda.internal.CudaRuntime;
import io.datamem.spi.Availability;

import java.util.List;

/**
 * Whether CUDA works in this JVM, and what the driver reports.
 *
 * <p>The answer is decided once: the driver library {@code libcuda.so.1} is opened and asked
 * through the JDK's foreign function API (its version, {@code cuInit}, its devices), then the
 * driver functions datamem calls are looked up in it. The backend needs a CUDA 12 driver and
 * nothing else: no CUDA toolkit, no runtime library, no JNI library. Without a GPU nothing native
 * beyond {@code dlopen} happens.
 */
public final class Cuda {

    private Cuda() {
    }

    /**
     * Whether CUDA works here.
     *
     * @return available, or unavailable with a reason a user can act on (for example
     *         {@code no CUDA driver: libcuda.so.1 not found (install the NVIDIA driver; ...)})
     */
    public static Availability availability() {
        return CudaRuntime.availability();
    }

    /**
     * Shorthand for {@code availability().available()}.
     *
     * @return whether CUDA works here
     */
    public static boolean isAvailable() {
        return availability().available();
    }

    /**
     * The CUDA devices, numbered as the runtime numbers them.
     *
     * @return the devices; empty when CUDA is unavailable
     */
    public static List<CudaDevice> devices() {
        return isAvailable() ? CudaDriver.probe().devices().stream().map(p -> new CudaDevice(p.ordinal(), p.name(),
                p.totalByteSize(), p.pciBusId(), p.computeCapabilityMajor(), p.computeCapabilityMinor())).toList()
                : List.of();
    }

    /**
     * The CUDA version the driver supports ({@code cuDriverGetVersion}).
     *
     * @return for example 12040 for 12.4; 0 if there is no driver
     */
    public static int driverVersion() {
        return CudaDriver.probe().driverVersion();
    }

    /**
     * A few lines for {@code datamem info}: the availability or its reason, the driver and the
     * devices.
     *
     * @return the report, each line without indentation
     */
    public static String report() {
        Availability a = availability();
        StringBuilder s = new StringBuilder();
        if (!a.available()) {
            s.append("unavailable: ").append(a.reason()).append('\n');
            return s.toString();
        }
        s.append("available: driver supports CUDA ").append(CudaDriver.versionString(driverVersion()))
                .append(" (driver API through FFM)").append('\n');
        for (CudaDevice d : devices()) {
            s.append(d).append('\n');
            if (!d.pciBusId().isEmpty()) {
                s.append("  host memory near it: cuda:registered(numa:bind=pci:").append(d.pciBusId()).append(")\n");
            }
        }
        return s.toString();
    }
}
