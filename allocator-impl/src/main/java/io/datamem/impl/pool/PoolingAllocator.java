package io.datamem.impl.pool;

import io.datamem.DataMemAllocator;
import io.datamem.impl.snapshot.LayerSnapshot;
import io.datamem.impl.snapshot.SnapshotSource;

/**
 * A pool in front of any allocator: blocks of a size class are carved from <em>slabs</em> the
 * upstream allocates, owned by per-thread heaps and a shared depot, and handed out again
 * without calling the upstream. It pays most where the upstream is slow: page-aligned, huge-page or
 * pinned memory, where one upstream allocation can take microseconds to milliseconds.
 *
 * <h2>Size classes and alignment</h2>
 * Requests up to the pool's {@code max} option (16 MiB by default) are rounded up to a size
 * class. Classes start at 16 bytes whatever the upstream's alignment {@code A}: below {@code A} they are the powers of
 * two (16, 32, ... {@code A/2}), each block aligned to its class size; from {@code A} up they are
 * multiples of {@code A} up to four times it, then four classes per power of two (at most 25%
 * rounding waste), each a multiple of {@code A}. So a block of {@code n} bytes is aligned to
 * {@code min(A, n rounded up to a power of two, at least 16)} ({@link #byteAlignmentOf(long)}), and
 * the pool's {@link #traits() traits} state what every block gets: {@code min(A, 16)}. Larger
 * requests go straight to the upstream, with its alignment. Memory kind and device are the
 * upstream's.
 *
 * <h2>Slabs and runs</h2>
 * A slab holds up to 64 blocks of one class (the {@code slab} option, 64 KiB by default, divided by
 * the class size). Slabs of a class are carved from <em>runs</em>: one upstream allocation of at least the
 * slab size option, the upstream's alignment and its page size, so that small blocks share one
 * upstream allocation even when each upstream allocation takes a whole huge page. A run goes back
 * to the upstream when all its slabs are free and released.
 *
 * <h2>Safety</h2>
 * Every {@code free} and {@code realloc} is checked against the pool's own records, not against
 * bytes in the block: a pointer the pool did not hand out, a size of another class than the block
 * was allocated with, an interior pointer, and a second free of the same block each throw
 * {@link IllegalArgumentException} naming the pool, the address and the sizes, and leave the pool
 * unchanged. Blocks the upstream allocated directly (above the {@code max} option) are
 * recorded in a table of live blocks too, so a foreign pointer, a double free or a wrong size of
 * one is refused the same way and never reaches the upstream. A block is never handed out twice
 * while the pool's records say it is live. One case is found only later: two frees of the same
 * block made at the same moment from two threads may both pass their checks; the owner then finds
 * the second when it collects the remote frees, ignores it, logs it and counts it in
 * {@link LayerSnapshot.Pool#racingDoubleFrees()}. As in every allocator, a free of a block that has been
 * freed and handed out again cannot be told from a free of the new block: stack {@code +guard}
 * to catch those.
 *
 * <h2>Threads</h2>
 * The fast path is built as today's fastest allocators build theirs (mimalloc's per-thread heaps
 * with page-local free lists): each platform thread has a <em>heap</em> that owns slabs, one
 * current slab per class. A slab keeps its free blocks in a bitmap only its owning thread writes,
 * so a {@code malloc} and a {@code free} by the owning thread make no atomic read-modify-write and
 * take no lock. A block freed by another thread is set, atomically, in the slab's <em>remote</em>
 * bitmap, and the slab is pushed on its owner's remote stack (once, when its remote bitmap stops
 * being empty); the owner collects those blocks when its current slab runs out. A slab changes
 * owner only while every one of its blocks is free: an owner gives a slab that became wholly free
 * to the shared depot (keeping a few spares per class), and takes slabs from it, or carves new ones,
 * when it needs more. Virtual threads share one heap under a lock (a heap per virtual thread would
 * strand memory) and free like other threads do. The heaps of threads that have ended are
 * collected by {@link #trim()}, and now and then when the pool grows.
 *
 * <p>{@link #trim()} returns to the upstream every slab whose blocks are all free and that sits
 * in the depot, after giving the calling thread's wholly free slabs (and those of ended threads)
 * to the depot; other threads give theirs at their next slab change. The depot keeps a small
 * reserve of free slabs per class (128 KiB, at least one slab) and returns older ones at once, as
 * it does with every free slab beyond the {@code retain} option (1 GiB by default); a run whose slabs
 * are all returned goes back to the upstream. {@link #close()} trims and refuses further
 * allocations.
 *
 * <h2>Making one</h2>
 * By name: {@code DataMem.handler("pool(aligned:4096):max=1m,slab=128k,retain=64m")} ({@code max},
 * {@code slab} and {@code retain} are byte sizes such as {@code 64k} or {@code 1g}; each left out
 * keeps its default); the upstream is a handler name too, given by its provider.
 * {@code AllocatorStack.find(handler, PoolingAllocator.class)} finds the pool in a handler's
 * stack.
 *
 * <p>Thread-safe.
 */
public interface PoolingAllocator extends DataMemAllocator, AutoCloseable, SnapshotSource {

    /**
     * The alignment every block of a request of this size has: the upstream's alignment, or less
     * for requests below it, {@code min(A, byteSize rounded up to a power of two, at least 16)}.
     * Never less than {@link #traits() traits()}{@code .byteAlignment()}.
     *
     * @param byteSize the size of a request
     * @return the alignment in bytes
     * @throws IllegalArgumentException if {@code byteSize} is negative or above
     *                                  {@link #MAX_BYTE_SIZE}
     */
    long byteAlignmentOf(long byteSize);

    /**
     * The allocator slabs come from.
     *
     * @return the upstream
     */
    DataMemAllocator upstream();

    /**
     * The size classes, ascending.
     *
     * @return a copy of the class sizes in bytes
     */
    long[] classByteSizes();

    /**
     * Returns to the upstream every slab whose blocks are all free, after giving the depot the
     * wholly free slabs of the calling thread's heap, of the virtual threads' heap and of the heaps
     * of threads that have ended (with the blocks other threads freed in them). Other live threads
     * give theirs at their next change of slab; a later trim then returns them.
     */
    void trim();

    /**
     * Trims and refuses further allocations (they throw {@link IllegalStateException}). Blocks still
     * allocated stay valid and may be freed; their slabs return to the upstream at the next
     * {@link #trim()} once free.
     */
    @Override
    void close();

    /**
     * The pool's counters and what it holds now: what {@link #snapshot()} says of this layer. The
     * counters are read first, then the classes, runs and slabs under the locks the pool's slow path
     * takes to carve and release slabs (a thread that needs a new slab meanwhile waits for the read;
     * the fast path goes on), as {@link LayerSnapshot.Pool} states.
     *
     * @return the pool's figures, their {@code type} {@code PoolingAllocator}
     */
    LayerSnapshot.Pool statistics();
}
