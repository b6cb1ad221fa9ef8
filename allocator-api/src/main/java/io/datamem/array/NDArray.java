package io.datamem.array;

import io.datamem.AllocationRefusal;
import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.DeviceInterchange;
import io.datamem.LimitExceededException;
import io.datamem.MemoryTraits;
import io.datamem.OutOfNativeMemoryException;
import io.datamem.buffer.BufferDeviceHook;
import io.datamem.buffer.BufferException;
import io.datamem.buffer.BufferExporter;
import io.datamem.buffer.BufferFlags;
import io.datamem.buffer.BufferRequest;
import io.datamem.buffer.BufferView;
import io.datamem.buffer.DeviceInfo;
import io.datamem.internal.Checks;
import io.datamem.internal.Strides;
import io.datamem.spi.BlockReleased;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.util.Arrays;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * An n-dimensional array over native memory, allocated through a {@link DataMemHandler}.
 *
 * <p>An owning array captures {@link DataMem#current()} once, when it is created, and reallocates
 * ({@link #resize}) and frees ({@link #close}) through that handler with the exact byte size it
 * allocated, whatever is bound or set as default by then. Views ({@link #slice}, {@link #reshape},
 * {@link #transpose}, {@link #select}, {@link #asReadOnly}) share their base's memory, keep their
 * base reachable, report their base's handler and do not own data.
 *
 * <p><b>Threads.</b> An array belongs to the thread that created it, as a segment of
 * {@link java.lang.foreign.Arena#ofConfined()} does: that thread reaches its elements, closes it in
 * nanoseconds and frees it at once. Before another thread reads or writes its elements, call
 * {@link #share()} once (from any thread): from then on every thread reaches them at the same speed,
 * and a close synchronises with every thread of the JVM, as closing a shared arena does (tens of
 * microseconds). {@link Parallel} shares the arrays its loop body captures and the arrays the body
 * creates; the element access of an unshared array from another thread throws
 * {@link WrongThreadException} saying so. Either way each element accessor is one bounds-checked
 * access whose checks the compiler moves out of loops, on every thread.
 *
 * <p>Memory is reached through {@link #segment()}, a {@link MemorySegment} that is bounds-checked
 * and lifetime-checked: once the array is closed (or resized), every segment and view over the old
 * memory throws {@link IllegalStateException} on access, instead of touching freed memory. An owning
 * array that becomes unreachable without being closed is freed as a {@link Cleaner} would free it
 * (through a phantom reference, by datamem's daemon thread {@code datamem-array-reaper}), logged as a
 * leak and counted in {@link #leakCount()}.
 *
 * <p>Strides are in bytes, as NumPy's. Element accessors take one index per axis; all elements are
 * read and written in native byte order. Arrays on memory the host cannot access (device memory)
 * have no host view: {@link #segment()} and element access throw
 * {@link UnsupportedOperationException}.
 *
 * <p>An array may be read-only ({@link #isReadOnly()}): a view made by {@link #asReadOnly()}, an
 * array over a read-only segment, or an imported DLPack tensor its producer marked read-only.
 * Writes to it throw {@link UnsupportedOperationException}, and its {@link #segment()} is
 * read-only.
 *
 * <p>Arrays export their memory through the buffer protocol ({@link #getBuffer(int)}, see
 * {@link io.datamem.buffer}); while a {@link BufferView} or a {@link #hold()} is held the owner
 * cannot be closed or resized.
 *
 * <p>Which handler allocated each new array can be logged: set the {@link System.Logger}
 * {@code io.datamem.array.handler} to {@code DEBUG} ({@code java.util.logging}'s {@code FINE})
 * before the first array is created, and each creation is logged with the handler's name, the
 * thread, and whether the handler came from a scoped binding or the process default. Off (the
 * default), the check costs nothing.
 *
 * <p>The class is sealed: its only subclass is datamem's own class for float64 arrays.
 */
public sealed class NDArray extends ArrayElements implements AutoCloseable, BufferExporter permits Float64Array {

    /** The most axes an array may have (NumPy's limit, and the buffer protocol's). */
    public static final int MAX_NDIM = BufferView.MAX_NDIM;

    static {
        io.datamem.internal.ArrayInternals.install(array -> ((NDArray) array).memory.nativeOnly());
        AccessProfile.prime();
    }

    /**
     * A view's base, which it keeps reachable (the owner's leak action would otherwise free the
     * memory under it); null for an array that is not a view.
     */
    final NDArray base;
    /**
     * The memory a view was made over ({@link #memory} becomes {@link ArrayMemory#CLOSED} once it is
     * closed); null for an array that is not a view.
     */
    final ArrayMemory over;

    /** An array over {@code memory}: a wrapped segment, or an array of a workspace scope. */
    NDArray(ArrayMemory memory, DType dtype, boolean readOnly, long origin, long[] shape, long[] strides) {
        super(dtype, readOnly, origin, shape, strides);
        this.memory = memory;
        this.base = null;
        this.over = null;
    }

    /** A view of {@code base} over {@code memory}. */
    NDArray(NDArray base, ArrayMemory memory, boolean readOnly, long origin, long[] shape, long[] strides) {
        super(base.dtype, readOnly, origin, shape, strides);
        this.memory = memory;
        this.base = base;
        this.over = memory;
    }

    /**
     * An owner of a block a handler allocated, belonging to the calling thread: its memory is made
     * here, since it is also the phantom reference to this array that frees a leaked block.
     */
    NDArray(DataMemHandler handler, long address, long allocatedByteSize, boolean hostAccessible, DType dtype,
            boolean readOnly, long byteOffset, long[] shape, long[] strides, ThreadHome home) {
        super(dtype, readOnly, address + byteOffset, shape, strides);
        this.memory = ArrayMemory.owned(this, handler, address, allocatedByteSize, hostAccessible, home);
        this.base = null;
        this.over = null;
    }

    // The factories every array is made by: float64 arrays are of their own class (Float64Array says why).

    private static NDArray overMemory(ArrayMemory memory, DType dtype, boolean readOnly, long origin, long[] shape,
                                      long[] strides) {
        return dtype == DType.FLOAT64 ? new Float64Array(memory, dtype, readOnly, origin, shape, strides)
                : new NDArray(memory, dtype, readOnly, origin, shape, strides);
    }

    private static NDArray viewOf(NDArray base, ArrayMemory memory, boolean readOnly, long origin, long[] shape,
                                  long[] strides) {
        return base.dtype == DType.FLOAT64 ? new Float64Array(base, memory, readOnly, origin, shape, strides)
                : new NDArray(base, memory, readOnly, origin, shape, strides);
    }

    private static NDArray owner(DataMemHandler handler, long address, long allocatedByteSize, boolean hostAccessible,
                                 DType dtype, boolean readOnly, long byteOffset, long[] shape, long[] strides,
                                 ThreadHome home) {
        return dtype == DType.FLOAT64
                ? new Float64Array(handler, address, allocatedByteSize, hostAccessible, dtype, readOnly, byteOffset,
                        shape, strides, home)
                : new NDArray(handler, address, allocatedByteSize, hostAccessible, dtype, readOnly, byteOffset, shape,
                        strides, home);
    }

    // ---------------------------------------------------------------------------------------------
    // Creation

    /**
     * A new array of uninitialised elements, allocated with {@code malloc} through
     * {@link DataMem#current()}.
     *
     * @param dtype the element type
     * @param shape the length of each axis (none for a 0-d array)
     * @return the array, which owns its memory and belongs to the calling thread
     * @throws NullPointerException        if an argument is null
     * @throws IllegalArgumentException    if a length is negative, there are more than
     *                                     {@value #MAX_NDIM} axes, or the byte size overflows or
     *                                     exceeds {@link DataMemAllocator#MAX_BYTE_SIZE}
     * @throws OutOfNativeMemoryException  if the handler's allocator returned NULL
     * @throws LimitExceededException      if a limiting adaptor of the handler refused the request
     * @throws IllegalStateException       if no handler is bound and the configured default cannot be
     *                                     resolved
     */
    public static NDArray empty(DType dtype, long... shape) {
        // The shape is checked (and copied, or shared) here, so that the caller's varargs array does not
        // escape: inlined into the caller, it need not be allocated at all
        return allocate(DataMem.current(), dtype, ArrayLayout.checkShape(shape), false);
    }

    /**
     * A new array of zeros, allocated with {@code calloc} through {@link DataMem#current()}.
     *
     * @param dtype the element type
     * @param shape the length of each axis
     * @return the array, which owns its memory and belongs to the calling thread
     * @throws NullPointerException       if an argument is null
     * @throws IllegalArgumentException   if a length is negative, there are more than
     *                                    {@value #MAX_NDIM} axes, or the byte size overflows or exceeds
     *                                    {@link DataMemAllocator#MAX_BYTE_SIZE}
     * @throws OutOfNativeMemoryException if the handler's allocator returned NULL
     * @throws LimitExceededException     if a limiting adaptor of the handler refused the request
     * @throws IllegalStateException      if no handler is bound and the configured default cannot be
     *                                    resolved
     */
    public static NDArray zeros(DType dtype, long... shape) {
        return allocate(DataMem.current(), dtype, ArrayLayout.checkShape(shape), true);
    }

    /** {@code s}: a checked shape of the array's own (see {@link ArrayLayout#checkShape}). */
    private static NDArray allocate(DataMemHandler handler, DType dtype, long[] s, boolean zeroed) {
        Objects.requireNonNull(dtype, "dtype");
        long count = ArrayLayout.elementCount(s);
        long byteSize = ArrayLayout.byteSizeOf(dtype, s, count);
        ThreadHome home = ThreadHome.mine();
        home.drain();
        DataMemAllocator allocator = handler.allocator();
        AllocationRefusal.clear();
        home.pendingScope = null;   // a workspace below sets it: the block belongs to that scope
        MemorySegment block = zeroed ? allocator.calloc(count, dtype.itemSize()) : allocator.malloc(byteSize);
        Workspace.Scope scope = home.pendingScope;
        home.pendingScope = null;
        if (block.address() == 0) {
            throw AllocationRefusal.failure(handler, byteSize, zeroed ? "calloc" : "malloc");
        }
        NDArray array;
        try {
            boolean host = allocator.traitsOf(block).hostAccessible();
            // s is this array's own copy (or a cached 1-axis shape), and C strides are never written in place
            long[] st = ArrayLayout.cStrides(dtype, s);
            array = scope == null ? owner(handler, block.address(), byteSize, host, dtype, false, 0, s, st, home)
                    : overMemory(ArrayMemory.inScope(handler, block.address(), byteSize, host, scope, home.thread),
                            dtype, false, block.address(), s, st);
        } catch (RuntimeException | Error e) {
            allocator.free(block, byteSize);
            throw e;
        }
        if (scope == null && Parallel.sharesNewArrays()) {
            array.memory.share(array, true);
        }
        if (HandlerTrace.ENABLED) {
            HandlerTrace.created(handler, dtype, s);
        } else if (HandlerTrace.WARN && !DataMem.isScoped()) {
            HandlerTrace.unbound(handler, dtype, s);
        }
        return array;
    }

    /**
     * An array that takes ownership of a block a handler allocated: closing (or collecting) the
     * array frees the block through {@code handler} with {@code allocatedByteSize}. This is how
     * foreign memory with a known deallocator (a DLPack deleter, say) becomes an array. It belongs
     * to the calling thread.
     *
     * @param handler           the handler whose allocator frees the block
     * @param block             the block's start (its size is ignored)
     * @param allocatedByteSize the size to pass to {@code free}
     * @param dtype             the element type
     * @param shape             the length of each axis
     * @param strides           the byte stride of each axis, or null for C order
     * @param byteOffset        bytes from {@code block} to element [0, ..., 0]
     * @return the owning array
     * @throws NullPointerException     if {@code handler}, {@code block}, {@code dtype} or
     *                                  {@code shape} is null
     * @throws IllegalArgumentException if {@code block} is a heap segment, or NULL while the shape
     *                                  has elements, {@code allocatedByteSize} is negative, the shape
     *                                  is invalid, {@code strides} has the wrong length, or an
     *                                  element would lie outside
     *                                  {@code [block, block + allocatedByteSize)}; ownership then
     *                                  stays with the caller
     */
    public static NDArray adopt(DataMemHandler handler, MemorySegment block, long allocatedByteSize, DType dtype,
                                long[] shape, long[] strides, long byteOffset) {
        return adopt(handler, block, allocatedByteSize, dtype, shape, strides, byteOffset, false);
    }

    /**
     * As {@link #adopt(DataMemHandler, MemorySegment, long, DType, long[], long[], long)}, and
     * read-only when {@code readOnly} is true: the owner and every view of it refuse writes and
     * writable exports. This is how an import of memory its producer marked read-only (DLPack's
     * {@code DLPACK_FLAG_BITMASK_READ_ONLY}) becomes an array.
     *
     * @param handler           the handler whose allocator frees the block
     * @param block             the block's start (its size is ignored)
     * @param allocatedByteSize the size to pass to {@code free}
     * @param dtype             the element type
     * @param shape             the length of each axis
     * @param strides           the byte stride of each axis, or null for C order
     * @param byteOffset        bytes from {@code block} to element [0, ..., 0]
     * @param readOnly          whether the array refuses writes
     * @return the owning array
     * @throws NullPointerException     if {@code handler}, {@code block}, {@code dtype} or
     *                                  {@code shape} is null
     * @throws IllegalArgumentException as for the method without {@code readOnly}; ownership then
     *                                  stays with the caller
     */
    public static NDArray adopt(DataMemHandler handler, MemorySegment block, long allocatedByteSize, DType dtype,
                                long[] shape, long[] strides, long byteOffset, boolean readOnly) {
        Objects.requireNonNull(handler, "handler");
        Objects.requireNonNull(block, "block");
        Objects.requireNonNull(dtype, "dtype");
        long[] s = ArrayLayout.checkShape(shape);
        long[] st = strides == null ? ArrayLayout.cStrides(dtype, s) : ArrayLayout.checkStrides(strides, s.length);
        if (!block.isNative()) {
            throw new IllegalArgumentException("block: a Java heap segment (expected: a native block that handler '"
                    + handler.name() + "' allocated)");
        }
        long count = ArrayLayout.elementCount(s);
        if (block.address() == 0 && count != 0) {   // no element, no memory: DLPack allows NULL
            throw new IllegalArgumentException("block: NULL for " + count + " element(s) (expected: a"
                    + " block that handler '" + handler.name() + "' allocated)");
        }
        if (allocatedByteSize < 0) {
            throw new IllegalArgumentException("allocatedByteSize: " + allocatedByteSize + " (expected: >= 0, the size"
                    + " handler '" + handler.name() + "' allocated)");
        }
        ArrayLayout.checkExtent(dtype, s, st, byteOffset, allocatedByteSize);
        boolean host = handler.allocator().traitsOf(block).hostAccessible();
        ThreadHome home = ThreadHome.mine();
        home.drain();
        return owner(handler, block.address(), allocatedByteSize, host, dtype, readOnly, byteOffset, s, st, home);
    }

    /**
     * An array over memory datamem does not own: no handler frees it ({@link #handler()} is null,
     * {@link #ownsData()} is false) and its lifetime is the segment's. A read-only segment makes a
     * read-only array.
     *
     * @param segment the memory, in C order
     * @param dtype   the element type
     * @param shape   the length of each axis
     * @return the array
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if the shape is invalid or needs more bytes than the segment has
     */
    public static NDArray wrap(MemorySegment segment, DType dtype, long... shape) {
        return wrap(segment, dtype, shape, null, 0);
    }

    /**
     * An array over memory datamem does not own, with explicit strides and offset. Its elements are
     * reached through {@code segment}, on the threads its scope allows; closing it (or one of its
     * views' bases) makes it and its views unusable without touching the memory.
     *
     * @param segment    the memory
     * @param dtype      the element type
     * @param shape      the length of each axis
     * @param strides    the byte stride of each axis, or null for C order
     * @param byteOffset bytes from the segment start to element [0, ..., 0]
     * @return the array
     * @throws NullPointerException     if {@code segment}, {@code dtype} or {@code shape} is null
     * @throws IllegalArgumentException if the shape or strides are invalid or an element lies outside
     *                                  the segment
     */
    public static NDArray wrap(MemorySegment segment, DType dtype, long[] shape, long[] strides, long byteOffset) {
        Objects.requireNonNull(segment, "segment");
        Objects.requireNonNull(dtype, "dtype");
        long[] s = ArrayLayout.checkShape(shape);
        long[] st = strides == null ? ArrayLayout.cStrides(dtype, s) : ArrayLayout.checkStrides(strides, s.length);
        ArrayLayout.checkExtent(dtype, s, st, byteOffset, segment.byteSize());
        ArrayMemory memory = ArrayMemory.foreign(segment, MemoryTraits.host(Checks.alignmentOf(segment.address())));
        return overMemory(memory, dtype, segment.isReadOnly(), byteOffset, s, st);
    }

    // ---------------------------------------------------------------------------------------------
    // Properties

    /** The memory this array was made over, also once it is closed. */
    ArrayMemory over() {
        return base != null ? over : memory;
    }

    /**
     * The handler that frees this array's memory: the one captured at creation. A view reports its
     * base's.
     *
     * @return the handler, or null for memory datamem does not own ({@link #wrap})
     */
    public DataMemHandler handler() {
        return over().handler;
    }

    /**
     * Whether this array owns its memory (frees it on close). False for views and wrapped memory.
     *
     * @return true for arrays made by {@link #empty}, {@link #zeros}, {@link #adopt} and copies
     */
    public boolean ownsData() {
        return base == null && over().handler != null;
    }

    /**
     * Whether this array refuses writes: element setters, {@code fill}, {@code copyFrom} and
     * {@code resize} throw, and {@link #segment()} is read-only. Buffer exports report it, and
     * refuse {@link BufferFlags#WRITABLE}; DLPack exports set {@code READ_ONLY}.
     *
     * @return true for read-only arrays
     */
    public boolean isReadOnly() {
        return readOnly;
    }

    /**
     * A read-only view of this array (NumPy's {@code flags.writeable = False} on a view): same
     * memory, shape and strides; it keeps this array reachable and does not own data.
     *
     * @return the read-only view
     * @throws IllegalStateException if the array is closed
     */
    public NDArray asReadOnly() {
        return view(origin, shape, strides, true);
    }

    /**
     * The array this view was made from.
     *
     * @return the base, or null for an array that is not a view
     */
    public NDArray base() {
        return base;
    }

    /**
     * What the allocator says about this array's memory (kind, device, alignment, page size).
     *
     * @return the traits of the block
     * @throws IllegalStateException if the array is closed (the block may be gone)
     */
    public MemoryTraits traits() {
        ArrayMemory m = over();
        if (m.handler != null) {
            m.checkLive(this);
        }
        return m.traits();
    }

    /**
     * The element type.
     *
     * @return the dtype
     */
    public DType dtype() {
        return dtype;
    }

    /**
     * The number of axes.
     *
     * @return ndim, 0 for a scalar array
     */
    public int ndim() {
        return shape.length;
    }

    /**
     * The length of each axis.
     *
     * @return a copy of the shape
     */
    public long[] shape() {
        return shape.clone();
    }

    /**
     * The byte stride of each axis.
     *
     * @return a copy of the strides
     */
    public long[] strides() {
        return strides.clone();
    }

    /**
     * The number of elements.
     *
     * @return the product of the shape
     */
    public long size() {
        return ArrayLayout.elementCount(shape);
    }

    /**
     * The bytes the elements occupy: {@code size() * dtype().itemSize()}.
     *
     * @return bytes
     */
    public long byteSize() {
        return size() * dtype.itemSize();
    }

    /**
     * Bytes from the start of the memory block to element [0, ..., 0].
     *
     * @return the byte offset
     */
    public long byteOffset() {
        ArrayMemory m = over();
        return m.handler != null ? origin - m.address : origin;
    }

    /**
     * The address of element [0, ..., 0], also for device memory.
     *
     * @return the address
     * @throws IllegalStateException         if the array {@linkplain #isClosed() is closed}
     * @throws UnsupportedOperationException if the array wraps a Java heap segment
     */
    public long address() {
        ArrayMemory m = memory;
        m.checkLive(this);
        if (m.handler == null) {
            if (!m.seg.isNative()) {
                throw new UnsupportedOperationException(this + " wraps a Java heap segment, which has no native"
                        + " address: copy it into native memory first (copy())");
            }
            return m.address + origin;
        }
        return origin;
    }

    /**
     * Whether the elements lie in C (row-major) order without gaps.
     *
     * @return true if C-contiguous
     */
    public boolean isCContiguous() {
        return ArrayLayout.isContiguous(dtype, shape, strides, false);
    }

    /**
     * Whether the elements lie in Fortran (column-major) order without gaps.
     *
     * @return true if F-contiguous
     */
    public boolean isFContiguous() {
        return ArrayLayout.isContiguous(dtype, shape, strides, true);
    }

    /**
     * Whether this array can no longer be used: {@link #close} was called on it, its memory was
     * freed (a view whose owner was closed), reallocated (a view made before its owner was
     * {@linkplain #resize resized}), or, for {@linkplain #wrap wrapped} memory, its segment's scope
     * is no longer alive. Every operation on such an array except this one, {@code close} and the
     * properties that describe its shape throws {@link IllegalStateException}.
     *
     * @return true if closed
     */
    public boolean isClosed() {
        return !memory.isLive();
    }

    /**
     * Shares this array's memory with every thread, and returns this array. Until then only the
     * thread that created the array reaches its elements (others get {@link WrongThreadException});
     * from then on every thread does, through one segment the JDK checks the way it checks a
     * segment of {@link java.lang.foreign.Arena#ofShared()}: a close of the memory then
     * synchronises with every thread of the JVM (tens of microseconds) before the block goes back,
     * so that no access is in progress. It applies to the memory: the owner and all its views.
     * Idempotent, and any thread may call it. {@link Parallel} calls it for the arrays its loops
     * capture or create. A resize hands the memory back to its owner thread, unshared.
     *
     * @return this array
     * @throws IllegalStateException if the array is closed, or {@linkplain #confined() confined}
     */
    public NDArray share() {
        memory.share(this);
        return this;
    }

    /**
     * Whether this array's memory is shared with every thread ({@link #share()}).
     *
     * @return true if shared
     */
    public boolean isShared() {
        return memory.isShared();
    }

    /**
     * Confines this array's memory strictly to the calling thread, the one it belongs to, and
     * returns this array: it can then never be {@linkplain #share() shared}, and
     * {@link #close()} and {@link #resize} are refused on other threads
     * ({@link WrongThreadException}). Every array already belongs to its creating thread until it
     * is shared; this makes sure it never leaves it.
     *
     * @return this array
     * @throws IllegalStateException if the array is closed, wraps memory datamem does not own (its
     *                               segment keeps its own scope), is shared, or belongs to another
     *                               thread
     */
    public NDArray confined() {
        memory.confine(this);
        return this;
    }

    /**
     * Whether this array's memory belongs to one thread, not shared: true from creation until
     * {@link #share()} (and for good after {@link #confined()}).
     *
     * @return true if confined to a thread
     */
    public boolean isConfined() {
        return memory.isConfined();
    }

    /**
     * Frees the memory of arrays that other threads closed (or that leaked) while this thread might
     * still have been inside an access to them. An array's elements are reached on the thread it
     * belongs to through a segment that is never closed; another thread closing the array cannot
     * know whether that thread is inside an access, so the array is closed at once but its block
     * waits for that thread, which frees it by itself, outside any access, the next time it creates
     * or closes an array. A thread that will not do either for a while (one about to block, say)
     * may call this to return that memory now. Cheap when nothing waits.
     *
     * @return how many blocks still wait for other threads
     */
    public static int reclaim() {
        ThreadHome.mine().drain();
        return ThreadHome.retiredCount();
    }

    /**
     * The number of owning arrays that became unreachable without being closed and were freed by the
     * cleaner, since the JVM started.
     *
     * @return the leak count
     */
    public static long leakCount() {
        return ArrayMemory.LEAKS.get();
    }

    // ---------------------------------------------------------------------------------------------
    // Memory access

    /**
     * The memory of this array's elements: a segment from the lowest to the highest byte any element
     * occupies, bounds-checked and valid until the array is closed or resized. For a C-contiguous
     * array it is exactly {@link #byteSize()} bytes. The segment may go to any thread: this
     * {@linkplain #share() shares} the array first (so its close then synchronises with every
     * thread, see there). A {@linkplain #confined() confined} array gives a segment confined to its
     * thread instead.
     *
     * @return the segment
     * @throws IllegalStateException         if the array {@linkplain #isClosed() is closed}, or is
     *                                       {@linkplain #confined() confined} to another thread
     * @throws UnsupportedOperationException if the memory is not host-accessible (device memory)
     * @throws WrongThreadException          if the array is confined to another thread
     */
    public MemorySegment segment() {
        MemorySegment whole = memory.userSegment(this);
        if (whole == null) {
            throw onDevice();
        }
        return ownRange(whole);
    }

    /** This array's range of {@code whole}, a segment over the whole block: read-only if the array is. */
    private MemorySegment ownRange(MemorySegment whole) {
        MemorySegment d = readOnly ? whole.asReadOnly() : whole;
        long start = byteOffset();
        if (size() == 0) {
            return d.asSlice(start, 0);
        }
        long lo = Strides.lowestByte(shape, strides);
        return d.asSlice(start + lo, Strides.highestByte(shape, strides) - lo + dtype.itemSize());
    }


    /**
     * A new owning C-contiguous copy, allocated through {@link DataMem#current()}; it belongs to the
     * calling thread.
     *
     * @return the copy
     * @throws OutOfNativeMemoryException    if the allocation fails
     * @throws LimitExceededException        if a limiting adaptor of the handler refused the request
     * @throws UnsupportedOperationException if the memory is on a device
     * @throws IllegalStateException         if the array is closed
     * @throws WrongThreadException          if the array belongs to another thread and is not shared
     */
    public NDArray copy() {
        return copyAs(shape);
    }

    private NDArray copyAs(long[] newShape) {
        hostData();
        NDArray out = empty(dtype, newShape);
        try {
            ArrayTransfer.transfer(this, out);
        } catch (RuntimeException | Error e) {
            out.close();
            throw e;
        }
        return out;
    }

    // ---------------------------------------------------------------------------------------------
    // Views

    /**
     * A view of a sub-range of each axis, with Python slice semantics. Axes without a slice are kept
     * whole.
     *
     * @param slices at most {@link #ndim()} slices, one per leading axis
     * @return the view
     * @throws NullPointerException     if a slice is null
     * @throws IllegalArgumentException if there are more slices than axes
     * @throws IllegalStateException    if the array is closed
     */
    public NDArray slice(Slice... slices) {
        checkLive();
        if (slices.length > shape.length) {
            throw new IllegalArgumentException("slices: " + slices.length + " (expected: at most " + shape.length
                    + ", one per axis)");
        }
        long[] s = shape.clone();
        long[] st = strides.clone();
        long off = origin;
        for (int i = 0; i < slices.length; i++) {
            long[] r = Objects.requireNonNull(slices[i], "slices[" + i + "]").resolve(shape[i]);
            s[i] = r[1];
            if (r[1] > 0) {
                off += r[0] * strides[i];
            }
            st[i] = strides[i] * r[2];
        }
        return view(off, s, st, readOnly);
    }

    /**
     * A view with one axis removed, at a fixed index (NumPy's {@code a[..., i, ...]}).
     *
     * @param axis  the axis
     * @param index the index along it (negative counts from the end)
     * @return the view, with one axis fewer
     * @throws IllegalArgumentException  if {@code axis} is out of range
     * @throws IndexOutOfBoundsException if {@code index} is out of range
     * @throws IllegalStateException     if the array is closed
     */
    public NDArray select(int axis, long index) {
        checkLive();
        ArrayLayout.checkAxis(shape, axis);
        long ix = index < 0 ? index + shape[axis] : index;
        if (ix < 0 || ix >= shape[axis]) {
            throw new IndexOutOfBoundsException("index " + index + " is out of bounds for axis " + axis + " with size "
                    + shape[axis]);
        }
        long[] s = new long[shape.length - 1];
        long[] st = new long[shape.length - 1];
        for (int i = 0, j = 0; i < shape.length; i++) {
            if (i != axis) {
                s[j] = shape[i];
                st[j++] = strides[i];
            }
        }
        return view(origin + ix * strides[axis], s, st, readOnly);
    }

    /**
     * An array with the same elements in another shape: a view when this array is C-contiguous,
     * otherwise a new owning copy (allocated through {@link DataMem#current()}). One length may be
     * -1, inferred from the others.
     *
     * @param newShape the new shape
     * @return a view or a copy; check {@link #ownsData()}
     * @throws NullPointerException     if {@code newShape} is null
     * @throws IllegalArgumentException if the sizes differ (also when the new shape's element count
     *                                  overflows a {@code long}), or more than one length is -1, or
     *                                  a length is below -1; the message names the shape
     * @throws IllegalStateException    if the array is closed
     */
    public NDArray reshape(long... newShape) {
        checkLive();
        long[] s = ArrayLayout.inferShape(newShape, size());
        if (isCContiguous()) {
            return view(origin, s, ArrayLayout.cStrides(dtype, s), readOnly);
        }
        return copyAs(s);
    }

    /**
     * A view with the axes reversed.
     *
     * @return the transposed view
     * @throws IllegalStateException if the array is closed
     */
    public NDArray transpose() {
        int[] axes = new int[shape.length];
        for (int i = 0; i < axes.length; i++) {
            axes[i] = axes.length - 1 - i;
        }
        return transpose(axes);
    }

    /**
     * A view with the axes permuted: axis {@code i} of the view is axis {@code axes[i]} of this array.
     *
     * @param axes a permutation of {@code 0 .. ndim-1}
     * @return the view
     * @throws IllegalArgumentException if {@code axes} is not a permutation of the axes
     * @throws IllegalStateException    if the array is closed
     */
    public NDArray transpose(int... axes) {
        checkLive();
        if (axes.length != shape.length) {
            throw new IllegalArgumentException("axes " + Arrays.toString(axes) + " (expected: a permutation of "
                    + shape.length + " axes)");
        }
        boolean[] seen = new boolean[axes.length];
        long[] s = new long[axes.length];
        long[] st = new long[axes.length];
        for (int i = 0; i < axes.length; i++) {
            int a = axes[i];
            if (a < 0 || a >= axes.length || seen[a]) {
                throw new IllegalArgumentException("axes " + Arrays.toString(axes) + " (expected: a permutation of 0.."
                        + (axes.length - 1) + ")");
            }
            seen[a] = true;
            s[i] = shape[a];
            st[i] = strides[a];
        }
        return view(origin, s, st, readOnly);
    }

    private NDArray view(long newOrigin, long[] newShape, long[] newStrides, boolean viewReadOnly) {
        checkLive();
        return viewOf(this, memory, viewReadOnly, newOrigin, newShape, newStrides);
    }

    // ---------------------------------------------------------------------------------------------
    // Resize and close

    /**
     * Changes the shape in place, reallocating through the captured handler's {@code realloc}. The
     * data is kept in C order up to the smaller size; new bytes are zero, as NumPy's
     * {@code ndarray.resize}. Every view and segment obtained before becomes invalid (access throws
     * {@link IllegalStateException}), even when the reallocation fails. Only the thread the array
     * belongs to resizes it, and afterwards it belongs to that thread again, unshared: call
     * {@link #share()} again for other threads.
     *
     * @param newShape the new shape
     * @throws IllegalStateException      if this array does not own its memory (a view or wrapped
     *                                    memory), is read-only, is not C-contiguous, is closed, has a
     *                                    buffer export held, or a segment over it is in use by a
     *                                    native call
     * @throws WrongThreadException       if the array belongs to another thread; nothing changes
     * @throws UnsupportedOperationException if the handler's allocator cannot reallocate (an imported
     *                                    DLPack tensor); the array keeps its old shape and contents
     * @throws IllegalArgumentException   if the new shape is invalid
     * @throws LimitExceededException     if a limiting adaptor of the handler refused the request; the
     *                                    array keeps its old shape and contents
     * @throws OutOfNativeMemoryException if the reallocation fails; the array keeps its old shape and
     *                                    contents
     * @throws RuntimeException           whatever else the handler's allocator throws: the array keeps its
     *                                    old shape and contents, unless the exception says the block
     *                                    was freed ({@link BlockReleased}, as a guard that found an
     *                                    overrun does); the array is then closed
     */
    public void resize(long... newShape) {
        if (!ownsData()) {
            checkLive();
            throw new IllegalStateException("resize needs an array that owns its memory; " + this
                    + (base != null ? " is a view" : " wraps foreign memory"));
        }
        if (readOnly) {
            throw new IllegalStateException("resize needs a writable array; " + this + " is read-only");
        }
        if (!isCContiguous()) {
            throw new IllegalStateException("resize needs a C-contiguous array; " + this + " has strides "
                    + Arrays.toString(strides));
        }
        long[] s = ArrayLayout.checkShape(newShape);
        long count = ArrayLayout.elementCount(s);
        long newBytes = ArrayLayout.byteSizeOf(dtype, s, count);
        long oldBytes = byteSize();
        ThreadHome.mine().drain();
        memory.resize(this, newBytes, this, next -> memory = next);   // also when it fails: views made before die
        origin = memory.address;
        shape = s;
        strides = ArrayLayout.cStrides(dtype, s);
        layout();
        if (newBytes > oldBytes && memory.seg != ArrayMemory.NO_HOST) {
            // On the owner thread: nobody can free the block meanwhile
            access().asSlice(origin + oldBytes, newBytes - oldBytes).fill((byte) 0);
        }
    }

    /**
     * Closes the array. An owning array invalidates every segment and view over its memory and frees
     * it through the handler captured at creation, with the byte size it allocated (closed from a
     * thread it does not belong to, the block goes back once that thread is outside any access: see
     * {@link #reclaim()}). A view only becomes unusable itself; a wrapped array and its views become
     * unusable, the memory untouched. Idempotent.
     *
     * @throws IllegalStateException if a buffer export or hold of this memory is still taken, or a
     *                               segment over it is in use by a native call; the array stays open
     * @throws WrongThreadException  if the memory is {@linkplain #confined() confined} to another
     *                               thread; the array stays open
     */
    @Override
    public void close() {
        if (base != null) {
            memory = ArrayMemory.CLOSED;
            return;
        }
        if (memory.handler != null) {
            ThreadHome.mine().drain();
        }
        memory.close(this);
        Reference.reachabilityFence(this);   // not enqueued as a leak while closing
    }

    // ---------------------------------------------------------------------------------------------
    // Buffer protocol

    /**
     * Exports this array's memory through the buffer protocol, honouring every request flag as
     * CPython does (its {@code memoryview} rules), in this order:
     * <ul>
     *   <li>memory the host cannot dereference needs {@link BufferFlags#DEVICE};</li>
     *   <li>{@link BufferFlags#WRITABLE} is refused for a read-only array;</li>
     *   <li>{@link BufferFlags#C_CONTIGUOUS}, {@link BufferFlags#F_CONTIGUOUS} and
     *       {@link BufferFlags#ANY_CONTIGUOUS} are refused when the layout is not so;</li>
     *   <li>a request without {@link BufferFlags#STRIDES} needs C-contiguous data (the consumer
     *       assumes C order);</li>
     *   <li>a request without {@link BufferFlags#ND} sees the data as {@code len} flat bytes, so it
     *       may not ask for {@link BufferFlags#FORMAT} unless elements are single bytes.</li>
     * </ul>
     * The view's {@code buf} is element {@code [0, ..., 0]}; {@code format} is the dtype's PEP 3118
     * format, {@code itemsize} its item size (also without {@code FORMAT}), {@code suboffsets} is
     * always null. With {@link BufferFlags#DEVICE}, {@code flags} reports it; {@code device} and
     * {@code device_info} come from the memory's {@link DeviceInterchange} for memory the host
     * cannot dereference, and are null for host memory (pinned, managed and USM host or shared
     * memory included). While the view is held this array's owner can be neither closed nor
     * resized. The view's segment is what {@link #segment()} gives on the calling thread.
     *
     * @param flags the request, a combination of {@link BufferFlags}
     * @return the view; release it when done
     * @throws BufferException       if a flag cannot be honoured; the message names it and why
     * @throws IllegalStateException if the array is closed
     */
    @Override
    public BufferView getBuffer(int flags) {
        checkLive();   // closed, resized or foreign: says so before the request is looked at
        // Validated (and its arrays copied for the view) before anything is held
        BufferView.Builder b = bufferRequest(flags).fill();
        MemoryTraits traits = traits();
        boolean onDevice = !traits.hostAccessible();
        ArrayMemory m = memory;
        m.hold(this);   // a close or resize is refused from now until the view's release
        try {
            b.releaseAction(() -> m.release(this));
            if (onDevice) {
                BufferDeviceHook hook = traits.hook(BufferDeviceHook.class).orElseThrow(() -> new BufferException(
                        this + " is " + traits.kind() + " memory on " + traits.device() + ", but handler '"
                        + handlerName() + "' gives no BufferDeviceHook to describe it (its backend must attach a"
                        + " DeviceInterchange that serves one to its traits)", BufferFlags.DEVICE));
                DeviceInfo info = hook.deviceInfo(MemorySegment.ofAddress(m.address), traits);
                b.device(hook.bufferDeviceId(), info);
            } else {
                b.segment(ownRange(m.userSegment(this)));
            }
            return b.build();
        } catch (RuntimeException | Error e) {
            m.release(this);
            throw e;
        }
    }

    /** The request checked against this array's memory, as {@link BufferRequest} does for any exporter. */
    private BufferRequest bufferRequest(int flags) {
        return BufferRequest.of(this, flags)
                .memory(traits())
                .readOnly(readOnly)
                .elements(dtype.toString(), dtype.format(), dtype.itemSize())
                .layout(memory.handler == null ? memory.address + origin : origin, shape, strides);
    }

    /**
     * Every classic flag and {@link BufferFlags#DEVICE}.
     *
     * @return {@code BufferFlags.CLASSIC_FLAGS | BufferFlags.DEVICE}
     */
    @Override
    public int supportedFlags() {
        return BufferFlags.CLASSIC_FLAGS | BufferFlags.DEVICE;
    }

    // ---------------------------------------------------------------------------------------------
    // Holds against closing

    /**
     * Runs {@code action} with this array's memory held against closing: the lifecycle check that
     * every export goes through. Either the hold is taken before a close or resize begins (which is
     * then refused until {@code action} returns) or this throws and {@code action} does not run. A
     * protocol that hands this array's address or segment to code outside the JVM reads them inside
     * {@code action}; DLPack and the USM array interface are built this way, and a third-party
     * protocol can be too. An export that outlives the action (a consumer keeping the memory) takes
     * a {@link #hold()} instead, or a buffer view ({@link #getBuffer(int)}), whose release drops its
     * own hold. (Not CUDA's page-locking: for that, allocate through a {@code cuda:pinned} handler.)
     *
     * @param action what to do with the memory held; it may call any method of this array except
     *               {@link #close()} and {@link #resize(long...)}, which are refused
     * @param <T>    what the action returns
     * @return what {@code action} returned
     * @throws NullPointerException  if {@code action} is null
     * @throws IllegalStateException if the array is closed or being closed, or is a view of an
     *                               owner resized since the view was made
     */
    public <T> T whileHeld(Supplier<? extends T> action) {
        Objects.requireNonNull(action, "action");
        ArrayMemory m = retainExport();
        try {
            return action.get();
        } finally {
            m.release(this);
        }
    }

    /**
     * Holds this array's memory against closing until the returned hold is closed: what an export
     * keeps while a consumer outside the JVM may read the memory (DLPack keeps one per tensor until
     * its deleter runs, Arrow's C Data export until its release callback). The lifecycle check is
     * {@link #whileHeld}'s: either the hold is taken before a close or resize of the memory begins
     * (which is then refused, naming the hold, until it is closed) or this throws. It costs no
     * buffer description, so it is the cheap way for a protocol that writes its own struct. (Not
     * CUDA's page-locking: for that, allocate through a {@code cuda:pinned} handler.)
     *
     * @return the hold; close it exactly when the consumer is done (closing it again does nothing)
     * @throws IllegalStateException if the array is closed or being closed, or is a view of an
     *                               owner resized since the view was made
     */
    public Hold hold() {
        return new Hold(retainExport(), this);
    }

    /** Takes a hold on this array's memory after the lifecycle check; returns the memory it holds. */
    private ArrayMemory retainExport() {
        checkLive();
        ArrayMemory m = memory;
        m.hold(this);
        return m;
    }

    /**
     * A hold on an array's memory that keeps it from being closed or resized: see {@link #hold()}.
     * Closing it releases the hold once, from any thread; later closes do nothing, so a consumer
     * that calls its release twice cannot unbalance the array's count of holds.
     */
    public static final class Hold implements AutoCloseable {

        private static final VarHandle RELEASED;

        static {
            try {
                RELEASED = MethodHandles.lookup().findVarHandle(Hold.class, "released", boolean.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        private final ArrayMemory memory;
        /** Held strongly: a held array is never collected, so its memory is never reclaimed. */
        private final NDArray array;
        @SuppressWarnings("unused") // through RELEASED
        private volatile boolean released;

        private Hold(ArrayMemory memory, NDArray array) {
            this.memory = memory;
            this.array = array;
        }

        /**
         * Whether {@link #close()} has run.
         *
         * @return true once released
         */
        public boolean isReleased() {
            return released;
        }

        /** Releases the hold, the first time it is called; later calls do nothing. */
        @Override
        public void close() {
            if (RELEASED.compareAndSet(this, false, true)) {
                memory.release(array);
            }
        }

        @Override
        public String toString() {
            return "NDArray.Hold[" + array.dtype + ", shape " + Arrays.toString(array.shape)
                    + (released ? ", released" : ", held") + "]";
        }
    }

    @Override
    public String toString() {
        return "NDArray[" + dtype + ", shape " + Arrays.toString(shape) + ", handler " + handlerName()
                + (ownsData() ? ", owner" : base != null ? ", view" : ", foreign") + "]";
    }
}
