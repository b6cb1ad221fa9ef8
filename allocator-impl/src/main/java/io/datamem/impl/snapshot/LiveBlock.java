package io.datamem.impl.snapshot;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * A live block as a {@link LayerSnapshot.Tracking tracking layer} saw it, with its placement when
 * a placement layer below knows it.
 *
 * @param address    the block's address
 * @param byteSize   the size it was allocated (or last resized) with
 * @param thread     the name of the thread that allocated (or resized) it
 * @param threadId   that thread's id
 * @param time       when it was allocated
 * @param age        how long it had been live when the snapshot read it
 * @param sequence   the order of its allocation among the tracking layer's, from 1
 * @param stack      where it was allocated, innermost frame first ({@link StackTraceElement#toString()}
 *                   of each frame); empty when the tracking layer recorded none
 * @param pageSize   the size of the pages behind it, from the huge-page or NUMA layer that mapped
 *                   its memory; 0 when no layer knows
 * @param nodes      the NUMA nodes its memory is bound to, ascending; empty when not bound or not
 *                   known
 */
public record LiveBlock(long address, long byteSize, String thread, long threadId, Instant time, Duration age,
                        long sequence, List<String> stack, long pageSize, List<Integer> nodes) {

    /**
     * Validates and copies.
     *
     * @throws NullPointerException     if {@code thread}, {@code time}, {@code age}, {@code stack} or
     *                                  {@code nodes} is null, or holds null
     * @throws IllegalArgumentException if {@code byteSize} or {@code pageSize} is negative
     */
    public LiveBlock {
        Objects.requireNonNull(thread, "thread");
        Objects.requireNonNull(time, "time");
        Objects.requireNonNull(age, "age");
        stack = List.copyOf(stack);
        nodes = List.copyOf(nodes);
        if (byteSize < 0 || pageSize < 0) {
            throw new IllegalArgumentException("block 0x" + Long.toHexString(address) + ": byteSize " + byteSize
                    + ", pageSize " + pageSize + " (expected: >= 0)");
        }
    }

    /**
     * The first byte past the block.
     *
     * @return {@code address + byteSize}
     */
    public long end() {
        return address + byteSize;
    }

    /**
     * This block with its placement.
     *
     * @param pageSize the size of the pages behind it (0: unknown)
     * @param nodes    the NUMA nodes its memory is bound to (empty: unknown or not bound)
     * @return a copy
     * @throws NullPointerException     if {@code nodes} is null
     * @throws IllegalArgumentException if {@code pageSize} is negative
     */
    public LiveBlock withPlacement(long pageSize, List<Integer> nodes) {
        return new LiveBlock(address, byteSize, thread, threadId, time, age, sequence, stack, pageSize, nodes);
    }

    /**
     * The frame that allocated the block outside datamem and the JDK: the first frame of
     * {@link #stack()} whose class is not in datamem's array, core or allocator packages, nor in
     * {@code java.*}, {@code jdk.*} or {@code sun.*}; the first frame if all are; empty if no stack
     * was recorded.
     *
     * @return the frame, or the empty string
     */
    public String site() {
        for (String frame : stack) {
            if (!isLibraryFrame(frame)) {
                return frame;
            }
        }
        return stack.isEmpty() ? "" : stack.getFirst();
    }

    private static final List<String> LIBRARY_PREFIXES = List.of("java.", "jdk.", "sun.", "io.datamem.array.",
            "io.datamem.internal.", "io.datamem.buffer.", "io.datamem.dlpack.", "io.datamem.usm.",
            "io.datamem.spi.", "io.datamem.impl.adaptor.", "io.datamem.impl.pool.",
            "io.datamem.impl.placement.", "io.datamem.impl.os.", "io.datamem.impl.internal.", "io.datamem.impl.ForwardingAllocator",
            "io.datamem.cuda.", "io.datamem.sycl.");

    private static boolean isLibraryFrame(String frame) {
        // StackTraceElement.toString(): [loader/][module[@version]/]class.method(file:line); the
        // class name starts the text or follows a '/'
        int paren = frame.indexOf('(');
        int end = paren < 0 ? frame.length() : paren;
        for (int start = 0; start >= 0 && start < end; ) {
            if (isLibraryName(frame, start)) {
                return true;
            }
            int slash = frame.indexOf('/', start);
            start = slash < 0 || slash >= end ? -1 : slash + 1;
        }
        return false;
    }

    private static boolean isLibraryName(String frame, int start) {
        for (String prefix : LIBRARY_PREFIXES) {
            if (frame.startsWith(prefix, start)) {
                return true;
            }
        }
        // The core package: io.datamem.Class.method
        return frame.startsWith("io.datamem.", start) && frame.length() > start + 11
                && Character.isUpperCase(frame.charAt(start + 11));
    }
}
