package io.datamem.array;

/**
 * A Python-style slice of one axis: {@code start:stop:step}, where a null bound means "from the
 * beginning" or "to the end" in the step's direction and negative bounds count from the end.
 *
 * @param start the first index, or null
 * @param stop  the index to stop before, or null
 * @param step  the step, not 0
 */
public record Slice(Long start, Long stop, long step) {

    /**
     * Validates the step.
     *
     * @throws IllegalArgumentException if {@code step} is 0
     */
    public Slice {
        if (step == 0) {
            throw new IllegalArgumentException("step: 0 (expected: not 0)");
        }
    }

    /**
     * The whole axis, {@code :}.
     *
     * @return the slice
     */
    public static Slice all() {
        return new Slice(null, null, 1);
    }

    /**
     * {@code start:stop}.
     *
     * @param start the first index (negative counts from the end)
     * @param stop  the index to stop before (negative counts from the end)
     * @return the slice
     */
    public static Slice range(long start, long stop) {
        return new Slice(start, stop, 1);
    }

    /**
     * {@code start:stop:step}.
     *
     * @param start the first index
     * @param stop  the index to stop before
     * @param step  the step, not 0
     * @return the slice
     * @throws IllegalArgumentException if {@code step} is 0
     */
    public static Slice range(long start, long stop, long step) {
        return new Slice(start, stop, step);
    }

    /**
     * {@code ::step}, for example {@code ::-1} to reverse an axis.
     *
     * @param step the step, not 0
     * @return the slice
     * @throws IllegalArgumentException if {@code step} is 0
     */
    public static Slice every(long step) {
        return new Slice(null, null, step);
    }

    /**
     * Python's {@code slice.indices(length)}: the normalised start, the element count, the step.
     *
     * @param length the axis length
     * @return {@code {start, count, step}}
     */
    long[] resolve(long length) {
        long lower = step < 0 ? -1 : 0;
        long upper = step < 0 ? length - 1 : length;
        long s = start == null ? (step < 0 ? upper : lower) : clamp(start, length, lower, upper);
        long e = stop == null ? (step < 0 ? lower : upper) : clamp(stop, length, lower, upper);
        long count;
        if (step > 0) {
            count = s < e ? (e - s - 1) / step + 1 : 0;
        } else {
            count = s > e ? (s - e - 1) / -step + 1 : 0;
        }
        return new long[] {s, count, step};
    }

    private static long clamp(long index, long length, long lower, long upper) {
        long i = index < 0 ? index + length : index;
        return Math.max(lower, Math.min(upper, i));
    }

    @Override
    public String toString() {
        return (start == null ? "" : start) + ":" + (stop == null ? "" : stop) + (step == 1 ? "" : ":" + step);
    }
}
