package io.datamem.impl;

import io.datamem.DataMemAllocator;
import io.datamem.MemoryTraits;

import java.lang.foreign.MemorySegment;

/**
 * An allocator that wraps another, its upstream: the common shape of every datamem adaptor, so
 * that a stack of them can be walked ({@link AllocatorStack#find}).
 *
 * <p>Rules every adaptor follows: the upstream is given first to its factory;
 * {@code free} is forwarded with exactly the size it was given; a reservation made before calling
 * the upstream is rolled back when the upstream returns {@code NULL}, so a failed allocation leaves
 * every figure as it was; traits are the upstream's unless the adaptor changes them.
 *
 * <p>To write one, extend {@link ForwardingAllocator}, which holds the upstream and forwards every
 * call, and override only what the adaptor changes.
 */
public interface AllocatorAdaptor extends DataMemAllocator {

    /**
     * The wrapped allocator.
     *
     * @return the upstream, never null
     */
    DataMemAllocator upstream();

    /**
     * The upstream's traits: an adaptor does not change what a block is.
     *
     * @return {@code upstream().traits()}
     */
    @Override
    default MemoryTraits traits() {
        return upstream().traits();
    }

    /**
     * The upstream's traits of a block.
     *
     * @param ptr a block this allocator returned and has not freed
     * @return {@code upstream().traitsOf(ptr)}
     */
    @Override
    default MemoryTraits traitsOf(MemorySegment ptr) {
        return upstream().traitsOf(ptr);
    }
}
