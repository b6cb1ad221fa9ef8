package io.datamem.buffer;

import io.datamem.Device;
import io.datamem.DeviceType;
import io.datamem.MemoryKind;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.util.Objects;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Reading and writing the 48-byte head that every native {@code device_info} struct datamem
 * writes begins with ({@code datamem_device_info_v1}, see {@link StandardDeviceInfo}): version,
 * byte size, device type and id, memory kind, then the stream, context and device handles.
 * A backend with a struct of its own (as {@code io.datamem.sycl.SyclDeviceInfo}) writes this head
 * and appends its fields after it, so that a consumer that knows only version 1 reads the head of
 * any backend's struct.
 */
public final class DeviceInfoHead {

    private DeviceInfoHead() {
    }

    /**
     * Checks a native struct and gives a view of it at least {@code layout}'s size long.
     *
     * @param info   the struct; its size is not trusted, the fields are read from its address
     * @param layout the layout expected, whose name messages use
     * @return a segment of the struct, at least {@code layout.byteSize()} bytes
     * @throws NullPointerException     if {@code info} is null
     * @throws IllegalArgumentException if {@code info} is NULL, its version is below 1 or its
     *                                  {@code byte_size} below the layout's size
     */
    public static MemorySegment checkedView(MemorySegment info, StructLayout layout) {
        Objects.requireNonNull(info, "info");
        String struct = layout.name().orElse("device_info");
        if (info.address() == 0) {
            throw new IllegalArgumentException("info: NULL (expected: a " + struct + " struct)");
        }
        MemorySegment s = info.byteSize() >= layout.byteSize() ? info : info.reinterpret(layout.byteSize());
        int version = s.get(JAVA_INT, 0);
        int byteSize = s.get(JAVA_INT, 4);
        if (version < 1 || byteSize < layout.byteSize()) {
            throw new IllegalArgumentException("device_info version " + Integer.toUnsignedString(version)
                    + ", byte_size " + Integer.toUnsignedString(byteSize) + " (expected: version >= 1 and byte_size >= "
                    + layout.byteSize() + ")");
        }
        return s;
    }

    /**
     * Writes the common head.
     *
     * @param s            the struct, at least 48 bytes
     * @param version      the struct's version
     * @param byteSize     the struct's size
     * @param device       the device
     * @param kind         the memory kind
     * @param stream       the stream or queue handle, or 0
     * @param context      the context handle, or 0
     * @param deviceHandle the device handle, or 0
     * @throws NullPointerException      if {@code s}, {@code device} or {@code kind} is null
     * @throws IndexOutOfBoundsException if {@code s} is shorter than 48 bytes
     */
    public static void writeHead(MemorySegment s, int version, long byteSize, Device device, MemoryKind kind,
                                 long stream, long context, long deviceHandle) {
        s.set(JAVA_INT, 0, version);
        s.set(JAVA_INT, 4, (int) byteSize);
        s.set(JAVA_INT, 8, device.type().code());
        s.set(JAVA_INT, 12, device.id());
        s.set(JAVA_INT, 16, StandardDeviceInfo.kindCode(kind));
        s.set(JAVA_INT, 20, 0);
        s.set(JAVA_LONG, 24, stream);
        s.set(JAVA_LONG, 32, context);
        s.set(JAVA_LONG, 40, deviceHandle);
    }

    /**
     * The device a checked struct names.
     *
     * @param s the struct
     * @return its {@code device_type} and {@code device_id}
     * @throws IllegalArgumentException  if the device type is unknown
     * @throws IndexOutOfBoundsException if {@code s} is shorter than 48 bytes
     */
    public static Device device(MemorySegment s) {
        return new Device(DeviceType.ofCode(s.get(JAVA_INT, 8)), s.get(JAVA_INT, 12));
    }

    /**
     * The {@code memory_kind} code of a checked struct.
     *
     * @param s the struct
     * @return the code
     * @throws IndexOutOfBoundsException if {@code s} is shorter than 48 bytes
     */
    public static int memoryKindCode(MemorySegment s) {
        return s.get(JAVA_INT, 16);
    }

    /**
     * The {@code stream}, {@code context} and {@code device_handle} of a checked struct.
     *
     * @param s     the struct
     * @param index 0 stream, 1 context, 2 device handle
     * @return the handle
     * @throws IndexOutOfBoundsException if {@code index} is not 0, 1 or 2, or {@code s} is shorter
     *                                   than 48 bytes
     */
    public static long handle(MemorySegment s, int index) {
        Objects.checkIndex(index, 3);
        return s.get(JAVA_LONG, 24 + 8L * index);
    }
}
