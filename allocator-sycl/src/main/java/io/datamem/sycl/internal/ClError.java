package io.datamem.sycl.internal;

import io.datamem.BackendException;

/**
 * The symbolic names of OpenCL error codes: every {@code cl_int} error of the core specification
 * (OpenCL 3.0) and of the Khronos, Intel, ARM and EXT extension headers.
 */
public final class ClError {

    /** {@code CL_SUCCESS}. */
    public static final int SUCCESS = 0;
    /** {@code CL_DEVICE_NOT_FOUND}. */
    public static final int DEVICE_NOT_FOUND = -1;
    /** {@code CL_MEM_OBJECT_ALLOCATION_FAILURE}. */
    public static final int MEM_OBJECT_ALLOCATION_FAILURE = -4;
    /** {@code CL_OUT_OF_RESOURCES}. */
    public static final int OUT_OF_RESOURCES = -5;
    /** {@code CL_OUT_OF_HOST_MEMORY}. */
    public static final int OUT_OF_HOST_MEMORY = -6;
    /** {@code CL_INVALID_VALUE}. */
    public static final int INVALID_VALUE = -30;
    /** {@code CL_INVALID_BUFFER_SIZE}. */
    public static final int INVALID_BUFFER_SIZE = -61;
    /** {@code CL_PLATFORM_NOT_FOUND_KHR}. */
    public static final int PLATFORM_NOT_FOUND_KHR = -1001;

    private ClError() {
    }

