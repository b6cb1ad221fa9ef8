package io.datamem.testing;

import io.datamem.DataMemAllocator;
import io.datamem.MemoryTraits;
import io.datamem.internal.Libc;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The sample handler of NEP 49 and NumPy's {@code test_mem_policy.py} ({@code secret_data_allocator}),
 * in Java: each block gets a 64-byte header in front of it recording {@code "originally allocated N"},
 * which {@code free} and {@code realloc} check. Where the C sample prints "uh-oh", this one records a
 * violation that tests assert on, and never passes a wrong pointer to libc.
 */
public final class Nep49SampleAllocator implements DataMemAllocator {

    /** The header size, as the sample's. */
    public static final int HEADER = 64;
    private static final String PREFIX = "originally allocated ";

    private final List<String> violations = new CopyOnWriteArrayList<>();
    private final AtomicLong liveBlocks = new AtomicLong();
    private final AtomicLong liveBytes = new AtomicLong();

    /** Creates the allocator. */
    public Nep49SampleAllocator() {
    }

    @Override
    public MemorySegment malloc(long byteSize) {
        checkSize(byteSize);
        MemorySegment real = Libc.malloc(byteSize + HEADER);
        return stamp(real, byteSize, "");
    }

    @Override
    public MemorySegment calloc(long count, long elementByteSize) {
        if (count < 0 || elementByteSize < 0) {
            throw new IllegalArgumentException("count: " + count + ", elementByteSize: " + elementByteSize
                    + " (expected: >= 0)");
        }
        long hi = Math.multiplyHigh(count, elementByteSize);
        long size = count * elementByteSize;
        if (hi != 0 || size < 0 || size > MAX_BYTE_SIZE) {
            return MemorySegment.NULL;
        }
        MemorySegment real = Libc.calloc(1, size + HEADER);
        return stamp(real, size, " via zero");
    }

    @Override
    public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        checkSize(oldByteSize);
        checkSize(newByteSize);
        if (ptr.address() == 0) {
            return stamp(Libc.malloc(newByteSize + HEADER), newByteSize, "  via realloc");
        }
        MemorySegment real = header(ptr);
        long recorded = recordedSize(real);
        if (recorded < 0) {
            violations.add("unmatched realloc: no appropriate prefix at 0x" + Long.toHexString(ptr.address()));
            return MemorySegment.NULL;
        }
        if (recorded != oldByteSize) {
            violations.add("unmatched realloc(ptr, " + oldByteSize + ") but allocated " + recorded);
        }
        MemorySegment moved = Libc.realloc(real, newByteSize + HEADER);
        if (moved.address() == 0) {
            return MemorySegment.NULL;
        }
        liveBlocks.decrementAndGet();
        liveBytes.addAndGet(-recorded);
        return stamp(moved, newByteSize, "  via realloc");
    }

    @Override
    public void free(MemorySegment ptr, long byteSize) {
        if (byteSize < 0) {
            throw new IllegalArgumentException("byteSize: " + byteSize + " (expected: >= 0)");
        }
        if (ptr.address() == 0) {
            return;
        }
        MemorySegment real = header(ptr);
        long recorded = recordedSize(real);
        if (recorded < 0) {
            // The C sample crashes the runtime on purpose here; we record and leak instead.
            violations.add("unmatched free: no appropriate prefix at 0x" + Long.toHexString(ptr.address()));
            return;
        }
        if (recorded != byteSize) {
            violations.add("unmatched free(ptr, " + byteSize + ") but allocated " + recorded);
        }
        real.fill((byte) 0); // erase the prefix so a stale pointer is not taken for a live block
        liveBlocks.decrementAndGet();
        liveBytes.addAndGet(-recorded);
        Libc.free(real);
    }

    @Override
    public MemoryTraits traits() {
        return MemoryTraits.host(16); // glibc's 16 + a 64-byte header
    }

    /**
     * The mismatches seen so far.
     *
     * @return the violation messages
     */
    public List<String> violations() {
        return List.copyOf(violations);
    }

    /**
     * Blocks allocated and not freed.
     *
     * @return the count
     */
    public long liveBlocks() {
        return liveBlocks.get();
    }

    /**
     * Bytes allocated and not freed.
     *
     * @return bytes
     */
    public long liveBytes() {
        return liveBytes.get();
    }

    /**
     * The text the header of a live block holds.
     *
     * @param ptr a block from this allocator
     * @return for example {@code originally allocated 80 via zero}
     */
    public static String headerText(MemorySegment ptr) {
        return header(ptr).getString(0, StandardCharsets.US_ASCII);
    }

    private MemorySegment stamp(MemorySegment real, long size, String how) {
        if (real.address() == 0) {
            return MemorySegment.NULL;
        }
        MemorySegment h = real.reinterpret(HEADER);
        h.fill((byte) 0);
        h.setString(0, PREFIX + size + how, StandardCharsets.US_ASCII);
        liveBlocks.incrementAndGet();
        liveBytes.addAndGet(size);
        return MemorySegment.ofAddress(real.address() + HEADER);
    }

    private static MemorySegment header(MemorySegment ptr) {
        return MemorySegment.ofAddress(ptr.address() - HEADER).reinterpret(HEADER);
    }

    private static long recordedSize(MemorySegment real) {
        byte[] b = new byte[HEADER];
        MemorySegment.copy(real, ValueLayout.JAVA_BYTE, 0, b, 0, HEADER);
        String text = new String(b, StandardCharsets.US_ASCII);
        if (!text.startsWith(PREFIX)) {
            return -1;
        }
        int end = PREFIX.length();
        while (end < text.length() && Character.isDigit(text.charAt(end))) {
            end++;
        }
        return Long.parseLong(text.substring(PREFIX.length(), end)); // atoi(real + 20)
    }

    private static void checkSize(long byteSize) {
        if (byteSize < 0 || byteSize > MAX_BYTE_SIZE) {
            throw new IllegalArgumentException("byteSize: " + byteSize + " (expected: >= 0 and <= " + MAX_BYTE_SIZE
                    + ")");
        }
    }
}
