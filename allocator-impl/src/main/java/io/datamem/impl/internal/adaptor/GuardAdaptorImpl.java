package io.datamem.impl.internal.adaptor;

import io.datamem.DataMemAllocator;
import io.datamem.MemoryTraits;
import io.datamem.impl.ForwardingAllocator;
import io.datamem.impl.adaptor.GuardAdaptor;
import io.datamem.impl.adaptor.GuardViolationException;
import io.datamem.impl.adaptor.Misuse;
import io.datamem.impl.adaptor.Misuse.Kind;
import io.datamem.internal.Checks;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The {@link GuardAdaptor} of the handler terms {@code guard} ({@link OnViolation#THROW}) and
 * {@code guard=record} ({@link OnViolation#RECORD}), with its red-zone and quarantine sizes. The
 * behaviour is stated on the interface.
 */
public final class GuardAdaptorImpl extends ForwardingAllocator implements GuardAdaptor {

    /** The default size of the red zone after each block. */
    public static final int DEFAULT_RED_ZONE_BYTES = 32;
    /** The default quarantine: freed blocks up to this many bytes in all wait before going upstream. */
    public static final long DEFAULT_QUARANTINE_BYTES = 4L << 20;

    private static final long MAGIC = 0x6461_7461_6D65_6D21L; // "datamem!"
    private static final int MIN_HEADER = 32;
    private static final int MAX_QUARANTINE_BLOCKS = 1024;
    private static final int MAX_REMEMBERED_FREES = 4096;

    /** What the guard does when it catches a violation. */
    public enum OnViolation {
        /** Records it and throws a {@link GuardViolationException}. */
        THROW,
        /** Records it only. */
        RECORD
    }

    private final long header;
    private final int redZone;
    private final long quarantineLimit;
    private final OnViolation onViolation;
    private final ConcurrentHashMap<Long, Block> live = new ConcurrentHashMap<>();
    private final List<Misuse> violations = new CopyOnWriteArrayList<>();
    private final Object lock = new Object();
    // Guarded by 'lock'.
    private final ArrayDeque<Block> quarantine = new ArrayDeque<>();
    private long quarantineBytes;
    private final Map<Long, Block> recentlyFreed = new LinkedHashMap<>(64, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Block> eldest) {
            return size() > MAX_REMEMBERED_FREES;
        }
    };

    /** A block the guard allocated. */
    private static final class Block {
        final long address;
        final long byteSize;
        final long base;
        final long total;
        final long header;
        final String threadName;
        final Instant time;
        // Guarded by 'this'.
        boolean released;
        boolean reported;
        boolean writtenAfterFree;
        String freedBy;
        Instant freedAt;

        Block(long address, long byteSize, long base, long total) {
            this.address = address;
            this.byteSize = byteSize;
            this.base = base;
            this.total = total;
            this.header = address - base;
            this.threadName = Thread.currentThread().getName();
            this.time = Instant.now();
        }

        @Override
        public String toString() {
            return "block of " + byteSize + " bytes allocated by thread '" + threadName + "' at " + time;
        }
    }

    /**
     * Wraps an upstream with the default settings.
     *
     * @param upstream the allocator to guard; its memory must be host-accessible
     * @return a new adaptor
     * @throws NullPointerException     if {@code upstream} is null
     * @throws IllegalArgumentException if the upstream's memory is not host-accessible
     */
    public static GuardAdaptorImpl of(DataMemAllocator upstream) {
        return builder(upstream).build();
    }

    private GuardAdaptorImpl(Builder b) {
        super(b.upstream);
        MemoryTraits t = upstream().traits();
        if (!t.hostAccessible()) {
            throw new IllegalArgumentException("upstream: " + upstream() + " allocates " + t.kind()
                    + " memory, which the host cannot access (expected: host-accessible memory for the guard's"
                    + " headers and red zones)");
        }
        this.header = Math.max(MIN_HEADER, t.byteAlignment());
        this.redZone = b.redZoneBytes;
        this.quarantineLimit = b.quarantineBytes;
        this.onViolation = b.onViolation;
    }

    /**
     * A builder.
     *
     * @param upstream the allocator to guard
     * @return a builder with the default settings
     * @throws NullPointerException if {@code upstream} is null
     */
    public static Builder builder(DataMemAllocator upstream) {
        return new Builder(Objects.requireNonNull(upstream, "upstream"));
    }

    /** Settings of a {@link GuardAdaptorImpl}. */
    public static final class Builder {
        private final DataMemAllocator upstream;
        private int redZoneBytes = DEFAULT_RED_ZONE_BYTES;
        private long quarantineBytes = DEFAULT_QUARANTINE_BYTES;
        private OnViolation onViolation = OnViolation.THROW;

        private Builder(DataMemAllocator upstream) {
            this.upstream = upstream;
        }

        /**
         * The size of the red zone after each block.
         *
         * @param bytes from 1 to 4096
         * @return this builder
         * @throws IllegalArgumentException if out of range
         */
        public Builder redZoneBytes(int bytes) {
            if (bytes < 1 || bytes > 4096) {
                throw new IllegalArgumentException("redZoneBytes: " + bytes + " (expected: 1 to 4096)");
            }
            this.redZoneBytes = bytes;
            return this;
        }

        /**
         * How many bytes of freed blocks (headers and red zones included) wait in quarantine before
         * going back upstream; 0 frees at once. Larger blocks skip the quarantine.
         *
         * @param bytes at least 0
         * @return this builder
         * @throws IllegalArgumentException if negative
         */
        public Builder quarantineBytes(long bytes) {
            this.quarantineBytes = Checks.notNegative("quarantineBytes", bytes);
            return this;
        }

        /**
         * What to do on a violation.
         *
         * @param action throw (the default) or only record
         * @return this builder
         * @throws NullPointerException if {@code action} is null
         */
        public Builder onViolation(OnViolation action) {
            this.onViolation = Objects.requireNonNull(action, "action");
            return this;
        }

        /**
         * Builds the adaptor.
         *
         * @return a new adaptor
         * @throws IllegalArgumentException if the upstream's memory is not host-accessible
         */
        public GuardAdaptorImpl build() {
            return new GuardAdaptorImpl(this);
        }
    }

    /**
     * What the guard does on a violation.
     *
     * @return the action
     */
    public OnViolation onViolation() {
        return onViolation;
    }

    // ---------------------------------------------------------------------------------------------
    // The allocator

    @Override
    public MemorySegment malloc(long byteSize) {
        Checks.byteSize("byteSize", byteSize);
        return allocate(byteSize, false);
    }

    @Override
    public MemorySegment calloc(long count, long elementByteSize) {
        long byteSize = Checks.callocByteSize(count, elementByteSize);
        return byteSize < 0 ? MemorySegment.NULL : allocate(byteSize, true);
    }

    @Override
    public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        Checks.byteSize("oldByteSize", oldByteSize);
        Checks.byteSize("newByteSize", newByteSize);
        if (ptr.address() == 0) {
            return allocate(newByteSize, false);
        }
        long address = ptr.address();
        Block b = live.get(address);
        if (b == null) {
            notLive("realloc", address, oldByteSize);
            return MemorySegment.NULL;
        }
        if (b.byteSize != oldByteSize) {
            violation(new Misuse(Kind.WRONG_SIZE, "realloc", address, oldByteSize, b.byteSize,
                    "realloc(0x" + Long.toHexString(address) + ", " + oldByteSize + ", " + newByteSize
                            + ") of a " + b + "; the size passed is " + sizeDifference(oldByteSize, b.byteSize),
                    Thread.currentThread().getName(), null), false);
        }
        if (onViolation == OnViolation.THROW) {
            // Check before moving: a corrupted block is retired as a free would retire it, and
            // nothing is allocated or copied.
            List<Misuse> found;
            synchronized (b) {
                found = b.released ? List.of() : inspect(b, "realloc");
            }
            if (!found.isEmpty()) {
                violations.addAll(found);
                boolean released = live.remove(address, b);
                if (released) {
                    retire(b, "realloc");   // already reported: retire finds nothing more
                }
                throw new GuardViolationException(found.getFirst(), released);
            }
        }
        MemorySegment moved = allocate(newByteSize, false);
        if (moved.address() == 0) {
            return moved; // the old block is untouched and still the caller's
        }
        if (!live.remove(address, b)) {
            Block nb = live.remove(moved.address());
            release(nb);
            notLive("realloc", address, oldByteSize);
            return MemorySegment.NULL;
        }
        long keep = Math.min(b.byteSize, newByteSize);
        if (keep > 0) {
            MemorySegment.copy(segment(b.address, keep), 0, segment(moved.address(), keep), 0, keep);
        }
        List<Misuse> found = retire(b, "realloc");
        if (!found.isEmpty()) {
            violation(found.getFirst(), true);
        }
        return moved;
    }

    @Override
    public void free(MemorySegment ptr, long byteSize) {
        Checks.notNegative("byteSize", byteSize);
        long address = ptr.address();
        if (address == 0) {
            return;
        }
        Block b = live.get(address);
        if (b == null) {
            notLive("free", address, byteSize);
            return;
        }
        if (b.byteSize != byteSize) {
            violation(new Misuse(Kind.WRONG_SIZE, "free", address, byteSize, b.byteSize,
                    "free(0x" + Long.toHexString(address) + ", " + byteSize + ") of a " + b
                            + "; the size passed is " + sizeDifference(byteSize, b.byteSize),
                    Thread.currentThread().getName(), null), false);
        }
        if (!live.remove(address, b)) {
            notLive("free", address, byteSize);
            return;
        }
        List<Misuse> found = retire(b, "free");
        if (!found.isEmpty() && onViolation == OnViolation.THROW) {
            throw new GuardViolationException(found.getFirst(), true);   // recorded by retire
        }
    }

    @Override
    public MemoryTraits traitsOf(MemorySegment ptr) {
        Block b = live.get(ptr.address());
        return b == null ? traits() : upstream().traitsOf(MemorySegment.ofAddress(b.base));
    }

    private static String sizeDifference(long passed, long real) {
        long d = passed - real;
        return Math.abs(d) + " bytes too " + (d > 0 ? "large" : "small");
    }

    private MemorySegment allocate(long byteSize, boolean zeroed) {
        // The header is at least the upstream's overall alignment; an upstream whose blocks keep a
        // larger one (a pool's size classes) gets a header of the block's alignment, so that the
        // address handed out keeps the alignment traitsOf reports for it.
        long header = this.header;
        MemorySegment raw;
        long total;
        while (true) {
            if (byteSize > DataMemAllocator.MAX_BYTE_SIZE - header - redZone) {
                return MemorySegment.NULL; // cannot be satisfied with the guard's overhead
            }
            total = header + byteSize + redZone;
            raw = zeroed ? upstream().calloc(1, total) : upstream().malloc(total);
            if (raw.address() == 0) {
                return raw;
            }
            long blockAlignment = upstream().traitsOf(raw).byteAlignment();
            if (blockAlignment <= header) {
                break;
            }
            upstream().free(raw, total);   // retried with the larger header: it only grows
            header = blockAlignment;
        }
        long address = raw.address() + header;
        MemorySegment s = segment(raw.address(), total);
        // Only the last MIN_HEADER bytes of the header are written: the rest is alignment padding,
        // left untouched so that a large alignment commits no memory.
        s.asSlice(header - MIN_HEADER, MIN_HEADER - 16).fill(RED_ZONE_BYTE);
        s.set(ValueLayout.JAVA_LONG_UNALIGNED, header - 16, byteSize);
        s.set(ValueLayout.JAVA_LONG_UNALIGNED, header - 8, canary(address, byteSize));
        if (!zeroed && byteSize > 0) {
            s.asSlice(header, byteSize).fill(UNINITIALISED_BYTE);
        }
        s.asSlice(header + byteSize, redZone).fill(RED_ZONE_BYTE);
        live.put(address, new Block(address, byteSize, raw.address(), total));
        return MemorySegment.ofAddress(address);
    }

    private static long canary(long address, long byteSize) {
        return MAGIC ^ address ^ Long.rotateLeft(byteSize, 29);
    }

    private static MemorySegment segment(long address, long byteSize) {
        return MemorySegment.ofAddress(address).reinterpret(byteSize);
    }

    /** A free or realloc of a pointer that is not live: a double free or a foreign pointer. */
    private void notLive(String operation, long address, long byteSize) {
        Block freed;
        synchronized (lock) {
            freed = recentlyFreed.get(address);
        }
        String call = operation + "(0x" + Long.toHexString(address) + ", " + byteSize + ")";
        Misuse v;
        if (freed != null) {
            String by;
            synchronized (freed) {
                by = "freed by thread '" + freed.freedBy + "' at " + freed.freedAt;
            }
            v = new Misuse(Kind.DOUBLE_FREE, operation, address, byteSize, freed.byteSize,
                    call + " of a " + freed + ", already " + by, Thread.currentThread().getName(), null);
        } else {
            v = new Misuse(Kind.FOREIGN_POINTER, operation, address, byteSize, -1,
                    call + ": this handler has no block at 0x" + Long.toHexString(address)
                            + " (never allocated here, or freed long ago)", Thread.currentThread().getName(), null);
        }
        violation(v, false);
    }

    /**
     * Records a violation (unless {@code recorded}) and throws it in {@link OnViolation#THROW} mode.
     */
    private void violation(Misuse v, boolean recorded) {
        if (!recorded) {
            violations.add(v);
        }
        if (onViolation == OnViolation.THROW) {
            throw new GuardViolationException(v);
        }
    }

    /** Checks a block that left the live set, poisons it and sends it to quarantine or upstream. */
    private List<Misuse> retire(Block b, String operation) {
        List<Misuse> found;
        synchronized (b) {
            found = inspect(b, operation);
            b.released = true;
            b.freedBy = Thread.currentThread().getName();
            b.freedAt = Instant.now();
            if (b.byteSize > 0) {
                segment(b.address, b.byteSize).fill(FREED_BYTE);
            }
        }
        violations.addAll(found);
        List<Block> evicted = new ArrayList<>();
        boolean quarantined = false;
        synchronized (lock) {
            recentlyFreed.put(b.address, b);
            if (b.total <= quarantineLimit) {
                quarantine.addLast(b);
                quarantineBytes += b.total;
                quarantined = true;
                while (quarantineBytes > quarantineLimit || quarantine.size() > MAX_QUARANTINE_BLOCKS) {
                    Block e = quarantine.pollFirst();
                    quarantineBytes -= e.total;
                    evicted.add(e);
                }
            }
        }
        if (!quarantined) {
            release(b);
        }
        for (Block e : evicted) {
            boolean reported;
            synchronized (e) {
                reported = e.writtenAfterFree;
            }
            if (!reported) {
                checkPoison(e, "quarantine");
            }
            release(e);
        }
        return found;
    }

    private void release(Block b) {
        upstream().free(MemorySegment.ofAddress(b.base), b.total);
    }

    /** Overruns and underruns of a block the caller holds; each block is reported once. */
    private List<Misuse> inspect(Block b, String operation) {
        if (b.reported) {
            return List.of();
        }
        MemorySegment s = segment(b.base, b.total);
        String thread = Thread.currentThread().getName();
        List<Misuse> found = new ArrayList<>(2);
        long header = b.header;
        long after = header + b.byteSize;
        for (long i = 0; i < redZone; i++) {
            byte v = s.get(ValueLayout.JAVA_BYTE, after + i);
            if (v != RED_ZONE_BYTE) {
                found.add(new Misuse(Kind.OVERRUN, operation, b.address, b.byteSize, b.byteSize,
                        "the " + b + " was written past its end: byte " + (b.byteSize + i) + " (red-zone byte " + i
                                + ", address 0x" + Long.toHexString(b.address + b.byteSize + i) + ") is "
                                + hex(v) + ", expected " + hex(RED_ZONE_BYTE), thread, null));
                break;
            }
        }
        String underrun = null;
        long storedSize = s.get(ValueLayout.JAVA_LONG_UNALIGNED, header - 16);
        long storedCanary = s.get(ValueLayout.JAVA_LONG_UNALIGNED, header - 8);
        if (storedCanary != canary(b.address, b.byteSize)) {
            underrun = "the canary just before it (bytes -8 to -1) changed to 0x" + Long.toHexString(storedCanary);
        } else if (storedSize != b.byteSize) {
            underrun = "the size in its header (bytes -16 to -9) changed to " + storedSize;
        } else {
            for (long i = header - 17; i >= header - MIN_HEADER; i--) {
                byte v = s.get(ValueLayout.JAVA_BYTE, i);
                if (v != RED_ZONE_BYTE) {
                    underrun = "byte " + (i - header) + " (address 0x" + Long.toHexString(b.base + i) + ") is "
                            + hex(v) + ", expected " + hex(RED_ZONE_BYTE);
                    break;
                }
            }
        }
        if (underrun != null) {
            found.add(new Misuse(Kind.UNDERRUN, operation, b.address, b.byteSize, b.byteSize,
                    "the " + b + " was written before its start: " + underrun, thread, null));
        }
        if (!found.isEmpty()) {
            b.reported = true;
        }
        return found;
    }

    /** Writes into a quarantined block: the violation (recorded), or null. */
    private Misuse checkPoison(Block b, String operation) {
        MemorySegment s = segment(b.address, b.byteSize);
        for (long i = 0; i < b.byteSize; i++) {
            byte v = s.get(ValueLayout.JAVA_BYTE, i);
            if (v != FREED_BYTE) {
                String by;
                synchronized (b) {
                    by = "freed by thread '" + b.freedBy + "' at " + b.freedAt;
                    b.writtenAfterFree = true;
                }
                Misuse found = new Misuse(Kind.USE_AFTER_FREE, operation, b.address, b.byteSize,
                        b.byteSize, "the " + b + ", " + by + ", was written after it was freed: byte " + i + " is "
                        + hex(v) + ", expected " + hex(FREED_BYTE), Thread.currentThread().getName(), null);
                violations.add(found);
                return found;
            }
        }
        return null;
    }

    private static String hex(byte v) {
        return String.format("0x%02x", v & 0xFF);
    }

    // ---------------------------------------------------------------------------------------------
    // Checks and reports

    @Override
    public List<Misuse> check() {
        List<Misuse> found = new ArrayList<>();
        for (Block b : live.values()) {
            synchronized (b) {
                if (!b.released) {
                    found.addAll(inspect(b, "check"));
                }
            }
        }
        violations.addAll(found);
        synchronized (lock) {
            for (Block b : quarantine) {
                boolean reported;
                synchronized (b) {
                    reported = b.writtenAfterFree;
                }
                Misuse v = reported ? null : checkPoison(b, "check");
                if (v != null) {
                    found.add(v);
                }
            }
        }
        return found;
    }

    @Override
    public int drainQuarantine() {
        List<Block> all;
        synchronized (lock) {
            all = new ArrayList<>(quarantine);
            quarantine.clear();
            quarantineBytes = 0;
        }
        for (Block b : all) {
            boolean reported;
            synchronized (b) {
                reported = b.writtenAfterFree;
            }
            if (!reported) {
                checkPoison(b, "quarantine");
            }
            release(b);
        }
        return all.size();
    }

    @Override
    public List<Misuse> violations() {
        return List.copyOf(violations);
    }

    @Override
    public long liveCount() {
        return live.size();
    }

    @Override
    public long liveBytes() {
        long sum = 0;
        for (Block b : live.values()) {
            sum += b.byteSize;
        }
        return sum;
    }

    @Override
    public long overheadBytes() {
        return header + redZone;
    }

    @Override
    public String report() {
        List<Misuse> vs = violations();
        if (vs.isEmpty()) {
            return "no violations\n";
        }
        StringBuilder b = new StringBuilder().append(vs.size()).append(" guard violation(s):\n");
        vs.forEach(v -> b.append("  ").append(v).append('\n'));
        return b.toString();
    }

    @Override
    public String toString() {
        return "GuardAdaptor[" + upstream() + "]";
    }
}
