package io.datamem.usm;

import io.datamem.MemoryKind;

/**
 * The allocation type of a SYCL USM pointer, as SYCL's {@code sycl::usm::alloc},
 * {@code sycl::get_pointer_type} and dpctl name it: the one enum of USM kinds, used by the USM
 * array interface, DLPack and the SYCL backend ({@code allocator-sycl}, whose OpenCL
 * {@code CL_MEM_TYPE_*_INTEL} codes map onto it).
 */
public enum UsmKind {
    /**
     * {@code "host"}: host memory the device can reach (SYCL {@code malloc_host}); the host may
     * dereference it. Datamem kind {@link MemoryKind#HOST_PINNED}.
     */
    HOST("host", MemoryKind.HOST_PINNED),
    /**
     * {@code "device"}: device memory (SYCL {@code malloc_device}); the host must not dereference
     * it. Datamem kind {@link MemoryKind#DEVICE}.
     */
    DEVICE("device", MemoryKind.DEVICE),
    /**
     * {@code "shared"}: memory migrating between host and device (SYCL {@code malloc_shared}); the
     * host may dereference it. Datamem kind {@link MemoryKind#MANAGED}.
     */
    SHARED("shared", MemoryKind.MANAGED),
    /** {@code "unknown"}: not a USM pointer of the context (a foreign or freed pointer). */
    UNKNOWN("unknown", null);

    private final String dpctlName;
    private final MemoryKind memoryKind;

    UsmKind(String dpctlName, MemoryKind memoryKind) {
        this.dpctlName = dpctlName;
        this.memoryKind = memoryKind;
    }

    /**
     * The name dpctl uses ({@code usm_type}), also the kind in handler names such as
     * {@code sycl:shared}.
     *
     * @return {@code "host"}, {@code "device"}, {@code "shared"} or {@code "unknown"}
     */
    public String dpctlName() {
        return dpctlName;
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
     * The datamem memory kind of this USM kind (the inverse of {@link #of(MemoryKind)}).
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
     * The USM kind datamem's memory kinds stand for on a SYCL device: host-pinned is USM host,
     * device is USM device, managed is USM shared.
     *
     * @param kind a memory kind
     * @return the USM kind; {@link #UNKNOWN} for ordinary host memory
     * @throws NullPointerException if {@code kind} is null
     */
    public static UsmKind of(MemoryKind kind) {
        return switch (kind) {
            case HOST_PINNED -> HOST;
            case DEVICE -> DEVICE;
            case MANAGED -> SHARED;
            case HOST -> UNKNOWN;
        };
    }

    /**
     * The allocatable kind with a dpctl name, as in handler names ({@code sycl:device}).
     *
     * @param dpctlName {@code host}, {@code shared} or {@code device}
     * @return the kind
     * @throws NullPointerException     if {@code dpctlName} is null
     * @throws IllegalArgumentException if the name is not one of the three ({@code unknown}
     *                                  included: it is not a kind one allocates)
     */
    public static UsmKind ofDpctlName(String dpctlName) {
        return switch (dpctlName) {
            case "host" -> HOST;
            case "shared" -> SHARED;
            case "device" -> DEVICE;
            default -> throw new IllegalArgumentException("USM kind: '" + dpctlName
                    + "' (expected: host, shared or device)");
        };
    }
}
