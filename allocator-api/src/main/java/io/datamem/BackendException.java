package io.datamem;

/**
 * A backend (CUDA, OpenCL, hwloc, the kernel) reported an error code.
 */
public class BackendException extends AllocationException {

    private static final long serialVersionUID = 1L;

    private final String backend;
    private final long code;
    private final String codeName;

    /**
     * Creates the exception. The message is {@code handler 'NAME': BACKEND OPERATION failed with
     * CODE_NAME (CODE) for N bytes[: detail]}.
     *
     * @param handlerName the handler involved (may be null)
     * @param byteSize    the size involved, in bytes (0 if none)
     * @param backend     the backend, for example {@code "CUDA"} or {@code "OpenCL"}
     * @param operation   the native function that failed
     * @param code        the native error code
     * @param codeName    the code's symbolic name, for example {@code "cudaErrorMemoryAllocation"}
     * @param detail      more detail, or null
     */
    public BackendException(String handlerName, long byteSize, String backend, String operation, long code,
                            String codeName, String detail) {
        super(handlerName, byteSize, 0, (handlerName == null ? "" : "handler '" + handlerName + "': ") + backend
                + " " + operation + " failed with " + codeName + " (" + code + ")"
                + (byteSize > 0 ? " for " + byteSize + " bytes" : "")
                + (detail == null ? "" : ": " + detail));
        this.backend = backend;
        this.code = code;
        this.codeName = codeName;
    }

    /**
     * The backend that failed.
     *
     * @return for example {@code "CUDA"}
     */
    public String backend() {
        return backend;
    }

    /**
     * The native error code.
     *
     * @return the code
     */
    public long code() {
        return code;
    }

    /**
     * The symbolic name of the native error code.
     *
     * @return for example {@code "CL_OUT_OF_RESOURCES"}
     */
    public String codeName() {
        return codeName;
    }
}
