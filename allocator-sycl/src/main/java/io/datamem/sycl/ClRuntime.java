package io.datamem.sycl;

import io.datamem.spi.Availability;
import io.datamem.sycl.internal.ClError;
import io.datamem.sycl.internal.OpenCl;
import io.datamem.sycl.internal.SignalHandlers;
import io.datamem.sycl.internal.UsmFunctions;
import io.datamem.usm.UsmKind;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * The OpenCL platforms and devices of the process, enumerated once, with each platform's USM
 * functions and, for each device without usable USM, the reason.
 */
final class ClRuntime {

    private static final Object LOCK = new Object();
    private static volatile ClRuntime instance;

    private final String failure;
    private final List<SyclDevice> devices;
    private final Map<Long, SyclDevice> byHandle;
    private final Map<Long, UsmFunctions> functionsByPlatform;
    private final Map<Integer, String> noUsmReason;

    private ClRuntime(String failure, List<SyclDevice> devices, Map<Long, UsmFunctions> functionsByPlatform,
                      Map<Integer, String> noUsmReason) {
        this.failure = failure;
        this.devices = List.copyOf(devices);
        this.functionsByPlatform = Map.copyOf(functionsByPlatform);
        this.noUsmReason = Map.copyOf(noUsmReason);
        Map<Long, SyclDevice> m = new HashMap<>();
        for (SyclDevice d : devices) {
            m.put(d.handle().address(), d);
        }
        this.byHandle = Map.copyOf(m);
    }

    /**
     * The runtime, enumerated on first use.
     *
     * @return the runtime (check {@link #failure()})
     */
    static ClRuntime get() {
        ClRuntime r = instance;
        if (r == null) {
            synchronized (LOCK) {
                r = instance;
                if (r == null) {
                    r = SignalHandlers.preserving(ClRuntime::enumerate);   // PoCL's LLVM takes the JVM's
                    instance = r;
                }
            }
        }
        return r;
    }

    /**
     * Why no OpenCL device can be used at all, or null.
     *
     * @return the reason (no loader, no platform, no device), or null when devices were found
     */
    String failure() {
        return failure;
    }

    /**
     * Every OpenCL device, in enumeration order.
     *
     * @return the devices (empty on failure)
     */
    List<SyclDevice> devices() {
        return devices;
    }

    /**
     * The device with a handle.
     *
     * @param handle a {@code cl_device_id}
     * @return the device, if it is one of the enumerated (root) devices
     */
    Optional<SyclDevice> device(long handle) {
        return Optional.ofNullable(byHandle.get(handle));
    }

    /**
     * The USM functions of a device's platform.
     *
     * @param device a device with {@link SyclDevice#usm()}
     * @return the functions
     * @throws IllegalStateException if the device has no usable USM
     */
    UsmFunctions functions(SyclDevice device) {
        UsmFunctions f = device.usm() ? functionsByPlatform.get(device.platformHandle().address()) : null;
        if (f == null) {
            throw new IllegalStateException(noUsm(device));
        }
        return f;
    }

    /**
     * Why a device cannot allocate USM memory.
     *
     * @param device a device
     * @return the reason
     */
    String noUsm(SyclDevice device) {
        return "device " + device + " cannot allocate USM memory: "
                + noUsmReason.getOrDefault(device.ordinal(), OpenCl.USM_EXTENSION + " is not usable");
    }

    /**
     * Whether a selector picks a device that can allocate a kind, and if not, why.
     *
     * @param selector the selector
     * @param kind     host, shared or device
     * @return the availability
     */
    Availability availability(SyclSelector selector, UsmKind kind) {
        if (failure != null) {
            return Availability.unavailable(failure);
        }
        Optional<SyclDevice> selected = selector.select(devices);
        if (selected.isEmpty()) {
            return Availability.unavailable("no OpenCL device matches the filter selector '" + selector
                    + "' (devices: " + describeDevices() + ")");
        }
        SyclDevice d = selected.get();
        if (!d.usm()) {
            return Availability.unavailable((selector.isDefault() ? "no OpenCL device has " + OpenCl.USM_EXTENSION
                    + "; the default device " : "the device selected by '" + selector + "', ") + noUsm(d)
                    + " (devices: " + describeDevices() + "); " + WHAT_TO_INSTALL);
        }
        if (kind != UsmKind.UNKNOWN && d.capabilities(kind) == 0) {
            return Availability.unavailable("device " + d + " cannot allocate USM " + kind.dpctlName() + " memory ("
                    + capabilityQuery(kind) + " is 0)");
        }
        return Availability.AVAILABLE;
    }

