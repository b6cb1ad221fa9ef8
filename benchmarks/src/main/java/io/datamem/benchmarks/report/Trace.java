package io.datamem.benchmarks.report;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * A fixed pseudo-random allocation trace of mixed sizes, the same on every run: {@link #window()}
 * allocations fill a window of live blocks, then each step frees a live block chosen at random (so
 * lifetimes are random, most short, some long) and allocates a new block in its place; at the end
 * every live block is freed. Sizes run from {@value #MIN_BYTES} B to {@value #MAX_BYTES} B, multiples
 * of 8, skewed toward small blocks as programs allocate them: {@code 16 × 2^(12u²)} for {@code u}
 * uniform in [0, 1), so that about 58% are at most 256 B, 82% at most 4 KiB, and 9% above 16 KiB.
 *
 * <p>The Java replays ({@link #replay}), the C replay in {@code dmbench.c} ({@code dm_bench_trace},
 * fed these very arrays through FFM, or the file {@link #write} makes) all perform the same
 * operations in the same order.
 */
public final class Trace {

    /** The seed of the standard trace. */
    public static final long SEED = 0x5EED_DA7A_3E3L;
    /** The live blocks of the standard trace. */
    public static final int WINDOW = 4096;
    /** The steps of the standard trace. */
    public static final int STEPS = 1 << 17;
    /** Allocations per replay of the standard trace, each freed in the same replay. */
    public static final int ALLOCATIONS = WINDOW + STEPS;
    /** The smallest block. */
    public static final long MIN_BYTES = 16;
    /** The largest block. */
    public static final long MAX_BYTES = 65536;

    private final long[] sizes;
    private final int[] slots;
    private final int window;
    /** The size of the block each step frees (datamem's free takes it). */
    private final long[] freedBytes;
    /** The size of the block in each slot at the end. */
    private final long[] finalBytes;

    private Trace(long[] sizes, int[] slots, int window) {
        this.sizes = sizes;
        this.slots = slots;
        this.window = window;
        this.freedBytes = new long[slots.length];
        this.finalBytes = Arrays.copyOf(sizes, window);
        for (int k = 0; k < slots.length; k++) {
            freedBytes[k] = finalBytes[slots[k]];
            finalBytes[slots[k]] = sizes[window + k];
        }
    }

    /**
     * The standard trace: {@link #SEED}, {@link #WINDOW}, {@link #STEPS}.
     *
     * @return it
     */
    public static Trace standard() {
        return generate(SEED, WINDOW, STEPS);
    }

    /**
     * Generates a trace.
     *
     * @param seed   the seed
     * @param window live blocks
     * @param steps  free + allocate steps after the window is full
     * @return the trace
     * @throws IllegalArgumentException if window is not positive or steps is negative
     */
    public static Trace generate(long seed, int window, int steps) {
        if (window < 1 || steps < 0) {
            throw new IllegalArgumentException("window: " + window + ", steps: " + steps
                    + " (expected: window >= 1, steps >= 0)");
        }
        SplittableRandom r = new SplittableRandom(seed);
        long[] sizes = new long[window + steps];
        int[] slots = new int[steps];
        for (int i = 0; i < sizes.length; i++) {
            double u = r.nextDouble();
            long s = (Math.round(MIN_BYTES * Math.pow(2, 12 * u * u)) + 7) & ~7L;
            sizes[i] = Math.clamp(s, MIN_BYTES, MAX_BYTES);
            if (i >= window) {
                slots[i - window] = r.nextInt(window);
            }
        }
        return new Trace(sizes, slots, window);
    }

    /**
     * The live blocks.
     *
     * @return the window
     */
    public int window() {
        return window;
    }

    /**
     * The steps after the window is full.
     *
     * @return the steps
     */
    public int steps() {
        return slots.length;
    }

    /**
     * The sizes of the allocations, in order.
     *
     * @return a copy
     */
    public long[] sizes() {
        return sizes.clone();
    }

    /**
     * The slot each step frees and refills.
     *
     * @return a copy
     */
    public int[] slots() {
        return slots.clone();
    }

    /**
     * The most bytes live at once: what a perfect allocator would hold at its peak.
     *
     * @return bytes
     */
    public long peakLiveBytes() {
        long live = 0;
        long peak = 0;
        long[] in = new long[window];
        for (int i = 0; i < sizes.length; i++) {
            int slot = i < window ? i : slots[i - window];
            live += sizes[i] - in[slot];
            in[slot] = sizes[i];
            peak = Math.max(peak, live);
        }
        return peak;
    }

    /**
     * The median allocation size.
     *
     * @return bytes
     */
    public long medianBytes() {
        long[] s = sizes.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }

    /**
     * The mean allocation size.
     *
     * @return bytes
     */
    public double meanBytes() {
        return Arrays.stream(sizes).average().orElse(0);
    }

    /**
     * Writes the trace for {@code dmbench-pairs}: {@code DMTRACE1}, int64 window, int64 steps, int64
     * sizes, int32 slots, little-endian.
     *
     * @param file the file
     * @throws IOException if it cannot be written
     */
    public void write(Path file) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(8 + 16 + 8 * sizes.length + 4 * slots.length).order(ByteOrder.LITTLE_ENDIAN);
        b.put("DMTRACE1".getBytes(java.nio.charset.StandardCharsets.US_ASCII)).putLong(window).putLong(slots.length);
        for (long s : sizes) {
            b.putLong(s);
        }
        for (int s : slots) {
            b.putInt(s);
        }
        b.flip();
        try (FileChannel c = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            while (b.hasRemaining()) {
                c.write(b);
            }
        }
    }

    /**
     * An allocator the trace is replayed against, holding the live blocks by slot.
     */
    public interface Heap {

        /**
         * Allocates a block into a slot.
         *
         * @param slot     the slot, free
         * @param byteSize bytes
         * @throws OutOfMemoryError if the allocator fails
         */
        void allocate(int slot, long byteSize);

        /**
         * Writes one byte of a slot's block.
         *
         * @param slot   the slot
         * @param offset the byte
         */
        void touch(int slot, long offset);

        /**
         * Frees a slot's block.
         *
         * @param slot     the slot
         * @param byteSize the block's size
         */
        void free(int slot, long byteSize);
    }

    /**
     * Replays the trace.
     *
     * @param heap  the allocator, with at least {@link #window()} slots
     * @param touch 0: blocks untouched; 1: the first byte written; 2: one byte in every 4 KiB and the
     *              last written, so that every page of every block is resident
     * @return the bytes allocated
     */
    public long replay(Heap heap, int touch) {
        long total = 0;
        for (int i = 0; i < sizes.length; i++) {
            int slot;
            if (i < window) {
                slot = i;
            } else {
                slot = slots[i - window];
                heap.free(slot, freedBytes[i - window]);
            }
            long n = sizes[i];
            heap.allocate(slot, n);
            if (touch == 1) {
                heap.touch(slot, 0);
            } else if (touch == 2) {
                for (long o = 0; o < n; o += 4096) {
                    heap.touch(slot, o);
                }
                heap.touch(slot, n - 1);
            }
            total += n;
        }
        for (int s = 0; s < window; s++) {
            heap.free(s, finalBytes[s]);
        }
        return total;
    }
}
