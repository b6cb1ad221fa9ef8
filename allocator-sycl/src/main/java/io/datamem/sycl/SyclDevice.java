package io.datamem.sycl;

import io.datamem.Device;
import io.datamem.DeviceType;
import io.datamem.usm.UsmKind;

import java.lang.foreign.MemorySegment;
import java.util.Locale;
import java.util.Objects;

/**
 * An OpenCL device as datamem's SYCL backend sees it: where it sits in the enumeration, what it is,
 * and what unified shared memory it offers.
 *
 * <p>Devices are enumerated once per process: platforms in the order of {@code clGetPlatformIDs},
 * each platform's devices in the order of {@code clGetDeviceIDs(CL_DEVICE_TYPE_ALL)}. The
 * {@link #ordinal() ordinal} is the position in that list; it is the DLPack {@code device_id} of
 * {@code kDLOneAPI} memory on the device and what a bare number selects in a filter selector.
 *
 * @param ordinal              the position among all OpenCL devices of the process
 * @param type                 the device type
 * @param typeOrdinal          the position among OpenCL devices of the same type (the {@code N} of
 *                             {@code opencl:gpu:N})
 * @param name                 {@code CL_DEVICE_NAME}
 * @param vendor               {@code CL_DEVICE_VENDOR}
 * @param version              {@code CL_DEVICE_VERSION}
 * @param driverVersion        {@code CL_DRIVER_VERSION}
 * @param platformName         {@code CL_PLATFORM_NAME} of its platform
 * @param usm                  whether the device lists {@code cl_intel_unified_shared_memory} and its
 *                             platform provides every function of it datamem uses
 * @param hostCapabilities     {@code CL_DEVICE_HOST_MEM_CAPABILITIES_INTEL} (0 if none)
 * @param deviceCapabilities   {@code CL_DEVICE_DEVICE_MEM_CAPABILITIES_INTEL} (0 if none)
 * @param sharedCapabilities   {@code CL_DEVICE_SINGLE_DEVICE_SHARED_MEM_CAPABILITIES_INTEL} (0 if none)
 * @param baseAddressAlignment {@code CL_DEVICE_MEM_BASE_ADDR_ALIGN} in bytes: the alignment datamem
 *                             asks the runtime for directly; larger ones it provides by
 *                             over-allocating
 * @param maxAllocByteSize     {@code CL_DEVICE_MAX_MEM_ALLOC_SIZE}
 * @param handle               the {@code cl_device_id}
 * @param platformHandle       the {@code cl_platform_id}
 */
public record SyclDevice(int ordinal, Type type, int typeOrdinal, String name, String vendor, String version,
                         String driverVersion, String platformName, boolean usm, long hostCapabilities,
                         long deviceCapabilities, long sharedCapabilities, long baseAddressAlignment,
                         long maxAllocByteSize, MemorySegment handle, MemorySegment platformHandle) {

    /** OpenCL device types, as filter selectors name them. */
    public enum Type {
        /** {@code CL_DEVICE_TYPE_CPU}: {@code cpu}. */
        CPU,
        /** {@code CL_DEVICE_TYPE_GPU}: {@code gpu}. */
        GPU,
        /** {@code CL_DEVICE_TYPE_ACCELERATOR}: {@code accelerator}. */
        ACCELERATOR,
        /** {@code CL_DEVICE_TYPE_CUSTOM} or anything else: {@code custom} (no filter selects it by type). */
        CUSTOM;

        /**
         * The name in filter selectors.
         *
         * @return {@code cpu}, {@code gpu}, {@code accelerator} or {@code custom}
         */
        public String selectorName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * Validates the components.
     *
     * @throws NullPointerException     if an object component is null
     * @throws IllegalArgumentException if an ordinal is negative or the alignment is not a power of
     *                                  two
     */
    public SyclDevice {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(vendor, "vendor");
        Objects.requireNonNull(version, "version");
        Objects.requireNonNull(driverVersion, "driverVersion");
        Objects.requireNonNull(platformName, "platformName");
        Objects.requireNonNull(handle, "handle");
        Objects.requireNonNull(platformHandle, "platformHandle");
        if (ordinal < 0 || typeOrdinal < 0) {
            throw new IllegalArgumentException("ordinal: " + ordinal + ", typeOrdinal: " + typeOrdinal
                    + " (expected: >= 0)");
        }
        if (baseAddressAlignment <= 0 || Long.bitCount(baseAddressAlignment) != 1) {
            throw new IllegalArgumentException("baseAddressAlignment: " + baseAddressAlignment
                    + " (expected: a power of two)");
        }
    }

    /**
     * The fully specified filter selector string of the device.
     *
     * @return for example {@code opencl:gpu:0}
     */
    public String filterString() {
        return "opencl:" + type.selectorName() + ":" + typeOrdinal;
    }

    /**
     * The DLPack device of memory on this device: {@code (kDLOneAPI, ordinal)}.
     *
     * @return the device
     */
    public Device dlpackDevice() {
        return new Device(DeviceType.ONE_API, ordinal);
    }

    /**
     * The USM capability bit field of a kind ({@code CL_UNIFIED_SHARED_MEMORY_ACCESS_INTEL} and
     * friends).
     *
     * @param kind host, shared or device
     * @return the capabilities; 0 when the device cannot allocate that kind
     * @throws IllegalArgumentException for {@link UsmKind#UNKNOWN}
     */
    public long capabilities(UsmKind kind) {
        return switch (kind) {
            case HOST -> hostCapabilities;
            case SHARED -> sharedCapabilities;
            case DEVICE -> deviceCapabilities;
            case UNKNOWN -> throw new IllegalArgumentException("kind: UNKNOWN (expected: host, shared or device)");
        };
    }

    /**
     * Whether the device can allocate memory of a kind.
     *
     * @param kind host, shared or device
     * @return true when the device has the extension and a non-zero capability for the kind
     * @throws IllegalArgumentException for {@link UsmKind#UNKNOWN}
     */
    public boolean supports(UsmKind kind) {
        return usm && capabilities(kind) != 0;
    }

    @Override
    public String toString() {
        return filterString() + " '" + name + "' (" + platformName + ", " + version
                + (usm ? ", USM" : ", no USM") + ")";
    }
}
