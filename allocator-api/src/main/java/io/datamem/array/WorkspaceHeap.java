package io.datamem.array;

import io.datamem.DataMemAllocator;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * One thread's memory of one {@link Workspace}: a region reserved from the upstream, a bump pointer
 * into it, and the chunks a cycle needed beyond it. Scopes are marks on the bump pointer (a nested
 * scope starts where its parent is, and gives back what it bumped when it ends); a cycle that
 * outgrew the region reserves a region that fits it when the outermost scope ends, so from the
 * second cycle on a steady workload allocates from one block with no call to the upstream.
 * Confined to its thread; the figures it publishes are read by others through plain volatile fields.
 */
final class WorkspaceHeap {

    final Workspace workspace;
    final Thread thread;
    private final DataMemAllocator upstream;
    private final long alignment;

    // The region: [base, base + size); the bump pointer, as an offset into it
    private long base;
    private long size;
    private long used;
    /** Chunks from the upstream beyond the region, this outermost cycle's: {address, byteSize} pairs. */
    private final List<long[]> spills = new ArrayList<>();
    /** Bytes bumped since the outermost scope opened, the spills included. */
    private long cycleBytes;
    private int depth;

    // Published for figures()
    volatile long lastCycleBytes;
    volatile long largestCycleBytes;
    volatile long cycles;
    volatile long spillCount;
    volatile long currentBytes;

    WorkspaceHeap(Workspace workspace, DataMemAllocator upstream, long alignment) {
        this.workspace = workspace;
        this.thread = Thread.currentThread();
        this.upstream = upstream;
        this.alignment = alignment;
    }

    long regionBytes() {
        return size;
    }

    /** A scope opens: the bump pointer to give back to when it ends. */
    long mark() {
        depth++;
        return used;
    }

    /**
     * {@code byteSize} bytes, aligned to the upstream's alignment: bumped in the region, or a chunk
     * from the upstream when the region is full.
     *
     * @return the block, or NULL if the upstream refused a chunk
     */
    MemorySegment bump(long byteSize) {
        long need = Math.max(byteSize, 1);
        long at = (used + alignment - 1) & -alignment;
        long end = at + need;
        if (end <= size && end >= at) {
            used = end;
            cycleBytes += end - at;
            currentBytes = cycleBytes;
            return MemorySegment.ofAddress(base + at);
        }
        return spill(need);
    }

    private MemorySegment spill(long need) {
        MemorySegment chunk = upstream.malloc(need);
        if (chunk.address() == 0) {
            return chunk;
        }
        spills.add(new long[] {chunk.address(), need});
        spillCount = spillCount + 1;
        cycleBytes += need;
        currentBytes = cycleBytes;
        return chunk;
    }

    /**
     * Gives back {@code [address, address + byteSize)} at once if it is the last block bumped in the
     * region (a temporary closed right away: a loop that makes and closes one never grows its
     * scope); otherwise it goes back when its scope ends. Only ever called for a block of a scope
     * still open on this thread, whose array (and its views) is closed.
     */
    void release(long address, long byteSize) {
        long at = address - base;
        if (at >= 0 && at < size && at + Math.max(byteSize, 1) == used) {
            used = at;
            cycleBytes -= Math.max(byteSize, 1);
            currentBytes = cycleBytes;
        }
    }

    /**
     * A scope ends: the bump pointer goes back to {@code mark}. The outermost scope also gives the
     * spills back, and reserves a region that fits the cycle it ends if this one did not.
     */
    void reset(long mark) {
        used = mark;
        if (--depth > 0) {
            return;
        }
        long bytes = cycleBytes;
        for (long[] s : spills) {
            upstream.free(MemorySegment.ofAddress(s[0]), s[1]);
        }
        boolean outgrown = !spills.isEmpty();
        spills.clear();
        if (outgrown) {
            grow(bytes);
        }
        cycleBytes = 0;
        currentBytes = 0;
        lastCycleBytes = bytes;
        if (bytes > largestCycleBytes) {
            largestCycleBytes = bytes;
        }
        cycles = cycles + 1;
    }

    /** Replaces the region by one of at least {@code bytes} (the growth policy's size), between cycles. */
    private void grow(long bytes) {
        long wanted = workspace.options().nextRegionByteSize(size, bytes);
        MemorySegment region = upstream.malloc(wanted);
        if (region.address() == 0) {
            return;   // keep the old region: the next cycle spills again
        }
        freeRegion();
        base = region.address();
        size = wanted;
    }

    private void freeRegion() {
        if (size > 0) {
            upstream.free(MemorySegment.ofAddress(base), size);
        }
        base = 0;
        size = 0;
    }

    /** Reserves the initial region, if the options ask for one. */
    void reserve(long initialByteSize) {
        if (initialByteSize > 0) {
            MemorySegment region = upstream.malloc(initialByteSize);
            if (region.address() != 0) {
                base = region.address();
                size = initialByteSize;
            }
        }
    }

    /** Whether a scope of this workspace is open on this heap's thread. */
    boolean inScope() {
        return depth > 0;
    }

    /** Gives the region and any spills back: its thread has ended, or no scope of it is open. */
    void trim() {
        for (long[] s : spills) {
            upstream.free(MemorySegment.ofAddress(s[0]), s[1]);
        }
        spills.clear();
        freeRegion();
        workspace.forget(this);
    }
}
