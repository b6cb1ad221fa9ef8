package io.datamem;

/**
 * How an allocator that returns {@code NULL} because of a policy, not exhaustion, tells the code
 * that turns {@code NULL} into an exception why it refused.
 *
 * <p>Allocators return {@link java.lang.foreign.MemorySegment#NULL} whenever they cannot provide
 * memory, as the C functions do. A limiting adaptor that refuses a request because it would take
 * the bytes in use past its cap calls {@link #limitExceeded(long, long, long)} on the refusing
 * thread just before returning {@code NULL}; the array and arena code then throws a
 * {@link LimitExceededException} naming the cap, the bytes in use and the request instead of an
 * {@link OutOfNativeMemoryException}. The note is per thread, so adaptors between the limit and
 * the caller need not know about it.
 *
 * <p>Code that allocates through a handler and reports failures itself does the same as the arrays:
 * {@link #clear()} before the call, {@link #failure} when it returned {@code NULL}. The cost when no
 * allocator ever refused is one read of a static field.
 */
public final class AllocationRefusal {

    private static final ThreadLocal<Note> NOTE = ThreadLocal.withInitial(Note::new);
    private static volatile boolean everNoted;

    private AllocationRefusal() {
    }

    /** The pending refusal of one thread. */
    private static final class Note {
        boolean pending;
        long byteSize;
        long limitBytes;
        long inUseBytes;
    }

    /**
     * Records, for the calling thread, that the allocation it is serving is refused by a byte limit.
     * Call it just before returning {@code NULL}.
     *
     * @param byteSize   the size of the refused request, as the limit saw it
     * @param limitBytes the cap
     * @param inUseBytes the bytes in use under the cap when the request came
     */
    public static void limitExceeded(long byteSize, long limitBytes, long inUseBytes) {
        Note n = NOTE.get();
        n.pending = true;
        n.byteSize = byteSize;
        n.limitBytes = limitBytes;
        n.inUseBytes = inUseBytes;
        everNoted = true;
    }

    /**
     * Forgets any refusal recorded on the calling thread: call it before an allocation whose
     * {@code NULL} result will be turned into an exception with {@link #failure}.
     */
    public static void clear() {
        if (everNoted) {
            NOTE.get().pending = false;
        }
    }

    /**
     * The exception for an allocation through {@code handler} that returned {@code NULL}: a
     * {@link LimitExceededException} if a limit refused it on this thread since the last
     * {@link #clear()}, otherwise an {@link OutOfNativeMemoryException}. Consumes the recorded
     * refusal.
     *
     * @param handler   the handler the allocation went through
     * @param byteSize  the size requested
     * @param operation {@code "malloc"}, {@code "calloc"} or {@code "realloc"}
     * @return the exception to throw
     * @throws NullPointerException if {@code handler} or {@code operation} is null
     */
    public static AllocationException failure(DataMemHandler handler, long byteSize, String operation) {
        return failure(handler, byteSize, handler.traits().byteAlignment(), operation);
    }

    /**
     * As {@link #failure(DataMemHandler, long, String)}, naming an alignment other than the
     * handler's (an arena asked for a larger one, say).
     *
     * @param handler       the handler the allocation went through
     * @param byteSize      the size requested
     * @param byteAlignment the alignment requested
     * @param operation     {@code "malloc"}, {@code "calloc"} or {@code "realloc"}
     * @return the exception to throw
     * @throws NullPointerException if {@code handler} or {@code operation} is null
     */
    public static AllocationException failure(DataMemHandler handler, long byteSize, long byteAlignment,
                                              String operation) {
        java.util.Objects.requireNonNull(operation, "operation");
        long alignment = byteAlignment;
        if (everNoted) {
            Note n = NOTE.get();
            if (n.pending) {
                n.pending = false;
                return new LimitExceededException(handler.name(), n.byteSize, alignment, n.limitBytes, n.inUseBytes);
            }
        }
        return new OutOfNativeMemoryException(handler.name(), byteSize, alignment, operation);
    }
}
