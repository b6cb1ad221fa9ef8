package io.datamem.impl.internal.adaptor;

import io.datamem.DataMemAllocator;
import io.datamem.impl.ForwardingAllocator;
import io.datamem.impl.snapshot.LayerSnapshot;
import io.datamem.impl.snapshot.LiveBlock;
import io.datamem.impl.adaptor.Misuse;
import io.datamem.impl.adaptor.TrackingAdaptor;
import io.datamem.internal.Checks;

import io.datamem.spi.BlockReleased;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

/**
 * The {@link TrackingAdaptor} of the handler term {@code tracking[=off|sampled|full]}, with its
 * stack-trace level and sampling interval.
 *
 * <p>Stack traces, as Netty's leak detector levels: {@link StackTraces#OFF} records none (the
 * cheapest); {@link StackTraces#SAMPLED} records one for about one allocation in
 * {@link Builder#sampleInterval(int) sampleInterval} (128 by default); {@link StackTraces#FULL}
 * records one for every allocation. The default level comes from the system property
 * {@value #STACK_TRACES_PROPERTY} ({@code off}, {@code sampled} or {@code full}), else
 * {@code sampled}.
 */
public final class TrackingAdaptorImpl extends ForwardingAllocator implements TrackingAdaptor {

    /** The default sampling interval of {@link StackTraces#SAMPLED}, as Netty's. */
    public static final int DEFAULT_SAMPLE_INTERVAL = 128;

    private static final int MAX_FRAMES = 32;
    private static final int REPORT_ENTRIES = 50;
    private static final StackWalker WALKER = StackWalker.getInstance();

    private final StackTraces stackTraces;
    private final int sampleInterval;
    private final ConcurrentHashMap<Long, Allocation> live = new ConcurrentHashMap<>();
    private final List<Misuse> problems = new CopyOnWriteArrayList<>();
    private final AtomicLong sequence = new AtomicLong();

    /** How many allocations get a stack trace recorded. */
    public enum StackTraces {
        /** None: the live set records address, size, thread and time only. */
        OFF,
        /** About one allocation in the sampling interval, chosen at random. */
        SAMPLED,
        /** Every allocation. */
        FULL;

        /**
         * Parses a level name.
         *
         * @param name {@code off}, {@code sampled} or {@code full}, in any case
         * @return the level
         * @throws IllegalArgumentException if the name is none of these
         */
        public static StackTraces parse(String name) {
            for (StackTraces s : values()) {
                if (s.name().equalsIgnoreCase(name.strip())) {
                    return s;
                }
            }
            throw new IllegalArgumentException("stack traces: '" + name + "' (expected: off, sampled or full)");
        }
    }

    /**
     * A live allocation, as the table keeps it.
     *
     * @param address    the block's address
     * @param byteSize   the size it was allocated (or last resized) with
     * @param threadName the thread that allocated (or resized) it
     * @param threadId   that thread's id
     * @param time       when
     * @param sequence   the order of the allocation among this adaptor's, from 1
     * @param stackTrace where it was allocated, empty when not recorded
     */
    private record Allocation(long address, long byteSize, String threadName, long threadId, Instant time,
                             long sequence, List<StackTraceElement> stackTrace) {

        Allocation {
            Objects.requireNonNull(threadName, "threadName");
            Objects.requireNonNull(time, "time");
            stackTrace = List.copyOf(stackTrace);
        }

        /** The block as a {@link LiveBlock} read at {@code now}: no placement known. */
        LiveBlock block(Instant now) {
            List<String> stack = stackTrace.isEmpty() ? List.of()
                    : stackTrace.stream().map(StackTraceElement::toString).toList();
            return new LiveBlock(address, byteSize, threadName, threadId, time, Duration.between(time, now), sequence,
                    stack, 0, List.of());
        }

        /**
         * One line: address, size, thread, time.
         *
         * @return for example {@code 0x7f3a10 (4096 bytes) allocated by thread main at 2025-...}
         */
        @Override
        public String toString() {
            return "0x" + Long.toHexString(address) + " (" + byteSize + " bytes) allocated by thread '" + threadName
                    + "' at " + time + " (#" + sequence + ")";
        }
    }

    /**
     * Wraps an upstream with the default level and sampling interval.
     *
     * @param upstream the allocator to track
     * @return a new adaptor
     * @throws NullPointerException     if {@code upstream} is null
     * @throws IllegalArgumentException if the system property {@value #STACK_TRACES_PROPERTY} is set
     *                                  to something else than {@code off}, {@code sampled} or
     *                                  {@code full}
     */
    public static TrackingAdaptorImpl of(DataMemAllocator upstream) {
        return builder(upstream).build();
    }

    private TrackingAdaptorImpl(Builder b) {
        super(b.upstream);
        this.stackTraces = b.stackTraces != null ? b.stackTraces : defaultStackTraces();
        this.sampleInterval = b.sampleInterval;
    }

