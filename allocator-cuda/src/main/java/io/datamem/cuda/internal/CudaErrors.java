package io.datamem.cuda.internal;

import io.datamem.BackendException;
import jcuda.runtime.cudaError;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.HashMap;
import java.util.Map;

/**
 * CUDA runtime error codes ({@code cudaError_t}): their names, and the exceptions datamem throws
 * for them. Pure Java: JCuda's {@link cudaError} table holds the names and loads no native code.
 * Internal.
 */
public final class CudaErrors {

    /** {@code cudaSuccess}. */
    public static final int SUCCESS = 0;
    /** {@code cudaErrorInvalidValue}. */
    public static final int INVALID_VALUE = 1;
    /** {@code cudaErrorMemoryAllocation}: the one code that means exhaustion (NULL, not an exception). */
    public static final int MEMORY_ALLOCATION = 2;
    /** {@code cudaErrorInsufficientDriver}: no driver, or one older than the runtime. */
    public static final int INSUFFICIENT_DRIVER = 35;
    /** {@code cudaErrorNoDevice}. */
    public static final int NO_DEVICE = 100;
    /** {@code cudaErrorInvalidDevice}. */
    public static final int INVALID_DEVICE = 101;
    /** {@code cudaErrorNotReady}: work is still pending (a query, not a failure). */
    public static final int NOT_READY = 600;
    /** {@code cudaErrorHostMemoryAlreadyRegistered}. */
    public static final int HOST_MEMORY_ALREADY_REGISTERED = 712;
    /** {@code cudaErrorHostMemoryNotRegistered}. */
    public static final int HOST_MEMORY_NOT_REGISTERED = 713;

    /** The backend name every CUDA {@link BackendException} carries. */
    public static final String BACKEND = "CUDA";

    private static final Map<String, Integer> CODES_BY_NAME = codesByName();

    private CudaErrors() {
    }

    /**
     * The symbolic name of a runtime error code.
     *
     * @param code a {@code cudaError_t} value
     * @return for example {@code cudaErrorMemoryAllocation}; {@code cudaError_t(N)} for codes this
     *         JCuda version does not know
     */
    public static String name(int code) {
        String s = cudaError.stringFor(code);
        return s == null || s.startsWith("INVALID") ? "cudaError_t(" + code + ")" : s;
    }

    /**
     * The code of a symbolic name (for {@link jcuda.CudaException}s, which carry only the name,
     * when an application switched JCuda's exceptions on).
     *
     * @param name for example {@code cudaErrorMemoryAllocation}
     * @return the code, or -1 if unknown
     */
    public static int code(String name) {
        return CODES_BY_NAME.getOrDefault(name, -1);
    }

    /**
     * Whether a code means the allocation could not be satisfied (returned as NULL, never thrown).
     *
     * @param code a {@code cudaError_t} value
     * @return true for {@code cudaErrorMemoryAllocation}
     */
    public static boolean isExhaustion(int code) {
        return code == MEMORY_ALLOCATION;
    }

    /**
     * The exception for a failed runtime call.
     *
     * @param handlerName the handler involved, or null
     * @param byteSize    the size involved, 0 if none
     * @param operation   the runtime function, for example {@code cudaMalloc}
     * @param code        the code it returned
     * @param detail      more detail (the runtime's description), or null
     * @return a {@link BackendException} whose {@code codeName()} is the code's name
     */
    public static BackendException exception(String handlerName, long byteSize, String operation, int code,
                                              String detail) {
        return new BackendException(handlerName, byteSize, BACKEND, operation, code, name(code), detail);
    }

    private static Map<String, Integer> codesByName() {
        Map<String, Integer> m = new HashMap<>();
        for (Field f : cudaError.class.getFields()) {
            if (f.getType() == int.class && Modifier.isStatic(f.getModifiers())) {
                try {
                    m.put(f.getName(), f.getInt(null));
                } catch (IllegalAccessException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
        return Map.copyOf(m);
    }
}
