package io.datamem.ucx;

import io.datamem.DataMemAllocator;

/** Argument checks shared by the allocator and the adaptor. */
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
}
