package io.datamem.ucx;

import io.datamem.DataMemAllocator;

import java.lang.foreign.MemorySegment;

/** Argument checks and the moving realloc shared by the allocator and the adaptor. */
final class Sizes {

    private Sizes() {
    }

    static long byteSize(String what, long byteSize) {
        if (byteSize < 0 || byteSize > DataMemAllocator.MAX_BYTE_SIZE) {
            throw new IllegalArgumentException(what + ": " + byteSize + " (expected: 0.."
                    + DataMemAllocator.MAX_BYTE_SIZE + ")");
        }
        return byteSize;
    }

    static long product(long count, long elementByteSize) {
        if (count < 0) {
            throw new IllegalArgumentException("count: " + count + " (expected: >= 0)");
        }
        if (elementByteSize < 0) {
            throw new IllegalArgumentException("elementByteSize: " + elementByteSize + " (expected: >= 0)");
        }
        try {
            return Math.multiplyExact(count, elementByteSize);
        } catch (ArithmeticException e) {
            return -1;
        }
    }

    /** Throws {@link IllegalArgumentException} unless a pointer is a live block of its size. */
    interface LiveCheck {
        void check(MemorySegment ptr, long byteSize);
    }

    /**
     * A realloc that allocates a new block through {@code a}, copies, and frees the old one: the
     * allocator and the adaptor both register blocks whole, so neither resizes in place. The old
     * block is checked before anything is read from it, and the new one is freed if the old one's
     * free fails, so a foreign or wrong pointer leaks nothing and reads nothing.
     */
    static MemorySegment reallocByCopy(DataMemAllocator a, LiveCheck live, MemorySegment ptr, long oldByteSize,
                                       long newByteSize) {
        byteSize("oldByteSize", oldByteSize);
        byteSize("newByteSize", newByteSize);
        if (ptr == null || ptr.equals(MemorySegment.NULL)) {
            return a.malloc(newByteSize);
        }
        live.check(ptr, oldByteSize);
        MemorySegment fresh = a.malloc(newByteSize);
        if (fresh.equals(MemorySegment.NULL)) {
            return MemorySegment.NULL;
        }
        long n = Math.min(oldByteSize, newByteSize);
        if (n > 0) {
            MemorySegment.copy(ptr.reinterpret(n), 0, fresh.reinterpret(n), 0, n);
        }
        try {
            a.free(ptr, oldByteSize);
        } catch (RuntimeException | Error e) {
            a.free(fresh, newByteSize);
            throw e;
        }
        return fresh;
    }
}
