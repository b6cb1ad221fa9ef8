package io.datamem.array;

import io.datamem.DataMemAllocator;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

/**
 * One thread's memory of one {@link Workspace}: a region reserved from the upstream, a bump pointer
 * into it, and the chunks a cycle needed beyond it. The region and the chunks are one address space
 * of offsets (each chunk starts where the one before ends), so a mark is one offset. Scopes are
 * marks on the bump pointer (a nested scope starts where its parent is, and gives back what it
 * bumped when it ends); a chunk is at least {@value #MIN_CHUNK} bytes and at least all the memory
 * before it, so a cycle of N bytes takes O(log N) chunks. A cycle that outgrew the region reserves a
 * region that fits its peak when the outermost scope ends, so from the second cycle on a steady
 * workload allocates from one block with no call to the upstream. Confined to its thread; the
 * figures it publishes are read by others through volatile fields, and the bytes in use through an
 * opaque one (no fence on the bump path).
 */
final class WorkspaceHeap {

    /** The least bytes of a chunk beyond the region. */
    static final long MIN_CHUNK = 64 * 1024;

    final Workspace workspace;
    final Thread thread;
    final ThreadHome home;
    private final DataMemAllocator upstream;
    private final long alignment;

    // The chunks: chunk 0 is the region when there is one; chunk i covers offsets
    // [start[i], start[i] + size[i]) at address base[i]
    private long[] base = new long[4];
    private long[] size = new long[4];
    private long[] start = new long[4];
    private int chunks;
    /** Whether chunk 0 is the region (kept between cycles) rather than a spill. */
    private boolean hasRegion;
    /** The chunk bumped now, and the bump pointer as an offset: start[cur] <= used <= start[cur] + size[cur]. */
    private int cur;
    private long used;
    /** Bytes in use in this outermost cycle (alignment padding included), and their peak. */
    private long cycleBytes;
    private long cyclePeak;
    // The marks of the open scopes, innermost last
    private long[] markUsed = new long[4];
    private long[] markBytes = new long[4];
    private int[] markCur = new int[4];
    private int depth;

    // Published for figures()
    volatile long lastCycleBytes;
    volatile long largestCycleBytes;
    volatile long cycles;
    volatile long spillCount;
    /** The bytes in use now, for other threads: written opaque (no fence on the bump path), read opaque. */
    private long currentBytes;
    private static final VarHandle CURRENT;

