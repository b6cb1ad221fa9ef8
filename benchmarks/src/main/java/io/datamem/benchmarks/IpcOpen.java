package io.datamem.benchmarks;

import io.datamem.DataMemAllocator;
import io.datamem.impl.shared.ImportedMemory;
import io.datamem.impl.shared.IpcHandle;
import io.datamem.impl.shared.SharedMemory;
import io.datamem.impl.shared.SharedMemoryAllocator;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

/**
 * What shared memory's IPC handles cost (goal: a cached open at most 1 µs):
 * <ul>
 *   <li>{@code handleOf}: the exporter's handle of a block (the mapping found by address, its
 *       handle cached);</li>
 *   <li>{@code openCached}: an open and close of a handle whose mapping is already mapped here
 *       (another lease holds it), reading the block's address: a reference counted, no system
 *       call;</li>
 *   <li>{@code openCachedSegment}: the same, reading a byte through the lease's segment (which
 *       is bound to the imported mapping, not to the lease: no arena per open);</li>
 *   <li>{@code openCold}: an open and close with nothing cached: {@code pidfd_open},
 *       {@code pidfd_getfd}, the checks (readlink, fstat, seals, size), {@code mmap}, then
 *       {@code munmap};</li>
 *   <li>{@code allocateFree}: a {@code shared} block's {@code malloc} and {@code free} (memfd,
 *       seals, {@code mmap}, {@code munmap}, {@code close}).</li>
 * </ul>
 * The importer is this process (pidfd_getfd of its own descriptor): the system calls are those of
 * a second process, without a second process's scheduling noise.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class IpcOpen {

    /** The block size in bytes. */
    @Param({"65536"})
    public long byteSize;

    private DataMemAllocator allocator;
    private MemorySegment block;
    private MemorySegment coldBlock;
    private IpcHandle handle;
    private IpcHandle coldHandle;
    private ImportedMemory holder;

    /** Creates the state (JMH does). */
    public IpcOpen() {
    }

    /** Allocates the blocks and keeps one lease open so that {@link #handle}'s mapping stays cached. */
    @Setup(Level.Trial)
    public void setUp() {
        allocator = SharedMemoryAllocator.of();
        block = allocator.malloc(byteSize).reinterpret(byteSize);
        coldBlock = allocator.malloc(byteSize).reinterpret(byteSize);
        handle = SharedMemory.handleOf(block);
        coldHandle = SharedMemory.handleOf(coldBlock);
        holder = SharedMemory.open(handle);
    }

    /** Closes the lease and frees the blocks. */
    @TearDown(Level.Trial)
    public void tearDown() {
        holder.close();
        allocator.free(block, byteSize);
        allocator.free(coldBlock, byteSize);
    }

    /**
     * The exporter's handle of a block.
     *
     * @return the handle
     */
    @Benchmark
    public IpcHandle handleOf() {
        return SharedMemory.handleOf(block);
    }

    /**
     * A cached open and close.
     *
     * @return the block's address here
     */
    @Benchmark
    public long openCached() {
        try (ImportedMemory m = SharedMemory.open(handle)) {
            return m.address();
        }
    }

    /**
     * A cached open and close, with the lease's checked segment.
     *
     * @return the first byte
     */
    @Benchmark
    public byte openCachedSegment() {
        try (ImportedMemory m = SharedMemory.open(handle)) {
            return m.segment().get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0);
        }
    }

    /**
     * An open and close with nothing cached: the mapping is taken, checked, mapped and unmapped.
     *
     * @return the block's address here
     */
    @Benchmark
    public long openCold() {
        try (ImportedMemory m = SharedMemory.open(coldHandle)) {
            return m.address();
        }
    }

    /**
     * A shared block's allocation and free.
     *
     * @return the block's address
     */
    @Benchmark
    public long allocateFree() {
        MemorySegment b = allocator.malloc(byteSize);
        allocator.free(b, byteSize);
        return b.address();
    }
}
