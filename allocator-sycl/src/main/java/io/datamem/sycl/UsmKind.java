package io.datamem.sycl;

import io.datamem.MemoryKind;

import java.util.Locale;

/**
 * The kinds of SYCL unified shared memory, as SYCL's {@code sycl::usm::alloc}, dpctl's
 * {@code get_pointer_type} and the OpenCL extension {@code cl_intel_unified_shared_memory}
 * ({@code CL_MEM_TYPE_*_INTEL}) name them.
 */
public enum UsmKind {
    /** Host memory the device reaches (SYCL {@code malloc_host}); datamem kind {@link MemoryKind#HOST_PINNED}. */
    HOST(0x4197, MemoryKind.HOST_PINNED),
    /** Memory migrating between host and device (SYCL {@code malloc_shared}); {@link MemoryKind#MANAGED}. */
    SHARED(0x4199, MemoryKind.MANAGED),
    /** Device memory the host cannot dereference (SYCL {@code malloc_device}); {@link MemoryKind#DEVICE}. */
    DEVICE(0x4198, MemoryKind.DEVICE),
    /** Not USM memory of the context asked (a foreign or freed pointer). */
    UNKNOWN(0x4196, null);

    private final int clMemType;
    private final MemoryKind memoryKind;

    UsmKind(int clMemType, MemoryKind memoryKind) {
        this.clMemType = clMemType;
        this.memoryKind = memoryKind;
    }

    /**
     * The OpenCL value: {@code CL_MEM_TYPE_HOST_INTEL}, {@code CL_MEM_TYPE_SHARED_INTEL},
     * {@code CL_MEM_TYPE_DEVICE_INTEL} or {@code CL_MEM_TYPE_UNKNOWN_INTEL}.
     *
     * @return for example {@code 0x4197} for {@link #HOST}
     */
    public int clMemType() {
        return clMemType;
    }

    /**
     * The name SYCL and dpctl use ({@code "host"}, {@code "shared"}, {@code "device"},
     * {@code "unknown"}), also the kind in handler names such as {@code sycl:shared}.
     *
     * @return the lower-case name
     */
    public String usmType() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * Whether host code may dereference memory of this kind.
     *
     * @return true for {@link #HOST} and {@link #SHARED}
     */
    public boolean hostAccessible() {
        return this == HOST || this == SHARED;
    }

    /**
     * The datamem memory kind of this USM kind.
     *
     * @return {@link MemoryKind#HOST_PINNED}, {@link MemoryKind#MANAGED} or {@link MemoryKind#DEVICE}
     * @throws UnsupportedOperationException for {@link #UNKNOWN}, which is not memory of a kind
     */
    public MemoryKind memoryKind() {
        if (memoryKind == null) {
            throw new UnsupportedOperationException("USM kind unknown has no memory kind (the pointer is not USM"
                    + " memory of the context)");
        }
        return memoryKind;
    }

    /**
     * The kind with an OpenCL {@code CL_MEM_TYPE_*_INTEL} value.
     *
     * @param clMemType the value {@code clGetMemAllocInfoINTEL(CL_MEM_ALLOC_TYPE_INTEL)} returned
     * @return the kind; {@link #UNKNOWN} for any value the extension does not define
     */
    public static UsmKind ofClMemType(int clMemType) {
        for (UsmKind k : values()) {
            if (k.clMemType == clMemType) {
                return k;
            }
        }
        return UNKNOWN;
    }

    /**
     * The allocatable kind with a SYCL name.
     *
     * @param usmType {@code host}, {@code shared} or {@code device}
     * @return the kind
     * @throws NullPointerException     if {@code usmType} is null
     * @throws IllegalArgumentException if the name is not one of the three
     */
    public static UsmKind ofUsmType(String usmType) {
        return switch (usmType) {
            case "host" -> HOST;
            case "shared" -> SHARED;
            case "device" -> DEVICE;
            default -> throw new IllegalArgumentException("USM kind: '" + usmType
                    + "' (expected: host, shared or device)");
        };
    }
}
