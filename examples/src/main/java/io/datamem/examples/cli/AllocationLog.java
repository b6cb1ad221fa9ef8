package io.datamem.examples.cli;

import io.datamem.DataMemAllocator;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Reads the logs the {@code +log=FILE} adaptor ({@link io.datamem.impl.adaptor.LoggingAdaptor}, whose
 * javadoc states the format) writes, and replays them against an allocator: what
 * {@code datamem replay}, {@code datamem snapshot --log} and {@code datamem view --log} do with a log.
 *
 * <p>A replay issues the logged requests in log order, on one thread, mapping each logged address
 * to the block the target returned for it. Requests that failed when they were logged (result
 * {@code 0x0}) are not replayed; requests that fail in the replay are counted, and the later
 * operations on their blocks are skipped. Blocks the log leaves live are freed at the end. Peak
 * bytes are computed from the sizes in the log, so two targets that satisfy every request report
 * the same peak and counts; only the time differs.
 */
final class AllocationLog {

    /**
     * The version of the line format this reader accepts, written in the first line of every log
     * ({@code # datamem allocation log 1}); the adaptor writes the same number.
     */
    static final int FORMAT_VERSION = 1;

    private AllocationLog() {
    }

    /** The kinds of logged operations. */
    enum Op {
        /** {@code malloc SIZE RESULT}. */
        MALLOC,
        /** {@code calloc COUNT ELEMENT_SIZE RESULT}. */
        CALLOC,
        /** {@code realloc PTR OLD_SIZE NEW_SIZE RESULT}. */
        REALLOC,
        /** {@code free PTR SIZE}. */
        FREE
    }

    /**
     * One logged operation.
     *
     * @param nanos    nanoseconds since the log started
     * @param threadId the thread's id
     * @param op       the operation
     * @param address  the pointer passed ({@code realloc}, {@code free}), else 0
     * @param byteSize the size: of the block ({@code malloc}, {@code free}), the old size
     *                 ({@code realloc}), the element count ({@code calloc})
     * @param argument the second size: new size ({@code realloc}), element size ({@code calloc}), else 0
     * @param result   the address returned ({@code 0} for NULL; 0 for {@code free})
     */
    record Entry(long nanos, long threadId, Op op, long address, long byteSize, long argument, long result) {

        /**
         * Validates.
         *
         * @throws NullPointerException if {@code op} is null
         */
        Entry {
            Objects.requireNonNull(op, "op");
        }

        /**
         * The bytes the operation asked for.
         *
         * @return the new size of a block ({@code malloc}, {@code calloc}, {@code realloc}), or the
         *         freed size
         */
        long requestedBytes() {
            return switch (op) {
                case MALLOC, FREE -> byteSize;
                case CALLOC -> byteSize * argument;
                case REALLOC -> argument;
            };
        }
    }

    /**
     * What a replay did.
     *
     * @param mallocs          {@code malloc} requests issued
     * @param callocs          {@code calloc} requests issued
     * @param reallocs         {@code realloc} requests issued
     * @param frees            {@code free} calls issued
     * @param failures         requests the target answered with NULL
     * @param skipped          operations on blocks the replay did not have (their allocation failed)
     * @param loggedFailures   requests not replayed because they had failed when logged
     * @param peakBytes        the most bytes live at once during the replay
     * @param leftLiveBlocks   blocks the log left live, freed by the replay at the end
     * @param leftLiveBytes    their bytes
     * @param nanos            the time the target's calls took in all (the whole replay loop)
     */
    record Replay(long mallocs, long callocs, long reallocs, long frees, long failures, long skipped,
                  long loggedFailures, long peakBytes, long leftLiveBlocks, long leftLiveBytes, long nanos) {

        /**
         * Every request issued.
         *
         * @return mallocs + callocs + reallocs + frees
         */
        long operations() {
            return mallocs + callocs + reallocs + frees;
        }

        /**
         * A short report of what the replay issued, several lines: what the log holds is
         * {@link LogContents}'s to say.
         *
         * @return the text
         */
        @Override
        public String toString() {
            return String.format(Locale.ROOT, "operations: %d (malloc %d, calloc %d, realloc %d, free %d)%n"
                            + "failures: %d; skipped: %d%npeak bytes: %d%n"
                            + "time: %.3f ms for one pass: not a benchmark (one cold run, first calls and fresh"
                            + " pages included; docs/performance.md compares allocators)%n",
                    operations(), mallocs, callocs, reallocs, frees, failures, skipped, peakBytes, nanos / 1e6);
        }
    }

