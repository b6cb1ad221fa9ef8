package io.datamem;

/**
 * Device types, with the numeric codes of DLPack's {@code DLDeviceType} enum.
 *
 * <p>The codes are the ones {@code __dlpack_device__} returns and {@code DLDevice.device_type}
 * holds; they are stable across DLPack versions.
 */
public enum DeviceType {
    /** {@code kDLCPU}: host memory. */
    CPU(1),
    /** {@code kDLCUDA}: CUDA device memory. */
    CUDA(2),
    /** {@code kDLCUDAHost}: CUDA pinned host memory. */
    CUDA_HOST(3),
    /** {@code kDLOpenCL}: OpenCL buffers. */
    OPENCL(4),
    /** {@code kDLVulkan}: Vulkan buffers. */
    VULKAN(7),
    /** {@code kDLMetal}: Metal buffers. */
    METAL(8),
    /** {@code kDLVPI}: Verilog simulator buffers. */
    VPI(9),
    /** {@code kDLROCM}: ROCm device memory. */
    ROCM(10),
    /** {@code kDLROCMHost}: ROCm pinned host memory. */
    ROCM_HOST(11),
    /** {@code kDLExtDev}: reserved for extension devices. */
    EXT_DEV(12),
    /** {@code kDLCUDAManaged}: CUDA managed (unified) memory. */
    CUDA_MANAGED(13),
    /** {@code kDLOneAPI}: SYCL USM memory (device, host or shared) of a oneAPI/SYCL device. */
    ONE_API(14),
    /** {@code kDLWebGPU}: WebGPU buffers. */
    WEBGPU(15),
    /** {@code kDLHexagon}: Qualcomm Hexagon DSP memory. */
    HEXAGON(16),
    /** {@code kDLMAIA}: Microsoft MAIA device memory (DLPack 1.0). */
    MAIA(17),
    /** {@code kDLTrn}: AWS Trainium device memory (DLPack 1.2). */
    TRN(18);

    private final int code;

    DeviceType(int code) {
        this.code = code;
    }

    /**
     * The DLPack {@code DLDeviceType} value.
     *
     * @return the code, for example 1 for {@link #CPU}
     */
    public int code() {
        return code;
    }

    /**
     * The device type with a DLPack code.
     *
     * @param code a {@code DLDeviceType} value
     * @return the matching device type
     * @throws IllegalArgumentException if no device type has that code
     */
    public static DeviceType ofCode(int code) {
        for (DeviceType t : values()) {
            if (t.code == code) {
                return t;
            }
        }
        throw new IllegalArgumentException("DLPack device type: " + code + " (expected: one of "
                + java.util.Arrays.stream(values()).map(t -> t.code + "=" + t.name())
                        .collect(java.util.stream.Collectors.joining(", ")) + ")");
    }
}
