package io.datamem.impl;

import io.datamem.DataMemAllocator;
import io.datamem.MemoryTraits;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * An adaptor that forwards every call to its upstream unchanged: the base to extend, overriding
 * only what the adaptor changes. It holds the upstream ({@link #upstream()}, never null) and
 * forwards {@code malloc}, {@code calloc}, {@code realloc} and {@code free} (with exactly the
 * arguments given) and {@code traits}, {@code traitsOf}.
 *
 * <p>A subclass follows the rules of {@link AllocatorAdaptor}: a reservation made before calling
 * the upstream is rolled back when it returns {@code NULL}; {@code free} reaches the upstream with
 * the size it was given.
 */
public abstract class ForwardingAllocator implements AllocatorAdaptor {

    private final DataMemAllocator upstream;

    /**
     * Wraps an upstream.
     *
     * @param upstream the allocator every call goes to
     * @throws NullPointerException if {@code upstream} is null
     */
    protected ForwardingAllocator(DataMemAllocator upstream) {
        this.upstream = Objects.requireNonNull(upstream, "upstream");
    }

    @Override
    public final DataMemAllocator upstream() {
        return upstream;
    }

    @Override
    public MemorySegment malloc(long byteSize) {
        return upstream.malloc(byteSize);
    }

    @Override
    public MemorySegment calloc(long count, long elementByteSize) {
        return upstream.calloc(count, elementByteSize);
    }

    @Override
    public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        return upstream.realloc(ptr, oldByteSize, newByteSize);
    }

    @Override
    public void free(MemorySegment ptr, long byteSize) {
        upstream.free(ptr, byteSize);
    }

    @Override
    public MemoryTraits traits() {
        return upstream.traits();
    }

    @Override
    public MemoryTraits traitsOf(MemorySegment ptr) {
        return upstream.traitsOf(ptr);
    }

    /**
     * The class name and the upstream.
     *
     * @return for example {@code LimitingAdaptor[LibcAllocator]}
     */
    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + upstream + "]";
    }
}
