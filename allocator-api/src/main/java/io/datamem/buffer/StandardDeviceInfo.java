package io.datamem.buffer;

import io.datamem.Device;
import io.datamem.MemoryKind;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.StructLayout;
import java.util.Objects;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Version 1 of the {@code device_info} datamem's device backends ({@value DeviceInfo#CUDA_DEVICE_ID},
 * {@value DeviceInfo#SYCL_DEVICE_ID}) attach to the buffers they export. The SYCL backend's record
 * ({@code io.datamem.sycl.SyclDeviceInfo}) extends it: its first 48 bytes are this struct, with the
 * OpenCL handles of the memory's context, followed by SYCL fields, so {@link #fromNative} reads
 * either. Natively (x86-64, 48 bytes):
 *
 * <pre>{@code
 * typedef struct {
 *     uint32_t version;        //  0: 1
 *     uint32_t byte_size;      //  4: sizeof the struct (48 here); later versions only append fields
 *     int32_t  device_type;    //  8: DLDeviceType (kDLCUDA = 2, kDLOneAPI = 14, ...)
 *     int32_t  device_id;      // 12: device ordinal
 *     uint32_t memory_kind;    // 16: 1 host, 2 host-pinned, 3 device, 4 managed/shared
 *     uint32_t reserved;       // 20: 0
 *     uint64_t stream;         // 24: cudaStream_t / cl_command_queue the data is ordered on; 0 = default
 *     uint64_t context;        // 32: CUcontext / cl_context, or 0
 *     uint64_t device_handle;  // 40: CUdevice / cl_device_id, or 0
 * } datamem_device_info_v1;
 * }</pre>
 *
 * @param device       the device the memory lives on (its DLPack type and ordinal)
 * @param kind         the memory kind
 * @param stream       the CUDA stream or OpenCL queue handle the data is ordered on, 0 for the default
 * @param context      the CUDA or OpenCL context handle, or 0
 * @param deviceHandle the backend's device handle, or 0
 */
public record StandardDeviceInfo(Device device, MemoryKind kind, long stream, long context, long deviceHandle)
        implements DeviceInfo {

    /** The version this record writes. */
    public static final int VERSION = 1;

    /** The native layout of version 1. */
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            JAVA_INT.withName("version"),
            JAVA_INT.withName("byte_size"),
            JAVA_INT.withName("device_type"),
            JAVA_INT.withName("device_id"),
            JAVA_INT.withName("memory_kind"),
            JAVA_INT.withName("reserved"),
            JAVA_LONG.withName("stream"),
            JAVA_LONG.withName("context"),
            JAVA_LONG.withName("device_handle")).withName("datamem_device_info_v1");

    /**
     * Validates the components.
     *
     * @throws NullPointerException if {@code device} or {@code kind} is null
     */
    public StandardDeviceInfo {
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(kind, "kind");
    }

    @Override
    public int version() {
        return VERSION;
    }

    @Override
    public MemorySegment toNative(SegmentAllocator allocator) {
        MemorySegment s = allocator.allocate(LAYOUT);
        DeviceInfoHead.writeHead(s, VERSION, LAYOUT.byteSize(), device, kind, stream, context, deviceHandle);
        return s;
    }

    /**
     * Reads a native {@code datamem_device_info_v1} (or a later version, whose first 48 bytes are
     * the same).
     *
     * @param info the struct; its size is not trusted, the fields are read from its address
     * @return the record
     * @throws NullPointerException     if {@code info} is null
     * @throws IllegalArgumentException if {@code info} is NULL, its version is below 1, its
     *                                  {@code byte_size} is below 48, or a device type or memory
     *                                  kind is unknown
     */
    public static StandardDeviceInfo fromNative(MemorySegment info) {
        MemorySegment s = DeviceInfoHead.checkedView(info, LAYOUT);
        return new StandardDeviceInfo(DeviceInfoHead.device(s), kindOf(DeviceInfoHead.memoryKindCode(s)),
                DeviceInfoHead.handle(s, 0), DeviceInfoHead.handle(s, 1), DeviceInfoHead.handle(s, 2));
    }

    /**
     * The native {@code memory_kind} code of a kind.
     *
     * @param kind the kind
     * @return 1 host, 2 host-pinned, 3 device, 4 managed
     */
    public static int kindCode(MemoryKind kind) {
        return switch (kind) {
            case HOST -> 1;
            case HOST_PINNED -> 2;
            case DEVICE -> 3;
            case MANAGED -> 4;
        };
    }

    private static MemoryKind kindOf(int code) {
        return switch (code) {
            case 1 -> MemoryKind.HOST;
            case 2 -> MemoryKind.HOST_PINNED;
            case 3 -> MemoryKind.DEVICE;
            case 4 -> MemoryKind.MANAGED;
            default -> throw new IllegalArgumentException("device_info memory_kind: " + code
                    + " (expected: 1 host, 2 host-pinned, 3 device or 4 managed)");
        };
    }
}