    /**
     * The default level: the system property {@value #STACK_TRACES_PROPERTY}, else
     * {@link StackTraces#SAMPLED}.
     *
     * @return the level
     * @throws IllegalArgumentException if the property is set to an unknown level
     */
    private static StackTraces defaultStackTraces() {
        String p = System.getProperty(STACK_TRACES_PROPERTY);
        return p == null || p.isBlank() ? StackTraces.SAMPLED : StackTraces.parse(p);
    }

    /**
     * A builder.
     *
     * @param upstream the allocator to track
     * @return a builder with the default settings
     * @throws NullPointerException if {@code upstream} is null
     */
    public static Builder builder(DataMemAllocator upstream) {
        return new Builder(Objects.requireNonNull(upstream, "upstream"));
    }

    /** Settings of a {@link TrackingAdaptorImpl}. */
    public static final class Builder {
        private final DataMemAllocator upstream;
        private StackTraces stackTraces;
        private int sampleInterval = DEFAULT_SAMPLE_INTERVAL;

        private Builder(DataMemAllocator upstream) {
            this.upstream = upstream;
        }

        /**
         * Which allocations get a stack trace.
         *
         * @param level the level
         * @return this builder
         * @throws NullPointerException if {@code level} is null
         */
        public Builder stackTraces(StackTraces level) {
            this.stackTraces = Objects.requireNonNull(level, "level");
            return this;
        }

        /**
         * For {@link StackTraces#SAMPLED}: about one allocation in this many gets a stack trace.
         *
         * @param interval at least 1
         * @return this builder
         * @throws IllegalArgumentException if {@code interval} is below 1
         */
        public Builder sampleInterval(int interval) {
            if (interval < 1) {
                throw new IllegalArgumentException("sampleInterval: " + interval + " (expected: >= 1)");
            }
            this.sampleInterval = interval;
            return this;
        }

        /**
         * Builds the adaptor.
         *
         * @return a new adaptor
         * @throws IllegalArgumentException if no level was set and the system property
         *                                  {@value #STACK_TRACES_PROPERTY} names an unknown level
         */
        public TrackingAdaptorImpl build() {
            return new TrackingAdaptorImpl(this);
        }
    }

    /**
     * The stack-trace level.
     *
     * @return the level
     */
    public StackTraces stackTraces() {
        return stackTraces;
    }

    // ---------------------------------------------------------------------------------------------
    // The allocator

    @Override
    public MemorySegment malloc(long byteSize) {
        return track(upstream().malloc(byteSize), byteSize);
    }

    @Override
    public MemorySegment calloc(long count, long elementByteSize) {
        MemorySegment p = upstream().calloc(count, elementByteSize);
        return p.address() == 0 ? p : track(p, count * elementByteSize);
    }

