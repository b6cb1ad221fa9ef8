package io.datamem.cuda.internal;

import io.datamem.BackendException;

import java.util.HashMap;
import java.util.Map;

/**
 * CUDA driver API error codes ({@code CUresult}): their names, and the exceptions datamem throws
 * for them. Pure Java: the names of the codes datamem meets are in a table here, so that messages
 * and tests need no driver; {@link CudaRuntime} asks the driver ({@code cuGetErrorName}) for codes
 * the table lacks. Internal.
 */
public final class CudaErrors {

    /** {@code CUDA_SUCCESS}. */
    public static final int SUCCESS = 0;
    /** {@code CUDA_ERROR_INVALID_VALUE}. */
    public static final int INVALID_VALUE = 1;
    /** {@code CUDA_ERROR_OUT_OF_MEMORY}: the one code that means exhaustion (NULL, not an exception). */
    public static final int OUT_OF_MEMORY = 2;
    /** {@code CUDA_ERROR_NOT_INITIALIZED}: {@code cuInit} was not called, or failed. */
    public static final int NOT_INITIALIZED = 3;
    /** {@code CUDA_ERROR_NO_DEVICE}. */
    public static final int NO_DEVICE = 100;
    /** {@code CUDA_ERROR_INVALID_DEVICE}. */
    public static final int INVALID_DEVICE = 101;
    /** {@code CUDA_ERROR_INVALID_CONTEXT}: no context is current, or it was destroyed. */
    public static final int INVALID_CONTEXT = 201;
    /** {@code CUDA_ERROR_INVALID_HANDLE}: a stream or event that is not one. */
    public static final int INVALID_HANDLE = 400;
    /** {@code CUDA_ERROR_NOT_READY}: work is still pending (a query, not a failure). */
    public static final int NOT_READY = 600;
    /** {@code CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED}. */
    public static final int HOST_MEMORY_ALREADY_REGISTERED = 712;
    /** {@code CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED}. */
    public static final int HOST_MEMORY_NOT_REGISTERED = 713;

    /** The backend name every CUDA {@link BackendException} carries. */
    public static final String BACKEND = "CUDA";

    private static final Map<Integer, String> NAMES = names();
    private static final Map<String, Integer> CODES_BY_NAME = codesByName();

    private CudaErrors() {
    }

    /**
     * The symbolic name of a driver error code, from the table of the codes datamem meets.
     *
     * @param code a {@code CUresult} value
     * @return for example {@code CUDA_ERROR_OUT_OF_MEMORY}; {@code CUresult(N)} for codes the table
     *         lacks
     */
    public static String name(int code) {
        String s = NAMES.get(code);
        return s == null ? "CUresult(" + code + ")" : s;
    }

    /**
     * Whether the table names a code.
     *
     * @param code a {@code CUresult} value
     * @return true if {@link #name} knows it
     */
    public static boolean known(int code) {
        return NAMES.containsKey(code);
    }

    /**
     * The code of a symbolic name.
     *
     * @param name for example {@code CUDA_ERROR_OUT_OF_MEMORY}
     * @return the code, or -1 if the table lacks it
     */
    public static int code(String name) {
        return CODES_BY_NAME.getOrDefault(name, -1);
    }

    /**
     * Whether a code means the allocation could not be satisfied (returned as NULL, never thrown).
     *
     * @param code a {@code CUresult} value
     * @return true for {@code CUDA_ERROR_OUT_OF_MEMORY}
     */
    public static boolean isExhaustion(int code) {
        return code == OUT_OF_MEMORY;
    }

    /**
     * The exception for a failed driver call, named from the table.
     *
     * @param handlerName the handler involved, or null
     * @param byteSize    the size involved, 0 if none
     * @param operation   the driver function, for example {@code cuMemAlloc}
     * @param code        the code it returned
     * @param detail      more detail (the driver's description), or null
     * @return a {@link BackendException} whose {@code codeName()} is the code's name
     */
    public static BackendException exception(String handlerName, long byteSize, String operation, int code,
                                              String detail) {
        return exception(handlerName, byteSize, operation, code, name(code), detail);
    }