    /**
     * The OpenCL query that tells whether a device can allocate a kind.
     *
     * @param kind host, shared or device
     * @return the {@code CL_DEVICE_*_MEM_CAPABILITIES_INTEL} name
     */
    static String capabilityQuery(UsmKind kind) {
        return switch (kind) {
            case HOST -> "CL_DEVICE_HOST_MEM_CAPABILITIES_INTEL";
            case SHARED -> "CL_DEVICE_SINGLE_DEVICE_SHARED_MEM_CAPABILITIES_INTEL";
            case DEVICE, UNKNOWN -> "CL_DEVICE_DEVICE_MEM_CAPABILITIES_INTEL";
        };
    }

    /**
     * The devices in one line.
     *
     * @return for example {@code opencl:cpu:0 'cpu-haswell' (Portable Computing Language, OpenCL 3.0, USM)}
     */
    String describeDevices() {
        return devices.isEmpty() ? "none" : devices.stream().map(SyclDevice::toString)
                .collect(Collectors.joining("; "));
    }

    // ---------------------------------------------------------------------------------------------

    private static ClRuntime failed(String reason) {
        return new ClRuntime(reason, List.of(), Map.of(), Map.of());
    }

    /**
     * What a user installs to get a device that serves USM: the sentence every unavailability for
     * want of one ends with.
     */
    static final String WHAT_TO_INSTALL = "install an OpenCL driver (ICD) with " + OpenCl.USM_EXTENSION
            + ", for example PoCL 6 or newer (CPU devices) or Intel's compute runtime (GPUs) or Intel's CPU"
            + " runtime, and register its .icd file in /etc/OpenCL/vendors or in the directory OCL_ICD_VENDORS"
            + " names";

    private static String whereDriversAre() {
        String vendors = System.getenv("OCL_ICD_VENDORS");
        return (vendors == null ? "OCL_ICD_VENDORS is unset, so the loader read /etc/OpenCL/vendors"
                : "OCL_ICD_VENDORS=" + vendors) + "; " + WHAT_TO_INSTALL;
    }

