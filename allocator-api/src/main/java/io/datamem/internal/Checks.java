package io.datamem.internal;

/**
 * Argument checks shared by allocators and arrays. Messages follow the
 * {@code "name: value (expected: ...)"} form.
 */
public final class Checks {

    /**
     * The largest byte size any allocation may ask for: 2^57, the address-space limit. The same
     * value as {@code io.datamem.DataMemAllocator.MAX_BYTE_SIZE}, which is defined as this
     * constant (this package depends on nothing of datamem's).
     */
    public static final long MAX_BYTE_SIZE = 1L << 57;

    private Checks() {
    }

    /**
     * Checks a byte size for an allocation.
     *
     * @param name     the parameter's name, for the message
     * @param byteSize the size
     * @return {@code byteSize}
     * @throws IllegalArgumentException if negative or above {@link #MAX_BYTE_SIZE}
     */
    public static long byteSize(String name, long byteSize) {
        if (Long.compareUnsigned(byteSize, MAX_BYTE_SIZE) > 0) {
            throw badByteSize(name, byteSize);
        }
        return byteSize;
    }

    private static IllegalArgumentException badByteSize(String name, long byteSize) {
        return new IllegalArgumentException(name + ": " + byteSize + " (expected: >= 0 and <= "
                + MAX_BYTE_SIZE + ", the 2^57-byte address-space limit)");
    }

    /**
     * Checks a non-negative count.
     *
     * @param name  the parameter's name
     * @param value the value
     * @return {@code value}
     * @throws IllegalArgumentException if negative
     */
    public static long notNegative(String name, long value) {
        if (value < 0) {
            throw new IllegalArgumentException(name + ": " + value + " (expected: >= 0)");
        }
        return value;
    }

    /**
     * Checks an alignment.
     *
     * @param name          the parameter's name
     * @param byteAlignment the alignment
     * @return {@code byteAlignment}
     * @throws IllegalArgumentException if not a positive power of two
     */
    public static long powerOfTwo(String name, long byteAlignment) {
        if (byteAlignment <= 0 || (byteAlignment & (byteAlignment - 1)) != 0) {
            throw new IllegalArgumentException(name + ": " + byteAlignment + " (expected: a power of two)");
        }
        return byteAlignment;
    }

    /**
     * {@code count * elementByteSize}, or -1 when the product overflows a long or exceeds
     * {@link #MAX_BYTE_SIZE}.
     *
     * @param count           not negative
     * @param elementByteSize not negative
     * @return the product, or -1
     */
    public static long productOrMinusOne(long count, long elementByteSize) {
        long hi = Math.multiplyHigh(count, elementByteSize);
        long lo = count * elementByteSize;
        if (hi != 0 || lo < 0 || lo > MAX_BYTE_SIZE) {
            return -1;
        }
        return lo;
    }

    /**
     * Checks {@code calloc}'s arguments and gives the block's size.
     *
     * @param count           the number of elements
     * @param elementByteSize the size of each
     * @return {@code count * elementByteSize}, or -1 if it overflows or exceeds
     *         {@link #MAX_BYTE_SIZE} (calloc then returns NULL, as C's does)
     * @throws IllegalArgumentException if either argument is negative
     */
    public static long callocByteSize(long count, long elementByteSize) {
        notNegative("count", count);
        notNegative("elementByteSize", elementByteSize);
        return productOrMinusOne(count, elementByteSize);
    }

    /**
     * Rounds up to a multiple of a power of two.
     *
     * @param value     not negative, at most {@link #MAX_BYTE_SIZE}
     * @param powerOfTwo the multiple
     * @return the rounded value
     */
    public static long alignUp(long value, long powerOfTwo) {
        return (value + powerOfTwo - 1) & -powerOfTwo;
    }

    /**
     * The largest power of two dividing an address (its natural alignment), capped at 2^40.
     *
     * @param address an address
     * @return the alignment in bytes; 2^40 for address 0
     */
    public static long alignmentOf(long address) {
        return address == 0 ? 1L << 40 : Math.min(Long.lowestOneBit(address), 1L << 40);
    }
}
