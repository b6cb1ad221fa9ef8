package io.datamem;

/**
 * A limiting adaptor refused a request that would take the bytes in use past its cap. Nothing was
 * allocated and the accounting is unchanged.
 */
public class LimitExceededException extends AllocationException {

    private static final long serialVersionUID = 1L;

    private final long limitBytes;
    private final long inUseBytes;

    /**
     * Creates the exception with the standard message.
     *
     * @param handlerName   the handler whose limit refused the request
     * @param byteSize      the size requested
     * @param byteAlignment the alignment the handler guarantees
     * @param limitBytes    the cap
     * @param inUseBytes    the bytes in use when the request came
     */
    public LimitExceededException(String handlerName, long byteSize, long byteAlignment, long limitBytes,
                                  long inUseBytes) {
        super(handlerName, byteSize, byteAlignment, "handler '" + handlerName + "' refused " + byteSize
                + " bytes: limit " + limitBytes + " bytes, " + inUseBytes + " in use, "
                + Math.max(0, limitBytes - inUseBytes) + " left");
        this.limitBytes = limitBytes;
        this.inUseBytes = inUseBytes;
    }

    /**
     * The cap.
     *
     * @return bytes
     */
    public long limitBytes() {
        return limitBytes;
    }

    /**
     * The bytes in use when the request was refused.
     *
     * @return bytes
     */
    public long inUseBytes() {
        return inUseBytes;
    }
}
