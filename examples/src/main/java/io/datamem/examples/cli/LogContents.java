package io.datamem.examples.cli;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * What an allocation log holds, read from its lines alone, with no allocator involved: what
 * {@code datamem replay} reports before it replays anything. The requests that failed when they
 * were logged count under {@code loggedFailures} and nowhere else; a {@code realloc} counts its new
 * size as a request.
 *
 * @param mallocs          successful {@code malloc} lines
 * @param callocs          successful {@code calloc} lines
 * @param reallocs         successful {@code realloc} lines
 * @param frees            {@code free} lines
 * @param loggedFailures   requests that failed when they were logged (result {@code 0x0})
 * @param threads          the threads that logged
 * @param spanNanos        from the first line's time to the last's
 * @param smallestRequest  the smallest size a successful request asked for, 0 when none
 * @param largestRequest   the largest, 0 when none
 * @param requestedBytes   the sizes of the successful requests added up
 * @param peakBytes        the most bytes live at once by the log's sizes
 * @param leftLiveBlocks   blocks still live at the log's end
 * @param leftLiveBytes    their bytes
 */
record LogContents(long mallocs, long callocs, long reallocs, long frees, long loggedFailures, int threads,
                   long spanNanos, long smallestRequest, long largestRequest, long requestedBytes, long peakBytes,
                   long leftLiveBlocks, long leftLiveBytes) {

    /**
     * Reads what a log holds.
     *
     * @param entries the log's operations, in log order
     * @return what they hold
     * @throws NullPointerException if {@code entries} is null
     */
    static LogContents of(List<AllocationLog.Entry> entries) {
        Objects.requireNonNull(entries, "entries");
        Map<Long, Long> live = new HashMap<>();   // logged address -> size
        Set<Long> threads = new HashSet<>();
        long mallocs = 0;
        long callocs = 0;
        long reallocs = 0;
        long frees = 0;
        long failures = 0;
        long smallest = Long.MAX_VALUE;
        long largest = 0;
        long requested = 0;
        long bytes = 0;
        long peak = 0;
        long orphans = 0;
        long orphanBytes = 0;
        for (AllocationLog.Entry e : entries) {
            threads.add(e.threadId());
            if (e.op() != AllocationLog.Op.FREE && e.result() == 0) {
                failures++;
                continue;
            }
            switch (e.op()) {
                case MALLOC -> mallocs++;
                case CALLOC -> callocs++;
                case REALLOC -> reallocs++;
                case FREE -> frees++;
            }
            if (e.op() == AllocationLog.Op.FREE) {
                Long size = live.remove(e.address());
                bytes -= size == null ? e.byteSize() : size;
                continue;
            }
            long size = e.requestedBytes();
            smallest = Math.min(smallest, size);
            largest = Math.max(largest, size);
            requested += size;
            if (e.op() == AllocationLog.Op.REALLOC && e.address() != 0) {
                Long old = live.remove(e.address());
                bytes -= old == null ? e.byteSize() : old;
            }
            Long replaced = live.put(e.result(), size);
            if (replaced != null) {   // a block the log never freed, whose address came back: still live
                orphans++;
                orphanBytes += replaced;
            }
            bytes += size;
            peak = Math.max(peak, bytes);
        }
        long span = entries.isEmpty() ? 0 : entries.getLast().nanos() - entries.getFirst().nanos();
        long leftBytes = orphanBytes + live.values().stream().mapToLong(Long::longValue).sum();
        return new LogContents(mallocs, callocs, reallocs, frees, failures, threads.size(), span,
                smallest == Long.MAX_VALUE ? 0 : smallest, largest, requested, peak, live.size() + orphans,
                leftBytes);
    }

    /**
     * The operations the log holds, failed ones left out.
     *
     * @return mallocs + callocs + reallocs + frees
     */
    long operations() {
        return mallocs + callocs + reallocs + frees;
    }

    /**
     * A short report, several lines.
     *
     * @return the text
     */
    @Override
    public String toString() {
        return String.format(Locale.ROOT, "operations: %d (malloc %d, calloc %d, realloc %d, free %d) from %d"
                        + " thread(s) over %.3f ms%n"
                        + "sizes requested: %d to %d bytes, %d bytes in all; at most %d bytes live at once%n"
                        + "failed when logged (not replayed): %d; left live at the end: %d blocks, %d bytes%n",
                operations(), mallocs, callocs, reallocs, frees, threads, spanNanos / 1e6, smallestRequest,
                largestRequest, requestedBytes, peakBytes, loggedFailures, leftLiveBlocks, leftLiveBytes);
    }
}
