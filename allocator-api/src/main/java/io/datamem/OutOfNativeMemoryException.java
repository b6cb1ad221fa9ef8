package io.datamem;

/**
 * An allocator returned {@code NULL}: the native memory it draws from is exhausted (or the request
 * could not be satisfied at the alignment or page size asked for).
 */
public class OutOfNativeMemoryException extends AllocationException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception with the standard message: {@code handler 'NAME' could not allocate N
     * bytes (alignment A): out of native memory}.
     *
     * @param handlerName   the handler whose allocator returned NULL
     * @param byteSize      the size requested
     * @param byteAlignment the alignment the handler guarantees
     * @param operation     what was attempted ({@code "malloc"}, {@code "calloc"}, {@code "realloc"})
     */
    public OutOfNativeMemoryException(String handlerName, long byteSize, long byteAlignment, String operation) {
        super(handlerName, byteSize, byteAlignment, "handler '" + handlerName + "' could not allocate "
                + byteSize + " bytes (alignment " + byteAlignment + ", " + operation
                + " returned NULL): out of native memory");
    }
}