    @Override
    public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        if (ptr.address() == 0) {
            return track(upstream().realloc(ptr, oldByteSize, newByteSize), newByteSize);
        }
        Checks.byteSize("oldByteSize", oldByteSize);
        Checks.byteSize("newByteSize", newByteSize);
        Allocation a = claim("realloc", ptr.address(), oldByteSize);
        MemorySegment p;
        try {
            p = upstream().realloc(ptr, oldByteSize, newByteSize);
        } catch (RuntimeException | Error e) {
            if (!BlockReleased.by(e)) {
                live.put(a.address(), a);   // the upstream kept the block
            }
            throw e;
        }
        if (p.address() == 0) {
            live.put(a.address(), a); // the old block is untouched and still the caller's
            return p;
        }
        return track(p, newByteSize);
    }

    @Override
    public void free(MemorySegment ptr, long byteSize) {
        Checks.notNegative("byteSize", byteSize);
        if (ptr.address() == 0) {
            upstream().free(ptr, byteSize);
            return;
        }
        Allocation a = claim("free", ptr.address(), byteSize);
        try {
            upstream().free(ptr, byteSize);
        } catch (RuntimeException | Error e) {
            if (!BlockReleased.by(e)) {
                live.put(a.address(), a);   // the upstream kept the block
            }
            throw e;
        }
    }

    /** Removes a live block named by a free or realloc, or records the misuse and throws. */
    private Allocation claim(String operation, long address, long byteSize) {
        Allocation a = live.get(address);
        String call = operation + "(0x" + Long.toHexString(address) + ", " + byteSize + ")";
        if (a != null && a.byteSize() != byteSize) {
            throw refuse(new Misuse(Misuse.Kind.WRONG_SIZE, operation, address, byteSize, a.byteSize(),
                    call + ": the block was allocated with " + a.byteSize() + " bytes (" + a + ")",
                    Thread.currentThread().getName(), a.block(Instant.now())));
        }
        if (a == null || !live.remove(address, a)) {
            throw refuse(new Misuse(Misuse.Kind.NOT_LIVE, operation, address, byteSize, -1,
                    call + ": no live block at this address (a double free, or a pointer this handler never"
                            + " allocated)", Thread.currentThread().getName(), null));
        }
        return a;
    }

    private IllegalArgumentException refuse(Misuse m) {
        problems.add(m);
        return new IllegalArgumentException(m.toString());
    }

    private MemorySegment track(MemorySegment p, long byteSize) {
        if (p.address() == 0) {
            return p;
        }
        Thread t = Thread.currentThread();
        List<StackTraceElement> trace = switch (stackTraces) {
            case OFF -> List.of();
            case FULL -> stackTrace();
            case SAMPLED -> ThreadLocalRandom.current().nextInt(sampleInterval) == 0 ? stackTrace() : List.of();
        };
        live.put(p.address(), new Allocation(p.address(), byteSize, t.getName(), t.threadId(), Instant.now(),
                sequence.incrementAndGet(), trace));
        return p;
    }

    private static List<StackTraceElement> stackTrace() {
        return WALKER.walk(frames -> frames
                .dropWhile(f -> f.getClassName().startsWith("io.datamem.impl.")
                        || f.getClassName().startsWith("io.datamem.internal."))
                .limit(MAX_FRAMES)
                .map(StackWalker.StackFrame::toStackTraceElement)
                .toList());
    }

    // ---------------------------------------------------------------------------------------------
    // Queries

    @Override
    public List<LiveBlock> liveAllocations() {
        Instant now = Instant.now();
        List<LiveBlock> blocks = new ArrayList<>();
        for (Allocation a : sorted()) {
            blocks.add(a.block(now));
        }
        return blocks;
    }

    /** The live allocations, oldest first. */
    private List<Allocation> sorted() {
        List<Allocation> all = new ArrayList<>(live.values());
        all.sort(Comparator.comparingLong(Allocation::sequence));
        return all;
    }

    /**
     * The live blocks, for a memory snapshot: those allocated before this call began (by their
     * sequence numbers) and still in the table when it read them, oldest first. They were all live
     * when the call began, so no address appears twice and no two blocks overlap, even when blocks
     * are freed and their memory handed out again meanwhile; a block freed during the call may still
     * be listed.
     *
     * @return a {@link LayerSnapshot.Tracking}
     */
    @Override
    public LayerSnapshot snapshot() {
        long watermark = sequence.get();
        Instant now = Instant.now();
        List<Allocation> all = new ArrayList<>();
        for (Allocation a : live.values()) {
            if (a.sequence() <= watermark) {
                all.add(a);
            }
        }
        all.sort(Comparator.comparingLong(Allocation::sequence));
        List<LiveBlock> blocks = new ArrayList<>(all.size());
        for (Allocation a : all) {
            blocks.add(a.block(now));
        }
        return new LayerSnapshot.Tracking("TrackingAdaptor", stackTraces.name().toLowerCase(Locale.ROOT),
                problems.size(), blocks);
    }

    @Override
    public List<Misuse> problems() {
        return List.copyOf(problems);
    }

    @Override
    public boolean isClean() {
        return live.isEmpty() && problems.isEmpty();
    }

    @Override
    public String leakReport() {
        List<Allocation> all = sorted();
        StringBuilder b = new StringBuilder();
        if (all.isEmpty()) {
            b.append("no leaks\n");
        } else {
            long bytes = all.stream().mapToLong(Allocation::byteSize).sum();
            b.append(String.format(Locale.ROOT, "LEAK: %d allocation(s) still live, %d bytes in all%n", all.size(),
                    bytes));
            for (Allocation a : all.subList(0, Math.min(all.size(), REPORT_ENTRIES))) {
                b.append("  ").append(a).append('\n');
                if (a.stackTrace().isEmpty()) {
                    if (stackTraces != StackTraces.FULL) {
                        b.append("      (no stack trace recorded: stack traces are ")
                                .append(stackTraces.name().toLowerCase(Locale.ROOT))
                                .append("; use tracking=full or -D" + STACK_TRACES_PROPERTY + "=full)\n");
                    }
                } else {
                    b.append(a.stackTrace().stream().map(f -> "      at " + f).collect(Collectors.joining("\n")))
                            .append('\n');
                }
            }
            if (all.size() > REPORT_ENTRIES) {
                b.append("  ... and ").append(all.size() - REPORT_ENTRIES).append(" more\n");
            }
        }
        List<Misuse> ps = problems();
        if (!ps.isEmpty()) {
            b.append(ps.size()).append(" refused operation(s):\n");
            ps.forEach(p -> b.append("  ").append(p).append('\n'));
        }
        return b.toString();
    }

    @Override
    public String toString() {
        return "TrackingAdaptor[" + upstream() + ", stackTraces=" + stackTraces.name().toLowerCase(Locale.ROOT) + "]";
    }
}
