package io.datamem.impl.adaptor;

import io.datamem.impl.snapshot.LiveBlock;

import java.util.Objects;

/**
 * A misuse of memory an adaptor caught at a block: what was wrong, at which address, with which
 * sizes, found by which operation, on which thread. A {@link GuardAdaptor} reports them
 * ({@link GuardAdaptor#check()}, {@link GuardAdaptor#violations()}, and by default in a
 * {@link GuardViolationException}); a {@link TrackingAdaptor} records the calls it refused as
 * them ({@link TrackingAdaptor#problems()}).
 *
 * @param kind              what was wrong
 * @param operation         the operation that found it: {@code "free"} or {@code "realloc"} (the
 *                          caller's call), {@code "check"} ({@link GuardAdaptor#check()}) or
 *                          {@code "quarantine"} (a guard's quarantine releasing a block)
 * @param address           the block's address (the pointer the caller passed)
 * @param byteSize          the size the caller passed, or the block's size when the caller passed
 *                          none ({@code check}, {@code quarantine})
 * @param allocatedByteSize the size the block was allocated with (for a {@link Kind#DOUBLE_FREE}, the
 *                          freed block's), or -1 if the adaptor knows no block at the address
 *                          ({@link Kind#FOREIGN_POINTER}, {@link Kind#NOT_LIVE})
 * @param detail            what exactly was found, for example which red-zone byte changed, or
 *                          which block the address holds
 * @param threadName        the thread that detected it
 * @param allocation        the block as the adaptor lists it, or null when the reporter does not
 *                          know it: a {@link TrackingAdaptor} gives it for a
 *                          {@link Kind#WRONG_SIZE} (the live block named), a {@link GuardAdaptor}
 *                          never does (it keeps no {@link LiveBlock}s)
 */
public record Misuse(Kind kind, String operation, long address, long byteSize, long allocatedByteSize,
                     String detail, String threadName, LiveBlock allocation) {

    /** The kinds of misuse, each with the adaptors that report it. */
    public enum Kind {
        /**
         * {@code free} or {@code realloc} passed a size other than the block's. Reported by the
         * guard and by tracking.
         */
        WRONG_SIZE,
        /**
         * {@code free} or {@code realloc} of a block already freed. Reported by the guard, which
         * remembers the blocks it freed recently.
         */
        DOUBLE_FREE,
        /**
         * {@code free} or {@code realloc} of a pointer the guard never allocated (or freed long
         * ago). Reported by the guard.
         */
        FOREIGN_POINTER,
        /**
         * {@code free} or {@code realloc} of a pointer that is not a live block: freed already, or
         * never allocated through this adaptor. Reported by tracking, which keeps only the live
         * blocks and so cannot tell a {@link #DOUBLE_FREE} from a {@link #FOREIGN_POINTER}.
         */
        NOT_LIVE,
        /**
         * Bytes after the end of a block (its red zone) were written. Reported by the guard, on
         * {@code free}, {@code realloc} and {@link GuardAdaptor#check()}.
         */
        OVERRUN,
        /**
         * Bytes before the start of a block (its header) were written. Reported by the guard, on
         * {@code free}, {@code realloc} and {@link GuardAdaptor#check()}.
         */
        UNDERRUN,
        /**
         * A freed block still in the guard's quarantine was written. Reported by the guard, when the
         * block leaves the quarantine and on {@link GuardAdaptor#check()}.
         */
        USE_AFTER_FREE
    }

    /**
     * Validates.
     *
     * @throws NullPointerException if {@code kind}, {@code operation}, {@code detail} or
     *                              {@code threadName} is null
     */
    public Misuse {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(operation, "operation");
        Objects.requireNonNull(detail, "detail");
        Objects.requireNonNull(threadName, "threadName");
    }

    /**
     * The report line: the kind, the address, the detail, the operation that found it and the
     * thread. The message of the exception a caller gets for it starts with this line.
     *
     * @return for example {@code WRONG_SIZE at 0x7f3a10: free(0x7f3a10, 99) of a block of 100 bytes
     *         ... [detected by free on thread 'main']}
     */
    @Override
    public String toString() {
        return kind + " at 0x" + Long.toHexString(address) + ": " + detail + " [detected by " + operation
                + " on thread '" + threadName + "']";
    }
}