    static {
        try {
            CURRENT = MethodHandles.lookup().findVarHandle(WorkspaceHeap.class, "currentBytes", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The bytes this thread's open cycle has in use, as last published. */
    long currentBytes() {
        return (long) CURRENT.getOpaque(this);
    }

    private void publish(long bytes) {
        CURRENT.setOpaque(this, bytes);
    }

    WorkspaceHeap(Workspace workspace, ThreadHome home, DataMemAllocator upstream, long alignment) {
        this.workspace = workspace;
        this.home = home;
        this.thread = home.thread;
        this.upstream = upstream;
        this.alignment = alignment;
    }

    long regionBytes() {
        return hasRegion ? size[0] : 0;
    }

    /**
     * A scope opens: the bump pointer and the bytes in use are kept, to give back to when it ends.
     *
     * @return the mark, to pass to {@link #reset}
     */
    long mark() {
        if (depth == markUsed.length) {
            markUsed = Arrays.copyOf(markUsed, depth * 2);
            markBytes = Arrays.copyOf(markBytes, depth * 2);
            markCur = Arrays.copyOf(markCur, depth * 2);
        }
        markUsed[depth] = used;
        markBytes[depth] = cycleBytes;
        markCur[depth] = cur;
        return depth++;
    }

    /**
     * {@code byteSize} bytes, aligned to the workspace's alignment: bumped in the chunk bumped now,
     * or in the next one (a new chunk from the upstream when there is none).
     *
     * @return the block, or NULL if the upstream refused a chunk
     */
    MemorySegment bump(long byteSize) {
        long need = Math.max(byteSize, 1);
        if (cur < chunks) {
            long b = base[cur];
            long from = b + (used - start[cur]);
            long at = ((from + alignment - 1) & -alignment) - b;
            long end = at + need;
            if (end >= at && end <= size[cur]) {
                long before = used;
                used = start[cur] + end;
                took(used - before);
                return MemorySegment.ofAddress(b + at);
            }
        }
        return nextChunk(need);
    }

    private void took(long bytes) {
        long now = cycleBytes + bytes;
        cycleBytes = now;
        if (now > cyclePeak) {
            cyclePeak = now;
        }
        publish(now);
    }

    private MemorySegment nextChunk(long need) {
        // Chunks past this one, kept from earlier in the cycle (a nested scope gave them back)
        while (cur + 1 < chunks) {
            cur++;
            used = start[cur];
            long pad = ((base[cur] + alignment - 1) & -alignment) - base[cur];
            if (pad + need <= size[cur] && pad + need > 0) {
                used += pad + need;
                took(pad + need);
                return MemorySegment.ofAddress(base[cur] + pad);
            }
        }
        long end = chunks == 0 ? 0 : start[chunks - 1] + size[chunks - 1];
        long want = Math.max(need, Math.max(MIN_CHUNK, end));
        want = want > MAX_CHUNK ? Math.max(need, MAX_CHUNK) : (want + alignment - 1) & -alignment;
        MemorySegment chunk = upstream.malloc(want);
        if (chunk.address() == 0 && want > need) {
            want = need;
            chunk = upstream.malloc(want);
        }
        if (chunk.address() == 0) {
            return chunk;
        }
        long pad = ((chunk.address() + alignment - 1) & -alignment) - chunk.address();
        if (pad + need > want) {   // an upstream that aligns less than the workspace promises
            upstream.free(chunk, want);
            want = need + alignment;
            chunk = upstream.malloc(want);
            if (chunk.address() == 0) {
                return chunk;
            }
            pad = ((chunk.address() + alignment - 1) & -alignment) - chunk.address();
        }
        if (chunks == base.length) {
            base = Arrays.copyOf(base, chunks * 2);
            size = Arrays.copyOf(size, chunks * 2);
            start = Arrays.copyOf(start, chunks * 2);
        }
        base[chunks] = chunk.address();
        size[chunks] = want;
        start[chunks] = end;
        cur = chunks++;
        spillCount = spillCount + 1;
        used = end + pad + need;
        took(pad + need);
        return MemorySegment.ofAddress(chunk.address() + pad);
    }

    /** The largest chunk asked for beyond what one request needs. */
    private static final long MAX_CHUNK = 1L << 40;

    /**
     * Gives back {@code [address, address + byteSize)} at once if it is the last block bumped (a
     * temporary closed right away: a loop that makes and closes one never grows its scope), and
     * with it the blocks below it freed earlier out of order (up to {@value #FREED_KEPT} of them are
     * remembered: two temporaries closed in the order they were made both go back); otherwise it
     * goes back when its scope ends. Only ever called for a block of a scope still open on this
     * thread, whose array (and its views) is closed.
     */
    void release(long address, long byteSize) {
        if (cur >= chunks) {
            return;
        }
        long at = address - base[cur];
        long top = used - start[cur];
        long need = Math.max(byteSize, 1);
        if (at < 0 || at >= top || at + need > top) {
            return;   // in an earlier chunk: goes back with its scope
        }
        long floor = Math.max(start[cur], depth > 0 ? markUsed[depth - 1] : 0);
        long from = start[cur] + at;
        if (from < floor) {
            return;   // below the innermost scope's mark: not its to give back
        }
        if (at + need != top) {
            if (freedCount < FREED_KEPT) {   // not the top: remembered, for when the blocks above go
                freedStart[freedCount] = from;
                freedEnd[freedCount++] = from + need;
            }
            return;
        }
        long back = from;
        boolean more = true;
        while (more) {
            more = false;
            for (int i = 0; i < freedCount; i++) {
                // a block that ends at the new top, or short of it by padding only
                if (freedEnd[i] <= back && back - freedEnd[i] < alignment && freedStart[i] >= floor) {
                    back = freedStart[i];
                    freedStart[i] = freedStart[--freedCount];
                    freedEnd[i] = freedEnd[freedCount];
                    more = true;
                    break;
                }
            }
        }
        cycleBytes -= used - back;
        publish(cycleBytes);
        used = back;
    }

    /** The blocks freed out of order that {@link #release} remembers, at most. */
    static final int FREED_KEPT = 16;
    private final long[] freedStart = new long[FREED_KEPT];
    private final long[] freedEnd = new long[FREED_KEPT];
    private int freedCount;

    /** Forgets the remembered frees at or above {@code offset} (a scope gave them back). */
    private void forgetFreedFrom(long offset) {
        for (int i = freedCount - 1; i >= 0; i--) {
            if (freedStart[i] >= offset) {
                freedStart[i] = freedStart[--freedCount];
                freedEnd[i] = freedEnd[freedCount];
            }
        }
    }

    /**
     * A scope ends: the bump pointer goes back to its mark. The outermost scope also gives the spills
     * back, and reserves a region that fits the cycle's peak if the region did not.
     *
     * @throws IllegalStateException if {@code mark} is not the innermost open scope's
     */
    void reset(long mark) {
        if (mark != depth - 1) {
            throw new IllegalStateException("workspace scopes ended out of order (mark " + mark + ", depth " + depth
                    + ")");
        }
        depth--;
        used = markUsed[depth];
        forgetFreedFrom(used);
        cur = markCur[depth];
        cycleBytes = markBytes[depth];
        publish(cycleBytes);
        if (depth > 0) {
            return;
        }
        long bytes = cyclePeak;
        int kept = hasRegion ? 1 : 0;
        boolean outgrown = chunks > kept;
        for (int i = kept; i < chunks; i++) {
            upstream.free(MemorySegment.ofAddress(base[i]), size[i]);
        }
        chunks = kept;
        cur = 0;
        used = 0;
        if (outgrown) {
            grow(bytes);
        }
        cycleBytes = 0;
        cyclePeak = 0;
        publish(0);
        lastCycleBytes = bytes;
        if (bytes > largestCycleBytes) {
            largestCycleBytes = bytes;
        }
        cycles = cycles + 1;
    }

    /** Replaces the region by one of at least {@code bytes} (the growth policy's size), between cycles. */
    private void grow(long bytes) {
        long wanted = workspace.options().nextRegionByteSize(regionBytes(), bytes + alignment);
        MemorySegment region = upstream.malloc(wanted);
        if (region.address() == 0) {
            return;   // keep the old region: the next cycle spills again
        }
        freeRegion();
        setRegion(region.address(), wanted);
    }

    private void setRegion(long address, long byteSize) {
        base[0] = address;
        size[0] = byteSize;
        start[0] = 0;
        chunks = 1;
        hasRegion = true;
    }

    private void freeRegion() {
        if (hasRegion) {
            upstream.free(MemorySegment.ofAddress(base[0]), size[0]);
            hasRegion = false;
            chunks = 0;
        }
    }

    /** Reserves the initial region, if the options ask for one. */
    void reserve(long initialByteSize) {
        if (initialByteSize > 0) {
            MemorySegment region = upstream.malloc(initialByteSize);
            if (region.address() != 0) {
                setRegion(region.address(), initialByteSize);
            }
        }
    }

    /** Whether a scope of this workspace is open on this heap's thread. */
    boolean inScope() {
        return depth > 0;
    }

    /** Gives the region and any spills back: its thread has ended, or no scope of it is open. */
    void trim() {
        for (int i = hasRegion ? 1 : 0; i < chunks; i++) {
            upstream.free(MemorySegment.ofAddress(base[i]), size[i]);
        }
        chunks = hasRegion ? 1 : 0;
        freeRegion();
        cur = 0;
        used = 0;
        workspace.forget(this);
    }
}