    /**
     * The exception for a failed driver call, with the code's name given.
     *
     * @param handlerName the handler involved, or null
     * @param byteSize    the size involved, 0 if none
     * @param operation   the driver function
     * @param code        the code it returned
     * @param codeName    its name
     * @param detail      more detail, or null
     * @return a {@link BackendException}
     */
    static BackendException exception(String handlerName, long byteSize, String operation, int code, String codeName,
                                      String detail) {
        return new BackendException(handlerName, byteSize, BACKEND, operation, code, codeName, detail);
    }

    private static Map<Integer, String> names() {
        Map<Integer, String> m = new HashMap<>();
        m.put(0, "CUDA_SUCCESS");
        m.put(1, "CUDA_ERROR_INVALID_VALUE");
        m.put(2, "CUDA_ERROR_OUT_OF_MEMORY");
        m.put(3, "CUDA_ERROR_NOT_INITIALIZED");
        m.put(4, "CUDA_ERROR_DEINITIALIZED");
        m.put(34, "CUDA_ERROR_STUB_LIBRARY");
        m.put(46, "CUDA_ERROR_DEVICE_UNAVAILABLE");
        m.put(100, "CUDA_ERROR_NO_DEVICE");
        m.put(101, "CUDA_ERROR_INVALID_DEVICE");
        m.put(102, "CUDA_ERROR_DEVICE_NOT_LICENSED");
        m.put(200, "CUDA_ERROR_INVALID_IMAGE");
        m.put(201, "CUDA_ERROR_INVALID_CONTEXT");
        m.put(202, "CUDA_ERROR_CONTEXT_ALREADY_CURRENT");
        m.put(205, "CUDA_ERROR_MAP_FAILED");
        m.put(206, "CUDA_ERROR_UNMAP_FAILED");
        m.put(214, "CUDA_ERROR_ECC_UNCORRECTABLE");
        m.put(216, "CUDA_ERROR_CONTEXT_ALREADY_IN_USE");
        m.put(217, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED");
        m.put(304, "CUDA_ERROR_OPERATING_SYSTEM");
        m.put(400, "CUDA_ERROR_INVALID_HANDLE");
        m.put(401, "CUDA_ERROR_ILLEGAL_STATE");
        m.put(500, "CUDA_ERROR_NOT_FOUND");
        m.put(600, "CUDA_ERROR_NOT_READY");
        m.put(700, "CUDA_ERROR_ILLEGAL_ADDRESS");
        m.put(701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES");
        m.put(702, "CUDA_ERROR_LAUNCH_TIMEOUT");
        m.put(704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED");
        m.put(705, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED");
        m.put(708, "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE");
        m.put(709, "CUDA_ERROR_CONTEXT_IS_DESTROYED");
        m.put(710, "CUDA_ERROR_ASSERT");
        m.put(712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED");
        m.put(713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED");
        m.put(714, "CUDA_ERROR_HARDWARE_STACK_ERROR");
        m.put(715, "CUDA_ERROR_ILLEGAL_INSTRUCTION");
        m.put(716, "CUDA_ERROR_MISALIGNED_ADDRESS");
        m.put(719, "CUDA_ERROR_LAUNCH_FAILED");
        m.put(800, "CUDA_ERROR_NOT_PERMITTED");
        m.put(801, "CUDA_ERROR_NOT_SUPPORTED");
        m.put(802, "CUDA_ERROR_SYSTEM_NOT_READY");
        m.put(803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH");
        m.put(804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE");
        m.put(900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED");
        m.put(901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED");
        m.put(906, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT");
        m.put(907, "CUDA_ERROR_CAPTURED_EVENT");
        m.put(908, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD");
        m.put(909, "CUDA_ERROR_TIMEOUT");
        m.put(999, "CUDA_ERROR_UNKNOWN");
        return Map.copyOf(m);
    }

    private static Map<String, Integer> codesByName() {
        Map<String, Integer> m = new HashMap<>();
        NAMES.forEach((code, name) -> m.put(name, code));
        return Map.copyOf(m);
    }
}
