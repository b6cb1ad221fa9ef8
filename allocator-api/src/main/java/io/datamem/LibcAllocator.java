package io.datamem;

import io.datamem.internal.Checks;
import io.datamem.internal.Libc;

import java.lang.foreign.MemorySegment;

/**
 * The built-in default allocator, {@code default_allocator}: the C library's {@code malloc},
 * {@code calloc}, {@code realloc} and {@code free}, as NumPy's default handler. Blocks are aligned
 * to 16 bytes (glibc on 64-bit platforms).
 */
final class LibcAllocator implements DataMemAllocator {

    /** The one instance. */
    static final LibcAllocator INSTANCE = new LibcAllocator();

    private static final MemoryTraits TRAITS = MemoryTraits.host(16);

    private LibcAllocator() {
    }

    @Override
    public MemorySegment malloc(long byteSize) {
        return Libc.malloc(Checks.byteSize("byteSize", byteSize));
    }

    @Override
    public MemorySegment calloc(long count, long elementByteSize) {
        if (Checks.callocByteSize(count, elementByteSize) < 0) {
            return MemorySegment.NULL;
        }
        return Libc.calloc(count, elementByteSize);
    }

    @Override
    public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        Checks.byteSize("oldByteSize", oldByteSize);
        Checks.byteSize("newByteSize", newByteSize);
        // glibc's realloc(p, 0) frees p and returns NULL; keep a unique block instead.
        return Libc.realloc(ptr, Math.max(newByteSize, 1));
    }

    @Override
    public void free(MemorySegment ptr, long byteSize) {
        Checks.notNegative("byteSize", byteSize);
        Libc.free(ptr);
    }

    @Override
    public MemoryTraits traits() {
        return TRAITS;
    }

    @Override
    public String toString() {
        return "LibcAllocator";
    }
}