    /**
     * Reads a log file.
     *
     * @param log the file
     * @return its operations, in order
     * @throws UncheckedIOException     if the file cannot be read
     * @throws IllegalArgumentException if a line is malformed (the message names the line)
     */
    static List<Entry> read(Path log) {
        try (Reader r = Files.newBufferedReader(log, StandardCharsets.UTF_8)) {
            return read(r, log.toString());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read allocation log " + log + ": " + e.getMessage(), e);
        }
    }

    /**
     * Reads a log.
     *
     * @param in   the text
     * @param name the log's name, for messages
     * @return its operations, in order
     * @throws UncheckedIOException     if reading fails
     * @throws IllegalArgumentException if a line is malformed (the message names the line)
     */
    static List<Entry> read(Reader in, String name) {
        List<Entry> entries = new ArrayList<>();
        BufferedReader r = in instanceof BufferedReader b ? b : new BufferedReader(in);
        int number = 0;
        try {
            String line;
            while ((line = r.readLine()) != null) {
                number++;
                String t = line.strip();
                if (t.startsWith("# datamem allocation log ")) {
                    String v = t.substring("# datamem allocation log ".length()).strip();
                    if (!v.equals(Integer.toString(FORMAT_VERSION))) {
                        throw new IllegalArgumentException(name + " line " + number + ": log format version " + v
                                + " (expected: " + FORMAT_VERSION + ")");
                    }
                }
                if (t.isEmpty() || t.startsWith("#")) {
                    continue;
                }
                entries.add(parse(t, name, number));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read allocation log " + name + ": " + e.getMessage(), e);
        }
        return entries;
    }

    private static Entry parse(String line, String name, int number) {
        String[] f = line.split("\\s+");
        try {
            if (f.length < 4) {
                throw new IllegalArgumentException("too few fields");
            }
            long nanos = Long.parseLong(f[0]);
            long thread = Long.parseLong(f[1]);
            Op op = Op.valueOf(f[2].toUpperCase(Locale.ROOT));
            int expected = switch (op) {
                case MALLOC, FREE -> 5;
                case CALLOC -> 6;
                case REALLOC -> 7;
            };
            if (f.length != expected) {
                throw new IllegalArgumentException(f[2] + " takes " + (expected - 3) + " fields after the name");
            }
            return switch (op) {
                case MALLOC -> new Entry(nanos, thread, op, 0, size(f[3]), 0, address(f[4]));
                case CALLOC -> new Entry(nanos, thread, op, 0, size(f[3]), size(f[4]), address(f[5]));
                case REALLOC -> new Entry(nanos, thread, op, address(f[3]), size(f[4]), size(f[5]), address(f[6]));
                case FREE -> new Entry(nanos, thread, op, address(f[3]), size(f[4]), 0, 0);
            };
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(name + " line " + number + ": '" + line + "': " + e.getMessage()
                    + " (expected: NANOS THREAD malloc SIZE RESULT | calloc COUNT SIZE RESULT"
                    + " | realloc PTR OLD NEW RESULT | free PTR SIZE)", e);
        }
    }

    private static long size(String s) {
        long v = Long.parseLong(s);
        if (v < 0) {
            throw new IllegalArgumentException("size " + v + " is negative");
        }
        return v;
    }

    private static long address(String s) {
        if (!s.startsWith("0x")) {
            throw new IllegalArgumentException("address " + s + " does not start with 0x");
        }
        return Long.parseUnsignedLong(s.substring(2), 16);
    }

    /**
     * Replays operations against an allocator.
     *
     * @param entries the operations, in log order
     * @param target  the allocator to replay against
     * @return what the replay did
     * @throws NullPointerException if an argument is null
     */
    static Replay replay(List<Entry> entries, DataMemAllocator target) {
        return replay(entries, target, t -> { });
    }

    /**
     * Replays operations against an allocator, and calls {@code atEnd} after the last one, while
     * the blocks the log left live are still allocated (before the replay frees them): the moment
     * to look at what the log left behind ({@code datamem snapshot --log}).
     *
     * @param entries the operations, in log order
     * @param target  the allocator to replay against
     * @param atEnd   called once with {@code target} after the last operation; what it throws
     *                propagates after the left-over blocks are freed
     * @return what the replay did
     * @throws NullPointerException if an argument is null
     */
    static Replay replay(List<Entry> entries, DataMemAllocator target,
                         Consumer<? super DataMemAllocator> atEnd) {
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(atEnd, "atEnd");
        Map<Long, long[]> live = new HashMap<>(); // logged address -> {replay address, size}
        List<long[]> orphans = new ArrayList<>();
        long mallocs = 0;
        long callocs = 0;
        long reallocs = 0;
        long frees = 0;
        long failures = 0;
        long skipped = 0;
        long loggedFailures = 0;
        long bytes = 0;
        long peak = 0;
        long begin = System.nanoTime();
        for (Entry e : entries) {
            switch (e.op()) {
                case MALLOC, CALLOC -> {
                    if (e.result() == 0) {
                        loggedFailures++;
                        continue;
                    }
                    MemorySegment p;
                    if (e.op() == Op.MALLOC) {
                        mallocs++;
                        p = target.malloc(e.byteSize());
                    } else {
                        callocs++;
                        p = target.calloc(e.byteSize(), e.argument());
                    }
                    if (p.address() == 0) {
                        failures++;
                        continue;
                    }
                    long size = e.requestedBytes();
                    long[] previous = live.put(e.result(), new long[] {p.address(), size});
                    if (previous != null) {
                        orphans.add(previous);
                    }
                    bytes += size;
                    peak = Math.max(peak, bytes);
                }
                case REALLOC -> {
                    if (e.result() == 0) {
                        loggedFailures++;
                        continue;
                    }
                    long[] block = e.address() == 0 ? null : live.get(e.address());
                    if (e.address() != 0 && block == null) {
                        skipped++;
                        continue;
                    }
                    reallocs++;
                    MemorySegment old = block == null ? MemorySegment.NULL : MemorySegment.ofAddress(block[0]);
                    long oldSize = block == null ? 0 : block[1];
                    MemorySegment p = target.realloc(old, oldSize, e.argument());
                    if (p.address() == 0) {
                        failures++;
                        continue;
                    }
                    if (block != null) {
                        live.remove(e.address());
                    }
                    long[] previous = live.put(e.result(), new long[] {p.address(), e.argument()});
                    if (previous != null) {
                        orphans.add(previous);
                    }
                    bytes += e.argument() - oldSize;
                    peak = Math.max(peak, bytes);
                }
                case FREE -> {
                    long[] block = live.remove(e.address());
                    if (block == null) {
                        skipped++;
                        continue;
                    }
                    frees++;
                    target.free(MemorySegment.ofAddress(block[0]), block[1]);
                    bytes -= block[1];
                }
            }
        }
        long nanos = System.nanoTime() - begin;
        long leftBlocks = live.size() + orphans.size();
        long leftBytes = 0;
        List<long[]> rest = new ArrayList<>(live.values());
        rest.addAll(orphans);
        try {
            atEnd.accept(target);
        } finally {
            for (long[] b : rest) {
                target.free(MemorySegment.ofAddress(b[0]), b[1]);
                leftBytes += b[1];
            }
        }
        return new Replay(mallocs, callocs, reallocs, frees, failures, skipped, loggedFailures, peak, leftBlocks,
                leftBytes, nanos);
    }
}
