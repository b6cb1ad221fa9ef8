package io.datamem.cuda.internal;

import io.datamem.spi.Availability;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The CUDA driver library ({@code libcuda.so.1}) through FFM: whether it is there, whether it
 * initialises, its version and its devices. This is what decides the provider's availability,
 * before any of the driver calls datamem makes ({@link DriverCalls}) is bound. Internal.
 */
public final class CudaDriver {

    /** The driver library's soname. */
    public static final String LIBRARY = "libcuda.so.1";

    /** The oldest driver API version datamem's CUDA backend accepts (12.0). */
    public static final int MIN_DRIVER_VERSION = 12000;

    /** {@code CUDA_SUCCESS}. */
    static final int CUDA_SUCCESS = 0;
    /** {@code CUDA_ERROR_NO_DEVICE}. */
    static final int CUDA_ERROR_NO_DEVICE = 100;

    private static final Linker LINKER = Linker.nativeLinker();

    /**
     * What probing the driver found.
     *
     * @param availability  available, or why not
     * @param driverVersion the driver API version ({@code cuDriverGetVersion}, 12040 for 12.4), or 0
     *                      if the library is missing or does not answer
     * @param devices       the devices, empty when unavailable
     */
    public record Probe(Availability availability, int driverVersion, List<DeviceProperties> devices) {

        /**
         * Copies the device list.
         */
        public Probe {
            devices = List.copyOf(devices);
        }
    }

    /**
     * One device as the driver describes it: what {@link io.datamem.cuda.CudaDevice} publishes.
     *
     * @param ordinal                the device ordinal
     * @param name                   the product name, or {@code unknown}
     * @param totalByteSize          the device memory, in bytes, 0 if unknown
     * @param pciBusId               the PCI address, or empty if unknown
     * @param computeCapabilityMajor the compute capability's major version, 0 if unknown
     * @param computeCapabilityMinor the compute capability's minor version
     */
    public record DeviceProperties(int ordinal, String name, long totalByteSize, String pciBusId,
                                   int computeCapabilityMajor, int computeCapabilityMinor) {

        /**
         * The device in a line: {@code cuda:0 NAME (80.0 GiB, compute capability 9.0, PCI ...)}.
         *
         * @return the description
         */
        @Override
        public String toString() {
            return "cuda:" + ordinal + " " + name + " (" + String.format(Locale.ROOT, "%.1f GiB",
                    totalByteSize / (double) (1L << 30)) + ", compute capability " + computeCapabilityMajor + "."
                    + computeCapabilityMinor + (pciBusId.isEmpty() ? "" : ", PCI " + pciBusId) + ")";
        }
    }

    private static volatile Probe cached;
    private static volatile CudaDriver opened;

    /** Set when {@link DriverCalls} binds the driver's functions (never without a driver). */
    static volatile boolean bindingsInitialised;

    private final SymbolLookup lookup;
    private final MethodHandle cuInit;
    private final MethodHandle cuDriverGetVersion;
    private final MethodHandle cuDeviceGetCount;
    private final MethodHandle cuDeviceGet;
    private final MethodHandle cuDeviceGetName;
    private final MethodHandle cuDeviceTotalMem;
    private final MethodHandle cuDeviceGetPciBusId;
    private final MethodHandle cuDeviceGetAttribute;
    private final MethodHandle cuGetErrorName;