    /**
     * The name of an OpenCL error code.
     *
     * @param code a {@code cl_int} status
     * @return for example {@code CL_OUT_OF_RESOURCES} for -5, or {@code CL_UNKNOWN_ERROR_CODE} for a
     *         code no header defines
     */
    public static String name(int code) {
        return switch (code) {
            case 0 -> "CL_SUCCESS";
            case -1 -> "CL_DEVICE_NOT_FOUND";
            case -2 -> "CL_DEVICE_NOT_AVAILABLE";
            case -3 -> "CL_COMPILER_NOT_AVAILABLE";
            case -4 -> "CL_MEM_OBJECT_ALLOCATION_FAILURE";
            case -5 -> "CL_OUT_OF_RESOURCES";
            case -6 -> "CL_OUT_OF_HOST_MEMORY";
            case -7 -> "CL_PROFILING_INFO_NOT_AVAILABLE";
            case -8 -> "CL_MEM_COPY_OVERLAP";
            case -9 -> "CL_IMAGE_FORMAT_MISMATCH";
            case -10 -> "CL_IMAGE_FORMAT_NOT_SUPPORTED";
            case -11 -> "CL_BUILD_PROGRAM_FAILURE";
            case -12 -> "CL_MAP_FAILURE";
            case -13 -> "CL_MISALIGNED_SUB_BUFFER_OFFSET";
            case -14 -> "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST";
            case -15 -> "CL_COMPILE_PROGRAM_FAILURE";
            case -16 -> "CL_LINKER_NOT_AVAILABLE";
            case -17 -> "CL_LINK_PROGRAM_FAILURE";
            case -18 -> "CL_DEVICE_PARTITION_FAILED";
            case -19 -> "CL_KERNEL_ARG_INFO_NOT_AVAILABLE";
            case -30 -> "CL_INVALID_VALUE";
            case -31 -> "CL_INVALID_DEVICE_TYPE";
            case -32 -> "CL_INVALID_PLATFORM";
            case -33 -> "CL_INVALID_DEVICE";
            case -34 -> "CL_INVALID_CONTEXT";
            case -35 -> "CL_INVALID_QUEUE_PROPERTIES";
            case -36 -> "CL_INVALID_COMMAND_QUEUE";
            case -37 -> "CL_INVALID_HOST_PTR";
            case -38 -> "CL_INVALID_MEM_OBJECT";
            case -39 -> "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR";
            case -40 -> "CL_INVALID_IMAGE_SIZE";
            case -41 -> "CL_INVALID_SAMPLER";
            case -42 -> "CL_INVALID_BINARY";
            case -43 -> "CL_INVALID_BUILD_OPTIONS";
            case -44 -> "CL_INVALID_PROGRAM";
            case -45 -> "CL_INVALID_PROGRAM_EXECUTABLE";
            case -46 -> "CL_INVALID_KERNEL_NAME";
            case -47 -> "CL_INVALID_KERNEL_DEFINITION";
            case -48 -> "CL_INVALID_KERNEL";
            case -49 -> "CL_INVALID_ARG_INDEX";
            case -50 -> "CL_INVALID_ARG_VALUE";
            case -51 -> "CL_INVALID_ARG_SIZE";
            case -52 -> "CL_INVALID_KERNEL_ARGS";
            case -53 -> "CL_INVALID_WORK_DIMENSION";
            case -54 -> "CL_INVALID_WORK_GROUP_SIZE";
            case -55 -> "CL_INVALID_WORK_ITEM_SIZE";
            case -56 -> "CL_INVALID_GLOBAL_OFFSET";
            case -57 -> "CL_INVALID_EVENT_WAIT_LIST";
            case -58 -> "CL_INVALID_EVENT";
            case -59 -> "CL_INVALID_OPERATION";
            case -60 -> "CL_INVALID_GL_OBJECT";
            case -61 -> "CL_INVALID_BUFFER_SIZE";
            case -62 -> "CL_INVALID_MIP_LEVEL";
            case -63 -> "CL_INVALID_GLOBAL_WORK_SIZE";
            case -64 -> "CL_INVALID_PROPERTY";
            case -65 -> "CL_INVALID_IMAGE_DESCRIPTOR";
            case -66 -> "CL_INVALID_COMPILER_OPTIONS";
            case -67 -> "CL_INVALID_LINKER_OPTIONS";
            case -68 -> "CL_INVALID_DEVICE_PARTITION_COUNT";
            case -69 -> "CL_INVALID_PIPE_SIZE";
            case -70 -> "CL_INVALID_DEVICE_QUEUE";
            case -71 -> "CL_INVALID_SPEC_ID";
            case -72 -> "CL_MAX_SIZE_RESTRICTION_EXCEEDED";
            case -1000 -> "CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR";
            case -1001 -> "CL_PLATFORM_NOT_FOUND_KHR";
            case -1002 -> "CL_INVALID_D3D10_DEVICE_KHR";
            case -1003 -> "CL_INVALID_D3D10_RESOURCE_KHR";
            case -1004 -> "CL_D3D10_RESOURCE_ALREADY_ACQUIRED_KHR";
            case -1005 -> "CL_D3D10_RESOURCE_NOT_ACQUIRED_KHR";
            case -1006 -> "CL_INVALID_D3D11_DEVICE_KHR";
            case -1007 -> "CL_INVALID_D3D11_RESOURCE_KHR";
            case -1008 -> "CL_D3D11_RESOURCE_ALREADY_ACQUIRED_KHR";
            case -1009 -> "CL_D3D11_RESOURCE_NOT_ACQUIRED_KHR";
            case -1010 -> "CL_INVALID_DX9_MEDIA_ADAPTER_KHR";
            case -1011 -> "CL_INVALID_DX9_MEDIA_SURFACE_KHR";
            case -1012 -> "CL_DX9_MEDIA_SURFACE_ALREADY_ACQUIRED_KHR";
            case -1013 -> "CL_DX9_MEDIA_SURFACE_NOT_ACQUIRED_KHR";
            case -1057 -> "CL_DEVICE_PARTITION_FAILED_EXT";
            case -1058 -> "CL_INVALID_PARTITION_COUNT_EXT";
            case -1059 -> "CL_INVALID_PARTITION_NAME_EXT";
            case -1092 -> "CL_EGL_RESOURCE_NOT_ACQUIRED_KHR";
            case -1093 -> "CL_INVALID_EGL_OBJECT_KHR";
            case -1094 -> "CL_INVALID_ACCELERATOR_INTEL";
            case -1095 -> "CL_INVALID_ACCELERATOR_TYPE_INTEL";
            case -1096 -> "CL_INVALID_ACCELERATOR_DESCRIPTOR_INTEL";
            case -1097 -> "CL_ACCELERATOR_TYPE_NOT_SUPPORTED_INTEL";
            case -1098 -> "CL_INVALID_VA_API_MEDIA_ADAPTER_INTEL";
            case -1099 -> "CL_INVALID_VA_API_MEDIA_SURFACE_INTEL";
            case -1100 -> "CL_VA_API_MEDIA_SURFACE_ALREADY_ACQUIRED_INTEL";
            case -1101 -> "CL_VA_API_MEDIA_SURFACE_NOT_ACQUIRED_INTEL";
            case -1108 -> "CL_COMMAND_TERMINATED_ITSELF_WITH_FAILURE_ARM";
            case -1121 -> "CL_CONTEXT_TERMINATED_KHR";
            case -1138 -> "CL_INVALID_COMMAND_BUFFER_KHR";
            case -1139 -> "CL_INVALID_SYNC_POINT_WAIT_LIST_KHR";
            case -1140 -> "CL_INCOMPATIBLE_COMMAND_QUEUE_KHR";
            case -1141 -> "CL_INVALID_MUTABLE_COMMAND_KHR";
            case -1142 -> "CL_INVALID_SEMAPHORE_KHR";
            default -> "CL_UNKNOWN_ERROR_CODE";
        };
    }

    /**
     * Whether a status of an allocation call means the memory is exhausted (the caller gets NULL)
     * rather than a failure to report.
     *
     * @param code the status of {@code cl*MemAllocINTEL}
     * @return true for {@code CL_OUT_OF_RESOURCES}, {@code CL_OUT_OF_HOST_MEMORY},
     *         {@code CL_MEM_OBJECT_ALLOCATION_FAILURE} and {@code CL_INVALID_BUFFER_SIZE} (a size
     *         above the device's largest allocation; datamem never passes 0)
     */
    public static boolean isExhaustion(int code) {
        return code == OUT_OF_RESOURCES || code == OUT_OF_HOST_MEMORY || code == MEM_OBJECT_ALLOCATION_FAILURE
                || code == INVALID_BUFFER_SIZE;
    }

    /**
     * A backend exception for a failed OpenCL call.
     *
     * @param handlerName the handler involved, or null
     * @param byteSize    the bytes involved (0 if none)
     * @param operation   the OpenCL function
     * @param status      its status
     * @param detail      more detail, or null
     * @return the exception, naming the code
     */
    public static BackendException exception(String handlerName, long byteSize, String operation, int status,
                                             String detail) {
        return new BackendException(handlerName, byteSize, "OpenCL", operation, status, name(status), detail);
    }
}
