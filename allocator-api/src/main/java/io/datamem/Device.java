package io.datamem;

import java.util.Objects;

/**
 * A device, as DLPack names it: a device type and an ordinal. {@code __dlpack_device__} is this
 * pair.
 *
 * @param type the device type
 * @param id   the device ordinal, 0 for the host
 */
public record Device(DeviceType type, int id) {

    /** The host CPU, {@code (kDLCPU, 0)}. */
    public static final Device CPU = new Device(DeviceType.CPU, 0);

    /**
     * Validates the components.
     *
     * @throws NullPointerException     if {@code type} is null
     * @throws IllegalArgumentException if {@code id} is negative
     */
    public Device {
        Objects.requireNonNull(type, "type");
        if (id < 0) {
            throw new IllegalArgumentException("id: " + id + " (expected: >= 0)");
        }
    }

    @Override
    public String toString() {
        return type.name().toLowerCase(java.util.Locale.ROOT) + ":" + id;
    }
}
