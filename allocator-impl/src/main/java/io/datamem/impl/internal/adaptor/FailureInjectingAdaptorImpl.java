package io.datamem.impl.internal.adaptor;

import io.datamem.DataMemAllocator;
import io.datamem.impl.ForwardingAllocator;
import io.datamem.impl.adaptor.FailureInjectingAdaptor;
import io.datamem.internal.Checks;

import java.lang.foreign.MemorySegment;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The {@link FailureInjectingAdaptor} of the handler term {@code faults=SPEC}. The behaviour is stated on the interface.
 */
public final class FailureInjectingAdaptorImpl extends ForwardingAllocator implements FailureInjectingAdaptor {

    private enum Mode { NTH, EVERY, RANDOM }

    private final Mode mode;
    private final long n;
    private final double probability;
    private final long seed;
    private final AtomicLong attempts = new AtomicLong();
    private final LongAdder injected = new LongAdder();

    private FailureInjectingAdaptorImpl(DataMemAllocator upstream, Mode mode, long n, double probability, long seed) {
        super(upstream);
        this.mode = mode;
        this.n = n;
        this.probability = probability;
        this.seed = seed;
    }

    /**
     * Fails the {@code n}th allocation, and only it.
     *
     * @param upstream the allocator
     * @param n        from 1
     * @return the adaptor
     * @throws NullPointerException     if {@code upstream} is null
     * @throws IllegalArgumentException if {@code n} is below 1
     */
    public static FailureInjectingAdaptorImpl nth(DataMemAllocator upstream, long n) {
        return new FailureInjectingAdaptorImpl(upstream, Mode.NTH, positive("n", n), 0, 0);
    }

    /**
     * Fails every {@code n}th allocation: the {@code n}th, the {@code 2n}th, ...
     *
     * @param upstream the allocator
     * @param n        from 1 (1 fails them all)
     * @return the adaptor
     * @throws NullPointerException     if {@code upstream} is null
     * @throws IllegalArgumentException if {@code n} is below 1
     */
    public static FailureInjectingAdaptorImpl every(DataMemAllocator upstream, long n) {
        return new FailureInjectingAdaptorImpl(upstream, Mode.EVERY, positive("n", n), 0, 0);
    }

    /**
     * Fails each allocation with a probability, from a sequence fixed by the seed.
     *
     * @param upstream    the allocator
     * @param probability from 0 to 1
     * @param seed        any value; the same seed fails the same allocations
     * @return the adaptor
     * @throws NullPointerException     if {@code upstream} is null
     * @throws IllegalArgumentException if {@code probability} is not in [0, 1]
     */
    public static FailureInjectingAdaptorImpl random(DataMemAllocator upstream, double probability, long seed) {
        if (!(probability >= 0 && probability <= 1)) {
            throw new IllegalArgumentException("probability: " + probability + " (expected: 0 to 1)");
        }
        return new FailureInjectingAdaptorImpl(upstream, Mode.RANDOM, 0, probability, seed);
    }

    /**
     * Builds the adaptor a spec describes: {@code nth:N}, {@code every:N}, {@code random:P} or
     * {@code random:P:SEED} (seed 0 by default).
     *
     * @param upstream the allocator
     * @param spec     the spec, as in the handler name {@code faults=every:10}
     * @return the adaptor
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if the spec is malformed
     */
    public static FailureInjectingAdaptorImpl of(DataMemAllocator upstream, String spec) {
        Objects.requireNonNull(spec, "spec");
        // -1: keep empty parts, so ":" or "nth:5:" is malformed (not an empty array, nor "nth:5")
        String[] p = spec.strip().split(":", -1);
        try {
            switch (p[0].toLowerCase(Locale.ROOT)) {
                case "nth" -> {
                    if (p.length == 2) {
                        return nth(upstream, Long.parseLong(p[1]));
                    }
                }
                case "every" -> {
                    if (p.length == 2) {
                        return every(upstream, Long.parseLong(p[1]));
                    }
                }
                case "random" -> {
                    if (p.length == 2 || p.length == 3) {
                        return random(upstream, Double.parseDouble(p[1]), p.length == 3 ? Long.parseLong(p[2]) : 0);
                    }
                }
                default -> {
                }
            }
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("faults: '" + spec + "': " + e.getMessage()
                    + " (expected: nth:N, every:N, random:P or random:P:SEED)", e);
        }
        throw new IllegalArgumentException("faults: '" + spec + "' (expected: nth:N, every:N, random:P or random:P:SEED)");
    }

    private static long positive(String name, long v) {
        if (v < 1) {
            throw new IllegalArgumentException(name + ": " + v + " (expected: >= 1)");
        }
        return v;
    }

    @Override
    public long attempts() {
        return attempts.get();
    }

    @Override
    public long injectedFailures() {
        return injected.sum();
    }

    /** Whether the next allocation fails; counts it. */
    private boolean fail() {
        long k = attempts.incrementAndGet();
        boolean fail = switch (mode) {
            case NTH -> k == n;
            case EVERY -> k % n == 0;
            case RANDOM -> unit(seed, k) < probability;
        };
        if (fail) {
            injected.increment();
        }
        return fail;
    }

    /** A uniform double in [0, 1) from (seed, k): SplitMix64's finaliser. */
    private static double unit(long seed, long k) {
        long z = seed + k * 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        z ^= z >>> 31;
        return (z >>> 11) * 0x1.0p-53;
    }

    @Override
    public MemorySegment malloc(long byteSize) {
        Checks.byteSize("byteSize", byteSize);
        return fail() ? MemorySegment.NULL : upstream().malloc(byteSize);
    }

    @Override
    public MemorySegment calloc(long count, long elementByteSize) {
        Checks.notNegative("count", count);
        Checks.notNegative("elementByteSize", elementByteSize);
        return fail() ? MemorySegment.NULL : upstream().calloc(count, elementByteSize);
    }

    @Override
    public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        Checks.byteSize("oldByteSize", oldByteSize);
        Checks.byteSize("newByteSize", newByteSize);
        return fail() ? MemorySegment.NULL : upstream().realloc(ptr, oldByteSize, newByteSize);
    }

    @Override
    public String toString() {
        String what = switch (mode) {
            case NTH -> "nth:" + n;
            case EVERY -> "every:" + n;
            case RANDOM -> "random:" + probability + ":" + seed;
        };
        return "FailureInjectingAdaptor[" + upstream() + ", " + what + "]";
    }
}
