package io.datamem.usm;

import io.datamem.MemoryKind;

/**
 * The allocation type of a SYCL USM pointer, as {@code sycl::get_pointer_type} and dpctl name it.
 */
public enum UsmKind {
    /** {@code "host"}: host memory the device can reach; the host may dereference it. */
    HOST("host"),
    /** {@code "device"}: device memory; the host must not dereference it. */
    DEVICE("device"),
    /** {@code "shared"}: memory migrating between host and device; the host may dereference it. */
    SHARED("shared"),
    /** {@code "unknown"}: not a USM pointer of the context. */
    UNKNOWN("unknown");

    private final String dpctlName;

    UsmKind(String dpctlName) {
        this.dpctlName = dpctlName;
    }

    /**
     * The name dpctl uses ({@code usm_type}).
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
     * The USM kind datamem's memory kinds stand for on a SYCL device: host-pinned is USM host,
     * device is USM device, managed is USM shared.
     *
     * @param kind a memory kind
     * @return the USM kind; {@link #UNKNOWN} for ordinary host memory
     */
    public static UsmKind of(MemoryKind kind) {
        return switch (kind) {
            case HOST_PINNED -> HOST;
            case DEVICE -> DEVICE;
            case MANAGED -> SHARED;
            case HOST -> UNKNOWN;
        };
    }
}