    private static ClRuntime enumerate() {
        String failure = OpenCl.loadFailure();
        if (failure != null) {
            return failed(failure);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment count = arena.allocate(JAVA_INT);
            int status = OpenCl.getPlatformIds(0, MemorySegment.NULL, count);
            if (status == ClError.PLATFORM_NOT_FOUND_KHR || (status == ClError.SUCCESS && count.get(JAVA_INT, 0) == 0)) {
                return failed("no OpenCL platform: the ICD loader " + OpenCl.LIBRARY + " found no driver ("
                        + whereDriversAre() + ")");
            }
            if (status != ClError.SUCCESS) {
                return failed("clGetPlatformIDs failed with " + ClError.name(status) + " (" + status + ")");
            }
            int n = count.get(JAVA_INT, 0);
            MemorySegment ids = arena.allocate(ADDRESS, n);
            status = OpenCl.getPlatformIds(n, ids, MemorySegment.NULL);
            if (status != ClError.SUCCESS) {
                return failed("clGetPlatformIDs failed with " + ClError.name(status) + " (" + status + ")");
            }
            List<SyclDevice> devices = new ArrayList<>();
            Map<Long, UsmFunctions> functions = new HashMap<>();
            Map<Integer, String> noUsm = new HashMap<>();
            Map<SyclDevice.Type, Integer> typeCounts = new EnumMap<>(SyclDevice.Type.class);
            for (int p = 0; p < n; p++) {
                MemorySegment platform = ids.getAtIndex(ADDRESS, p);
                String platformName = OpenCl.platformString(platform, OpenCl.PLATFORM_NAME);
                List<String> missing = new ArrayList<>();
                UsmFunctions usm = UsmFunctions.lookup(platform, platformName, missing);
                if (usm != null) {
                    functions.put(platform.address(), usm);
                }
                MemorySegment deviceCount = arena.allocate(JAVA_INT);
                status = OpenCl.getDeviceIds(platform, OpenCl.DEVICE_TYPE_ALL, 0, MemorySegment.NULL, deviceCount);
                if (status != ClError.SUCCESS || deviceCount.get(JAVA_INT, 0) == 0) {
                    continue; // CL_DEVICE_NOT_FOUND: a platform without devices
                }
                int m = deviceCount.get(JAVA_INT, 0);
                MemorySegment deviceIds = arena.allocate(ADDRESS, m);
                if (OpenCl.getDeviceIds(platform, OpenCl.DEVICE_TYPE_ALL, m, deviceIds, MemorySegment.NULL)
                        != ClError.SUCCESS) {
                    continue;
                }
                for (int i = 0; i < m; i++) {
                    MemorySegment id = deviceIds.getAtIndex(ADDRESS, i);
                    long typeBits = OpenCl.deviceLong(id, OpenCl.DEVICE_TYPE);
                    SyclDevice.Type type = typeBits < 0 ? SyclDevice.Type.CUSTOM
                            : (typeBits & OpenCl.DEVICE_TYPE_GPU) != 0 ? SyclDevice.Type.GPU
                            : (typeBits & OpenCl.DEVICE_TYPE_ACCELERATOR) != 0 ? SyclDevice.Type.ACCELERATOR
                            : (typeBits & OpenCl.DEVICE_TYPE_CPU) != 0 ? SyclDevice.Type.CPU : SyclDevice.Type.CUSTOM;
                    int typeOrdinal = typeCounts.merge(type, 1, Integer::sum) - 1;
                    String extensions = OpenCl.deviceString(id, OpenCl.DEVICE_EXTENSIONS);
                    boolean listed = Arrays.asList(extensions.split("\\s+")).contains(OpenCl.USM_EXTENSION);
                    boolean hasUsm = listed && usm != null;
                    int ordinal = devices.size();
                    if (!listed) {
                        noUsm.put(ordinal, "it does not list " + OpenCl.USM_EXTENSION + " in CL_DEVICE_EXTENSIONS");
                    } else if (usm == null) {
                        noUsm.put(ordinal, "its platform '" + platformName + "' lists " + OpenCl.USM_EXTENSION
                                + " but clGetExtensionFunctionAddressForPlatform finds no " + String.join(", ", missing));
                    }
                    long alignBits = OpenCl.deviceInt(id, OpenCl.DEVICE_MEM_BASE_ADDR_ALIGN);
                    long alignment = Long.highestOneBit(Math.max(8, alignBits <= 0 ? 64 : alignBits / 8));
                    devices.add(new SyclDevice(ordinal, type, typeOrdinal,
                            OpenCl.deviceString(id, OpenCl.DEVICE_NAME),
                            OpenCl.deviceString(id, OpenCl.DEVICE_VENDOR),
                            OpenCl.deviceString(id, OpenCl.DEVICE_VERSION),
                            OpenCl.deviceString(id, OpenCl.DRIVER_VERSION),
                            platformName, hasUsm,
                            hasUsm ? capability(id, OpenCl.DEVICE_HOST_MEM_CAPABILITIES_INTEL) : 0,
                            hasUsm ? capability(id, OpenCl.DEVICE_DEVICE_MEM_CAPABILITIES_INTEL) : 0,
                            hasUsm ? capability(id, OpenCl.DEVICE_SINGLE_DEVICE_SHARED_MEM_CAPABILITIES_INTEL) : 0,
                            alignment, Math.max(0, OpenCl.deviceLong(id, OpenCl.DEVICE_MAX_MEM_ALLOC_SIZE)),
                            id, platform));
                }
            }
            if (devices.isEmpty()) {
                return failed("no OpenCL device: " + n + " platform(s) but none has a device (" + whereDriversAre()
                        + ")");
            }
            return new ClRuntime(null, devices, functions, noUsm);
        }
    }

    private static long capability(MemorySegment device, int query) {
        return Math.max(0, OpenCl.deviceLong(device, query));
    }
}
