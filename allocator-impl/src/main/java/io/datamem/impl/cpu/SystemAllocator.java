package io.datamem.impl.cpu;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.MemoryTraits;

import java.lang.foreign.MemorySegment;

/**
 * The C library's {@code malloc}, {@code calloc}, {@code realloc} and {@code free}, through FFM
 * downcalls ({@code malloc}, {@code calloc} and {@code free} linked as critical functions). Blocks
 * are aligned to 16 bytes. This is the allocator of the built-in {@code default_allocator}
 * handler, offered here as a leaf for composition.
 *
 * <p>{@code realloc} to size 0 keeps a unique block (C's {@code realloc(p, 0)} would free it).
 * Thread-safe.
 */
public final class SystemAllocator implements DataMemAllocator {

    private static final SystemAllocator INSTANCE = new SystemAllocator();
    private static final DataMemAllocator LIBC = DataMem.builtinDefault().allocator();

    private SystemAllocator() {
    }

    /**
     * The allocator.
     *
     * @return the single instance
     */
    public static SystemAllocator instance() {
        return INSTANCE;
    }

    @Override
    public MemorySegment malloc(long byteSize) {
        return LIBC.malloc(byteSize);
    }

    @Override
    public MemorySegment calloc(long count, long elementByteSize) {
        return LIBC.calloc(count, elementByteSize);
    }

    @Override
    public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        return LIBC.realloc(ptr, oldByteSize, newByteSize);
    }

    @Override
    public void free(MemorySegment ptr, long byteSize) {
        LIBC.free(ptr, byteSize);
    }

    @Override
    public MemoryTraits traits() {
        return LIBC.traits();
    }

    @Override
    public String toString() {
        return "SystemAllocator";
    }
}