    private CudaDriver(SymbolLookup lookup) {
        this.lookup = lookup;
        cuInit = handle("cuInit", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
        cuDriverGetVersion = handle("cuDriverGetVersion", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        cuDeviceGetCount = handle("cuDeviceGetCount", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        cuDeviceGet = handle("cuDeviceGet", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        cuDeviceGetName = handle("cuDeviceGetName", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT));
        cuDeviceTotalMem = handle("cuDeviceTotalMem_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        cuDeviceGetPciBusId = handle("cuDeviceGetPCIBusId", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT,
                JAVA_INT));
        cuDeviceGetAttribute = handle("cuDeviceGetAttribute", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT,
                JAVA_INT));
        cuGetErrorName = handle("cuGetErrorName", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
    }

    private MethodHandle handle(String name, FunctionDescriptor descriptor) {
        return lookup.find(name).map(s -> LINKER.downcallHandle(s, descriptor)).orElse(null);
    }

    /**
     * Probes {@value #LIBRARY} once per JVM and remembers the answer.
     *
     * @return the probe
     */
    public static Probe probe() {
        Probe p = cached;
        if (p == null) {
            synchronized (CudaDriver.class) {
                p = cached;
                if (p == null) {
                    p = probe(LIBRARY, System.getProperty("os.name", ""), System.getProperty("os.arch", ""),
                            System.getenv("CUDA_VISIBLE_DEVICES"));
                    cached = p;
                }
            }
        }
        return p;
    }

    /**
     * Probes a driver library (tests pass names that do not exist).
     *
     * @param library            the library to open, {@value #LIBRARY} for the real driver
     * @param osName             {@code os.name}
     * @param osArch             {@code os.arch}
     * @param cudaVisibleDevices the {@code CUDA_VISIBLE_DEVICES} variable, or null
     * @return what was found; never throws
     */
    public static Probe probe(String library, String osName, String osArch, String cudaVisibleDevices) {
        if (!osName.toLowerCase(Locale.ROOT).startsWith("linux")
                || !(osArch.equals("amd64") || osArch.equals("x86_64"))) {
            return unavailable("datamem's CUDA backend runs on Linux x86-64 (its driver bindings are written and"
                    + " checked for linux-x86_64); this is " + osName + " " + osArch, 0);
        }
        Optional<CudaDriver> opened = open(library);
        if (opened.isEmpty()) {
            return unavailable("no CUDA driver: " + library + " not found (install the NVIDIA driver; in a"
                    + " container, run it with the NVIDIA container toolkit, for example docker run --gpus all)", 0);
        }
        CudaDriver d = opened.get();
        if (d.cuInit == null || d.cuDriverGetVersion == null || d.cuDeviceGetCount == null) {
            return unavailable("no usable CUDA driver: " + library + " lacks cuInit, cuDriverGetVersion or"
                    + " cuDeviceGetCount (is it a stub library? install the NVIDIA driver)", 0);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_INT);
            int version = 0;
            if (d.call(d.cuDriverGetVersion, out) == CUDA_SUCCESS) {
                version = out.get(JAVA_INT, 0);
            }
            int init = d.callInt(d.cuInit, 0);
            if (init != CUDA_SUCCESS) {
                String visible = cudaVisibleDevices == null ? ""
                        : " (CUDA_VISIBLE_DEVICES='" + cudaVisibleDevices + "' hides devices not listed)";
                String what = init == CUDA_ERROR_NO_DEVICE ? "no CUDA device" : "the CUDA driver cannot start";
                return unavailable(what + ": cuInit failed with " + d.errorName(init) + " (" + init + ")" + visible
                        + " [driver " + versionString(version) + "]", version);
            }
            if (version < MIN_DRIVER_VERSION) {
                return unavailable("the CUDA driver supports CUDA " + versionString(version) + ", older than"
                        + " CUDA 12, which datamem's CUDA backend needs: update the NVIDIA driver to R525 or newer",
                        version);
            }
            int rc = d.call(d.cuDeviceGetCount, out);
            int count = rc == CUDA_SUCCESS ? out.get(JAVA_INT, 0) : 0;
            if (rc != CUDA_SUCCESS || count == 0) {
                return unavailable("no CUDA device: " + (rc != CUDA_SUCCESS ? "cuDeviceGetCount failed with "
                        + d.errorName(rc) + " (" + rc + ")" : "the driver reports 0 devices")
                        + (cudaVisibleDevices == null ? "" : " (CUDA_VISIBLE_DEVICES='" + cudaVisibleDevices + "')"),
                        version);
            }
            List<DeviceProperties> devices = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                devices.add(d.device(arena, i));
            }
            return new Probe(Availability.AVAILABLE, version, devices);
        } catch (RuntimeException | LinkageError e) {
            return unavailable("probing the CUDA driver " + library + " failed: " + e, 0);
        }
    }

    private static Probe unavailable(String reason, int version) {
        return new Probe(Availability.unavailable(reason), version, List.of());
    }

    /**
     * {@code 12040} as {@code 12.4}.
     *
     * @param version a CUDA version number
     * @return major.minor, or {@code unknown} for 0
     */
    public static String versionString(int version) {
        return version <= 0 ? "unknown" : (version / 1000) + "." + (version % 1000) / 10;
    }

    private static Optional<CudaDriver> open(String library) {
        try {
            return Optional.of(new CudaDriver(SymbolLookup.libraryLookup(library, Arena.global())));
        } catch (IllegalArgumentException e) {
            return Optional.empty();   // dlopen failed
        }
    }

