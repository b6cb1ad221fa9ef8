package io.datamem.sycl;

import io.datamem.Device;
import io.datamem.DeviceType;
import io.datamem.MemoryKind;
import io.datamem.buffer.DeviceInfo;
import io.datamem.buffer.StandardDeviceInfo;
import io.datamem.buffer.DeviceInfoHead;
import io.datamem.sycl.internal.UsmFunctions;
import io.datamem.usm.UsmKind;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.StructLayout;
import java.util.Objects;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Version 1 of the {@code device_info} of buffers with device id {@value DeviceInfo#SYCL_DEVICE_ID}:
 * where a block of SYCL USM memory lives and the OpenCL handles of the context it belongs to, which
 * a consumer adopts as a SYCL program does ({@code sycl::make_context<sycl::backend::opencl>}). Its
 * first 48 bytes are datamem's common {@code datamem_device_info_v1} ({@link StandardDeviceInfo},
 * which {@link #toStandard()} gives), so a consumer that knows only that struct still reads the
 * device, the memory kind and the handles. Natively (x86-64, 64 bytes):
 *
 * <pre>{@code
 * typedef struct {
 *     uint32_t version;        //  0: 1
 *     uint32_t byte_size;      //  4: 64; later versions only append fields
 *     int32_t  device_type;    //  8: kDLOneAPI (14)
 *     int32_t  device_id;      // 12: the device ordinal (as in DLPack)
 *     uint32_t memory_kind;    // 16: 2 USM host, 3 USM device, 4 USM shared (datamem_device_info_v1's codes)
 *     uint32_t reserved;       // 20: 0
 *     uint64_t queue;          // 24: cl_command_queue (in order) datamem's operations on the block use
 *     uint64_t context;        // 32: cl_context the USM pointer belongs to
 *     uint64_t device_handle;  // 40: cl_device_id
 *     uint32_t usm_kind;       // 48: cl_unified_shared_memory_type_intel: CL_MEM_TYPE_HOST_INTEL (0x4197),
 *                              //     CL_MEM_TYPE_DEVICE_INTEL (0x4198), CL_MEM_TYPE_SHARED_INTEL (0x4199)
 *     uint32_t backend;        // 52: 1 = OpenCL (the handles are OpenCL's)
 *     uint64_t platform;       // 56: cl_platform_id
 * } datamem_sycl_device_info_v1;
 * }</pre>
 *
 * @param device         the device the memory is associated with: {@code (kDLOneAPI, ordinal)}
 * @param usmKind        the USM kind of the block, as {@code clGetMemAllocInfoINTEL} reports it
 * @param queueHandle    the {@code cl_command_queue}
 * @param contextHandle  the {@code cl_context}
 * @param deviceHandle   the {@code cl_device_id}
 * @param platformHandle the {@code cl_platform_id}
 */
public record SyclDeviceInfo(Device device, UsmKind usmKind, long queueHandle, long contextHandle, long deviceHandle,
                             long platformHandle) implements DeviceInfo {

    /** The version this record writes. */
    public static final int VERSION = 1;

    /** The native {@code backend} value for OpenCL handles. */
    public static final int BACKEND_OPENCL = 1;

    /** The native layout of version 1. */
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            JAVA_INT.withName("version"),
            JAVA_INT.withName("byte_size"),
            JAVA_INT.withName("device_type"),
            JAVA_INT.withName("device_id"),
            JAVA_INT.withName("memory_kind"),
            JAVA_INT.withName("reserved"),
            JAVA_LONG.withName("queue"),
            JAVA_LONG.withName("context"),
            JAVA_LONG.withName("device_handle"),
            JAVA_INT.withName("usm_kind"),
            JAVA_INT.withName("backend"),
            JAVA_LONG.withName("platform")).withName("datamem_sycl_device_info_v1");

    /**
     * Validates the components.
     *
     * @throws NullPointerException     if {@code device} or {@code usmKind} is null
     * @throws IllegalArgumentException if the device is not a {@code kDLOneAPI} device, the kind is
     *                                  {@link UsmKind#UNKNOWN}, or the context or device handle is 0
     */
    public SyclDeviceInfo {
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(usmKind, "usmKind");
        if (device.type() != DeviceType.ONE_API) {
            throw new IllegalArgumentException("device: " + device + " (expected: a kDLOneAPI device)");
        }
        if (usmKind == UsmKind.UNKNOWN) {
            throw new IllegalArgumentException("usmKind: UNKNOWN (expected: HOST, SHARED or DEVICE: the memory of"
                    + " a buffer is USM memory of its context)");
        }
        if (contextHandle == 0 || deviceHandle == 0) {
            throw new IllegalArgumentException("contextHandle: 0x" + Long.toHexString(contextHandle)
                    + ", deviceHandle: 0x" + Long.toHexString(deviceHandle) + " (expected: OpenCL handles, not NULL)");
        }
    }

    @Override
    public int version() {
        return VERSION;
    }

    /**
     * The SYCL backend the handles belong to.
     *
     * @return {@code "opencl"}
     */
    public String backend() {
        return "opencl";
    }

    /**
     * The datamem memory kind of the block.
     *
     * @return {@link MemoryKind#HOST_PINNED}, {@link MemoryKind#MANAGED} or {@link MemoryKind#DEVICE}
     */
    public MemoryKind memoryKind() {
        return usmKind.memoryKind();
    }

    /**
     * The common part, as a consumer of {@code datamem_device_info_v1} reads it.
     *
     * @return device, memory kind, queue (as the stream), context and device handles
     */
    public StandardDeviceInfo toStandard() {
        return new StandardDeviceInfo(device, memoryKind(), queueHandle, contextHandle, deviceHandle);
    }

    @Override
    public MemorySegment toNative(SegmentAllocator allocator) {
        MemorySegment s = allocator.allocate(LAYOUT);
        DeviceInfoHead.writeHead(s, VERSION, LAYOUT.byteSize(), device, memoryKind(), queueHandle, contextHandle,
                deviceHandle);
        s.set(JAVA_INT, 48, UsmFunctions.clMemType(usmKind));
        s.set(JAVA_INT, 52, BACKEND_OPENCL);
        s.set(JAVA_LONG, 56, platformHandle);
        return s;
    }

    /**
     * Reads a native {@code datamem_sycl_device_info_v1} (or a later version, whose first 64 bytes
     * are the same).
     *
     * @param info the struct; its size is not trusted, the fields are read from its address
     * @return the record
     * @throws NullPointerException     if {@code info} is null
     * @throws IllegalArgumentException if {@code info} is NULL, its version is below 1, its
     *                                  {@code byte_size} below 64, its device type not
     *                                  {@code kDLOneAPI}, its {@code usm_kind} not host, device or
     *                                  shared, {@code memory_kind} does not match it, its backend is
     *                                  not OpenCL, or a handle it needs is 0
     */
    public static SyclDeviceInfo fromNative(MemorySegment info) {
        MemorySegment s = DeviceInfoHead.checkedView(info, LAYOUT);
        int clMemType = s.get(JAVA_INT, 48);
        UsmKind kind = UsmFunctions.usmKind(clMemType);
        if (kind == UsmKind.UNKNOWN) {
            throw new IllegalArgumentException("device_info usm_kind: 0x" + Integer.toHexString(clMemType)
                    + " (expected: CL_MEM_TYPE_HOST_INTEL, CL_MEM_TYPE_DEVICE_INTEL or CL_MEM_TYPE_SHARED_INTEL)");
        }
        int memoryKind = DeviceInfoHead.memoryKindCode(s);
        if (memoryKind != StandardDeviceInfo.kindCode(kind.memoryKind())) {
            throw new IllegalArgumentException("device_info memory_kind: " + memoryKind + " (expected: "
                    + StandardDeviceInfo.kindCode(kind.memoryKind()) + " for USM " + kind.dpctlName() + " memory)");
        }
        int backend = s.get(JAVA_INT, 52);
        if (backend != BACKEND_OPENCL) {
            throw new IllegalArgumentException("device_info backend: " + backend + " (expected: " + BACKEND_OPENCL
                    + ", OpenCL)");
        }
        return new SyclDeviceInfo(DeviceInfoHead.device(s), kind, DeviceInfoHead.handle(s, 0),
                DeviceInfoHead.handle(s, 1), DeviceInfoHead.handle(s, 2), s.get(JAVA_LONG, 56));
    }

    @Override
    public String toString() {
        return "SyclDeviceInfo[v" + VERSION + ", " + device + ", USM " + usmKind.dpctlName() + ", opencl context 0x"
                + Long.toHexString(contextHandle) + ", device 0x" + Long.toHexString(deviceHandle) + ", queue 0x"
                + Long.toHexString(queueHandle) + ", platform 0x" + Long.toHexString(platformHandle) + "]";
    }
}
