package io.datamem;

/**
 * The root of datamem's runtime failures: memory could not be provided. Its message names the
 * handler and the byte count; subclasses say why.
 *
 * <p>When this exception is thrown, nothing was allocated and no accounting changed.
 */
public class AllocationException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String handlerName;
    private final long byteSize;
    private final long byteAlignment;

    /**
     * Creates an exception.
     *
     * @param handlerName   the handler that failed (may be null when no handler is involved)
     * @param byteSize      the size requested, in bytes
     * @param byteAlignment the alignment requested or guaranteed, in bytes (0 if none)
     * @param message       the complete message
     */
    public AllocationException(String handlerName, long byteSize, long byteAlignment, String message) {
        super(message);
        this.handlerName = handlerName;
        this.byteSize = byteSize;
        this.byteAlignment = byteAlignment;
    }

    /**
     * Creates an exception with a cause.
     *
     * @param handlerName   the handler that failed (may be null when no handler is involved)
     * @param byteSize      the size requested, in bytes
     * @param byteAlignment the alignment requested or guaranteed, in bytes (0 if none)
     * @param message       the complete message
     * @param cause         the underlying failure
     */
    public AllocationException(String handlerName, long byteSize, long byteAlignment, String message,
                               Throwable cause) {
        super(message, cause);
        this.handlerName = handlerName;
        this.byteSize = byteSize;
        this.byteAlignment = byteAlignment;
    }

    /**
     * The name of the handler that could not allocate.
     *
     * @return the handler name, or null if no handler was involved
     */
    public String handlerName() {
        return handlerName;
    }

    /**
     * The size that was requested.
     *
     * @return bytes
     */
    public long byteSize() {
        return byteSize;
    }

    /**
     * The alignment that was requested or guaranteed.
     *
     * @return bytes, or 0 if none applies
     */
    public long byteAlignment() {
        return byteAlignment;
    }
}