    /**
     * The driver, opened, for calls that need it once the probe succeeded.
     *
     * @return the driver
     * @throws IllegalStateException if {@value #LIBRARY} cannot be opened
     */
    static CudaDriver open() {
        CudaDriver d = opened;
        if (d == null) {
            d = open(LIBRARY).orElseThrow(() -> new IllegalStateException(LIBRARY + " cannot be opened"));
            opened = d;
        }
        return d;
    }

    private DeviceProperties device(Arena arena, int ordinal) {
        MemorySegment dev = arena.allocate(JAVA_INT);
        if (call2(cuDeviceGet, dev, ordinal) != CUDA_SUCCESS) {
            return new DeviceProperties(ordinal, "unknown", 0, "", 0, 0);
        }
        int handle = dev.get(JAVA_INT, 0);
        String name = "unknown";
        if (cuDeviceGetName != null) {
            MemorySegment buf = arena.allocate(256);
            if (callNamed(cuDeviceGetName, buf, 256, handle) == CUDA_SUCCESS) {
                name = buf.getString(0);
            }
        }
        long total = 0;
        if (cuDeviceTotalMem != null) {
            MemorySegment t = arena.allocate(JAVA_LONG);
            if (call2(cuDeviceTotalMem, t, handle) == CUDA_SUCCESS) {
                total = t.get(JAVA_LONG, 0);
            }
        }
        String bus = "";
        if (cuDeviceGetPciBusId != null) {
            MemorySegment buf = arena.allocate(64);
            if (callNamed(cuDeviceGetPciBusId, buf, 64, handle) == CUDA_SUCCESS) {
                bus = buf.getString(0).toLowerCase(Locale.ROOT);
            }
        }
        int major = attribute(arena, 75, handle);   // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
        int minor = attribute(arena, 76, handle);   // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
        return new DeviceProperties(ordinal, name, total, bus, major, minor);
    }

    private int attribute(Arena arena, int attribute, int device) {
        if (cuDeviceGetAttribute == null) {
            return 0;
        }
        MemorySegment v = arena.allocate(JAVA_INT);
        try {
            int rc = (int) cuDeviceGetAttribute.invokeExact(v, attribute, device);
            return rc == CUDA_SUCCESS ? v.get(JAVA_INT, 0) : 0;
        } catch (Throwable t) {
            throw io.datamem.internal.Libc.rethrow(t);
        }
    }

    /**
     * The {@code CUdevice} of an ordinal.
     *
     * @param ordinal the device ordinal
     * @return the handle, or 0 if the driver does not answer
     */
    long deviceHandle(int ordinal) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment dev = arena.allocate(JAVA_INT);
            return call2(cuDeviceGet, dev, ordinal) == CUDA_SUCCESS ? dev.get(JAVA_INT, 0) : 0;
        }
    }

    /**
     * Whether this JVM bound the driver's functions ({@link DriverCalls}): never on a machine
     * without a working driver, which tests check.
     *
     * @return true once bound
     */
    public static boolean bindingsInitialised() {
        return bindingsInitialised;
    }

    private String errorName(int code) {
        if (cuGetErrorName == null) {
            return "CUresult " + code;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            int rc = (int) cuGetErrorName.invokeExact(code, out);
            MemorySegment s = out.get(ADDRESS, 0);
            return rc == CUDA_SUCCESS && s.address() != 0 ? s.reinterpret(128).getString(0) : "CUresult " + code;
        } catch (Throwable t) {
            throw io.datamem.internal.Libc.rethrow(t);
        }
    }

    private int callInt(MethodHandle h, int arg) {
        try {
            return (int) h.invokeExact(arg);
        } catch (Throwable t) {
            throw io.datamem.internal.Libc.rethrow(t);
        }
    }

    private int call(MethodHandle h, MemorySegment arg) {
        try {
            return (int) h.invokeExact(arg);
        } catch (Throwable t) {
            throw io.datamem.internal.Libc.rethrow(t);
        }
    }

    private int call2(MethodHandle h, MemorySegment arg, int i) {
        try {
            return (int) h.invokeExact(arg, i);
        } catch (Throwable t) {
            throw io.datamem.internal.Libc.rethrow(t);
        }
    }

    private int callNamed(MethodHandle h, MemorySegment buf, int length, int device) {
        try {
            return (int) h.invokeExact(buf, length, device);
        } catch (Throwable t) {
            throw io.datamem.internal.Libc.rethrow(t);
        }
    }
}
