package io.datamem.buffer;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.util.Objects;

import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * A {@code device_info} struct in native memory whose definition datamem does not know: what
 * {@link BufferView#fromNative} reports for device ids other than datamem's own.
 *
 * @param address the struct; by the draft's advice its first field is a {@code uint32_t} version
 */
public record NativeDeviceInfo(MemorySegment address) implements DeviceInfo {

    /**
     * Validates the component.
     *
     * @throws NullPointerException     if {@code address} is null
     * @throws IllegalArgumentException if {@code address} is NULL
     */
    public NativeDeviceInfo {
        Objects.requireNonNull(address, "address");
        if (address.address() == 0) {
            throw new IllegalArgumentException("address: NULL (expected: a device_info struct)");
        }
    }

    /**
     * The struct's first {@code uint32_t}, its version if the definition follows the draft's
     * advice.
     *
     * @return the first four bytes as an int
     */
    @Override
    public int version() {
        return address.reinterpret(4).get(JAVA_INT, 0);
    }

    /**
     * The struct itself: it is not copied.
     *
     * @param allocator unused
     * @return {@link #address()}
     */
    @Override
    public MemorySegment toNative(SegmentAllocator allocator) {
        return address;
    }
}
