package io.datamem.impl.adaptor;

import java.util.Objects;

/**
 * A misuse of memory caught by a {@link GuardAdaptor}: what happened, at which address, with which
 * sizes, on which thread.
 *
 * @param kind              what was wrong
 * @param detectedBy        the operation that found it: {@code "free"}, {@code "realloc"},
 *                          {@code "check"} or {@code "quarantine"}
 * @param address           the block's address (the pointer the caller passed)
 * @param byteSize          the size the caller passed, or the block's size when the caller passed
 *                          none ({@code check})
 * @param allocatedByteSize the size the block was allocated with, or -1 if the guard never saw it
 * @param detail            what exactly was found, for example which red-zone byte changed
 * @param threadName        the thread that detected it
 */
public record GuardViolation(Kind kind, String detectedBy, long address, long byteSize, long allocatedByteSize,
                             String detail, String threadName) {

    /** The kinds of violation. */
    public enum Kind {
        /** {@code free} or {@code realloc} passed a size other than the block's. */
        WRONG_SIZE,
        /** {@code free} or {@code realloc} of a block already freed. */
        DOUBLE_FREE,
        /** {@code free} or {@code realloc} of a pointer the guard never allocated. */
        FOREIGN_POINTER,
        /** Bytes after the end of a block (its red zone) were written. */
        OVERRUN,
        /** Bytes before the start of a block (its header) were written. */
        UNDERRUN,
        /** A freed block still in quarantine was written. */
        USE_AFTER_FREE
    }

    /**
     * Validates.
     *
     * @throws NullPointerException if {@code kind}, {@code detectedBy}, {@code detail} or
     *                              {@code threadName} is null
     */
    public GuardViolation {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(detectedBy, "detectedBy");
        Objects.requireNonNull(detail, "detail");
        Objects.requireNonNull(threadName, "threadName");
    }

    /**
     * The report line.
     *
     * @return for example {@code WRONG_SIZE at 0x7f3a10: free(0x7f3a10, 99) of a block of 100 bytes
     *         ...}
     */
    @Override
    public String toString() {
        return kind + " at 0x" + Long.toHexString(address) + ": " + detail + " [detected by " + detectedBy
                + " on thread '" + threadName + "']";
    }
}
