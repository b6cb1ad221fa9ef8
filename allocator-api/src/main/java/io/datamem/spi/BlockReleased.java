package io.datamem.spi;

/**
 * Implemented by an exception an allocator throws from {@code free} or {@code realloc} to say
 * whether the block is gone despite the exception. A checking allocator (a guard that finds an
 * overrun while freeing) may free the block before throwing; callers above it (adaptors that
 * account, arrays that own the block) then must not free it again. When an exception does not
 * implement this interface, the block is as it was before the call.
 */
public interface BlockReleased {

    /**
     * Whether the block was freed before this exception was thrown.
     *
     * @return true if the block is gone, false if the call changed nothing
     */
    boolean blockReleased();

    /**
     * Whether a throwable says its block was freed.
     *
     * @param t a throwable from {@code free} or {@code realloc}, or null
     * @return true if {@code t} implements this interface and its block was freed
     */
    static boolean by(Throwable t) {
        return t instanceof BlockReleased b && b.blockReleased();
    }
}
