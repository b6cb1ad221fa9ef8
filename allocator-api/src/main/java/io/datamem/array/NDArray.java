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
import java.util.function.LongConsumer;
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
 * <p>The class is sealed: its only subclass is datamem's own kind of view.
 */
public sealed class NDArray implements AutoCloseable, BufferExporter permits NDArray.View {

    /** The most axes an array may have (NumPy's limit, and the buffer protocol's). */
    public static final int MAX_NDIM = BufferView.MAX_NDIM;

    static {
        io.datamem.internal.ArrayInternals.install(array -> ((NDArray) array).memory.nativeOnly());
    }

    /**
     * The memory, whose {@code seg} the accessors go through (see {@link ArrayMemory}). An owner's
     * is replaced by a resize; a closed view's or wrapped array's is {@link ArrayMemory#CLOSED}.
     */
    ArrayMemory memory;
    final DType dtype;
    /** Never written in place (shared with views and caches): replaced by a resize. */
    long[] shape;
    long[] strides;
    /** Where element [0, ..., 0] is in {@code memory.seg}'s coordinates: the address, or (wrapped) the offset. */
    long origin;
    final boolean readOnly;
    // The 1- and 2-axis accessors' layout as fields (see layout()): loads of fields, unlike loads of
    // array elements, leave loops in every compilation, on-stack replacement included (a matrix
    // multiply over shape[] and strides[] ran 3x slower in a method's first, OSR-compiled, run)
    private byte nd;
    private long d0;
    private long d1;
    private long s0;
    private long s1;

    /** An array over {@code memory} (a view, or a wrapped segment). */
    private NDArray(ArrayMemory memory, DType dtype, boolean readOnly, long origin, long[] shape, long[] strides) {
        this.memory = memory;
        this.dtype = dtype;
        this.readOnly = readOnly;
        this.origin = origin;
        this.shape = shape;
        this.strides = strides;
        layout();
    }

    /** Copies the first two axes of {@link #shape} and {@link #strides} into the accessors' fields. */
    private void layout() {
        int n = shape.length;
        nd = (byte) n;
        d0 = n > 0 ? shape[0] : 0;
        d1 = n > 1 ? shape[1] : 0;
        s0 = n > 0 ? strides[0] : 0;
        s1 = n > 1 ? strides[1] : 0;
    }

    /**
     * An owner of a block a handler allocated, belonging to the calling thread: its memory is made
     * here, since it is also the phantom reference to this array that frees a leaked block.
     */
    private NDArray(DataMemHandler handler, long address, long allocatedByteSize, boolean hostAccessible, DType dtype,
                    boolean readOnly, long byteOffset, long[] shape, long[] strides, ThreadHome home) {
        this.dtype = dtype;
        this.readOnly = readOnly;
        this.origin = address + byteOffset;
        this.shape = shape;
        this.strides = strides;
        layout();
        this.memory = ArrayMemory.owned(this, handler, address, allocatedByteSize, hostAccessible, home);
    }

    /** A view: keeps its base reachable (the owner's leak action would otherwise free the memory under it). */
    static final class View extends NDArray {
        final NDArray base;
        /** The memory it was made over ({@link #memory} becomes {@link ArrayMemory#CLOSED} once it is closed). */
        final ArrayMemory over;

        View(NDArray base, ArrayMemory memory, boolean readOnly, long origin, long[] shape, long[] strides) {
            super(memory, base.dtype, readOnly, origin, shape, strides);
            this.base = base;
            this.over = memory;
        }
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
            array = scope == null ? new NDArray(handler, block.address(), byteSize, host, dtype, false, 0, s, st, home)
                    : new NDArray(ArrayMemory.inScope(handler, block.address(), byteSize, host, scope, home.thread),
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
        return new NDArray(handler, block.address(), allocatedByteSize, host, dtype, readOnly, byteOffset, s, st, home);
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
        return new NDArray(memory, dtype, segment.isReadOnly(), byteOffset, s, st);
    }

    // ---------------------------------------------------------------------------------------------
    // Properties

    /** The memory this array was made over, also once it is closed. */
    private ArrayMemory over() {
        return this instanceof View v ? v.over : memory;
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
        return !(this instanceof View) && over().handler != null;
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
        return this instanceof View v ? v.base : null;
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
     * The segment element access goes through, in the coordinates of {@link #origin}: for the
     * bulk operations of this package on the calling thread. Checked now; any access through it is
     * checked again by the JDK.
     *
     * @throws IllegalStateException         if the array is closed
     * @throws UnsupportedOperationException if the memory is on a device
     */
    MemorySegment hostData() {
        ArrayMemory m = memory;
        if (m.seg == ArrayMemory.NO_HOST) {
            throw onDevice();
        }
        checkLive();
        return access();
    }

    private MemorySegment writableData() {
        if (readOnly) {
            throw readOnly();
        }
        return hostData();
    }

    // ---------------------------------------------------------------------------------------------
    // Element access
    //
    // Every accessor is an index check (at1, at2, atN: the offset of the element in memory.seg's
    // coordinates) and one read or write of memory.seg, whose JDK check refuses what must be refused
    // (closed or resized memory, a thread the memory does not belong to, device memory). Its only
    // path other than the access throws: nothing an accessor does can change what a loop around it
    // loaded, so the compiler keeps those loads out of the loop whatever the process did before (a
    // path that repairs and returns would make every loop reload everything: docs/decisions.md).

    /**
     * {@code index * stride} for the last axis, written so that the compiler sees a constant scale
     * for the common stride of 8 bytes: a loop along such an axis then compiles as a loop over a
     * segment does (unrolled and vectorised), the other strides on a copy of the loop. (On the
     * other axes it would only add a test per access: a multiply is as fast there.)
     */
    private static long scaled(long index, long stride) {
        return stride == Long.BYTES ? index * Long.BYTES : index * stride;
    }

    /** The offset of element {@code [i]} of a 1-axis array. */
    private long at1(long i) {
        if (nd != 1) {
            throw badIndex(i);
        }
        try {
            Objects.checkIndex(i, d0);
        } catch (IndexOutOfBoundsException e) {
            throw badIndex(i);
        }
        return origin + scaled(i, s0);
    }

    /** The offset of element {@code [i, j]} of a 2-axis array. */
    private long at2(long i, long j) {
        if (nd != 2) {
            throw badIndex(i, j);
        }
        try {
            Objects.checkIndex(i, d0);
            Objects.checkIndex(j, d1);
        } catch (IndexOutOfBoundsException e) {
            throw badIndex(i, j);
        }
        return origin + i * s0 + scaled(j, s1);
    }

    /** The offset of the element at {@code index}, one index per axis. */
    private long atN(long[] index) {
        return ArrayLayout.elementOffset(shape, strides, origin, index);
    }

    /** Why an index was refused: {@link ArrayLayout#elementOffset} checks it again and throws. */
    private RuntimeException badIndex(long... index) {
        ArrayLayout.elementOffset(shape, strides, origin, index);
        throw new AssertionError("index " + Arrays.toString(index) + " is within shape " + Arrays.toString(shape));
    }

    /**
     * The segment this thread's accesses go through (see {@link ArrayMemory}): two plain loads and a
     * comparison, all of which stay out of loops.
     */
    private MemorySegment access() {
        ArrayMemory m = memory;
        return m.owner == Thread.currentThread() ? ArrayMemory.ALL : m.seg;
    }

    private double readDouble(long off) {
        try {
            return ElementCodec.readDouble(dtype, access(), off);
        } catch (IllegalStateException | WrongThreadException e) {
            throw failed(e);
        }
    }

    private void writeDouble(long off, double value) {
        if (readOnly) {
            throw readOnly();
        }
        try {
            ElementCodec.writeDouble(dtype, access(), off, value);
        } catch (IllegalStateException | WrongThreadException e) {
            throw failed(e);
        }
    }

    private long readLong(long off) {
        try {
            return ElementCodec.readLong(dtype, access(), off);
        } catch (IllegalStateException | WrongThreadException e) {
            throw failed(e);
        }
    }

    private void writeLong(long off, long value) {
        if (readOnly) {
            throw readOnly();
        }
        try {
            ElementCodec.writeLong(dtype, access(), off, value);
        } catch (IllegalStateException | WrongThreadException e) {
            throw failed(e);
        }
    }

    /**
     * Reads an element as a double. Booleans read as 0 or 1, unsigned integers as their unsigned
     * value.
     *
     * @param index one index per axis
     * @return the value
     * @throws IllegalArgumentException      if the number of indices is not {@link #ndim()}
     * @throws IndexOutOfBoundsException     if an index is outside its axis
     * @throws UnsupportedOperationException if the dtype is complex or custom, or the memory is on a
     *                                       device
     * @throws IllegalStateException         if the array is closed
     * @throws WrongThreadException          if the array belongs to another thread and is not shared
     */
    public double getDouble(long... index) {
        return readDouble(atN(index));
    }

    /**
     * Reads an element of a 1-axis array as a double, as {@link #getDouble(long...)} does, without
     * an index array: the accessor to use in loops.
     *
     * @param i the index on axis 0
     * @return the value
     * @throws IllegalArgumentException      if the array is not 1-dimensional ({@link #ndim()})
     * @throws IndexOutOfBoundsException     if the index is outside its axis
     * @throws UnsupportedOperationException if the dtype is complex or custom, or the memory is on a
     *                                       device
     * @throws IllegalStateException         if the array is closed
     * @throws WrongThreadException          if the array belongs to another thread and is not shared
     */
    public double getDouble(long i) {
        return readDouble(at1(i));
    }

    /**
     * Reads an element of a 2-axis array as a double, as {@link #getDouble(long...)} does, without
     * an index array: the accessor to use in loops.
     *
     * @param i the index on axis 0
     * @param j the index on axis 1
     * @return the value
     * @throws IllegalArgumentException      if the array is not 2-dimensional ({@link #ndim()})
     * @throws IndexOutOfBoundsException     if an index is outside its axis
     * @throws UnsupportedOperationException if the dtype is complex or custom, or the memory is on a
     *                                       device
     * @throws IllegalStateException         if the array is closed
     * @throws WrongThreadException          if the array belongs to another thread and is not shared
     */
    public double getDouble(long i, long j) {
        return readDouble(at2(i, j));
    }

    /**
     * Writes an element from a double, converting as a C cast would (integers truncate toward zero;
     * booleans are {@code value != 0}).
     *
     * @param value the value
     * @param index one index per axis
     * @throws IllegalArgumentException      if the number of indices is not {@link #ndim()}
     * @throws IndexOutOfBoundsException     if an index is outside its axis
     * @throws UnsupportedOperationException if the dtype is custom, the memory is on a device, or the
     *                                       array is read-only
     * @throws IllegalStateException         if the array is closed
     * @throws WrongThreadException          if the array belongs to another thread and is not shared
     */
    public void setDouble(double value, long... index) {
        writeDouble(atN(index), value);
    }

    /**
     * Writes an element of a 1-axis array from a double, as {@link #setDouble(double, long...)} does,
     * without an index array: the accessor to use in loops.
     *
     * @param value the value
     * @param i     the index on axis 0
     * @throws IllegalArgumentException      if the array is not 1-dimensional ({@link #ndim()})
     * @throws IndexOutOfBoundsException     if the index is outside its axis
     * @throws UnsupportedOperationException if the dtype is custom, the memory is on a device, or the
     *                                       array is read-only
     * @throws IllegalStateException         if the array is closed
     * @throws WrongThreadException          if the array belongs to another thread and is not shared
     */
    public void setDouble(double value, long i) {
        writeDouble(at1(i), value);
    }

    /**
     * Writes an element of a 2-axis array from a double, as {@link #setDouble(double, long...)} does,
     * without an index array: the accessor to use in loops.
     *
     * @param value the value
     * @param i     the index on axis 0
     * @param j     the index on axis 1
     * @throws IllegalArgumentException      if the array is not 2-dimensional ({@link #ndim()})
     * @throws IndexOutOfBoundsException     if an index is outside its axis
     * @throws UnsupportedOperationException if the dtype is custom, the memory is on a device, or the
     *                                       array is read-only
     * @throws IllegalStateException         if the array is closed
     * @throws WrongThreadException          if the array belongs to another thread and is not shared
     */
    public void setDouble(double value, long i, long j) {
        writeDouble(at2(i, j), value);
    }

    /**
     * Reads an element as a long. Floating-point values truncate toward zero; {@code uint64} returns
     * its bits (read it with {@link Long#toUnsignedString(long)}).
     *
     * @param index one index per axis
     * @return the value
     * @throws IllegalArgumentException      if the number of indices is not {@link #ndim()}
     * @throws IndexOutOfBoundsException     if an index is outside its axis
     * @throws UnsupportedOperationException if the dtype is complex or custom, or the memory is on a
     *                                       device
     * @throws IllegalStateException         if the array is closed
     * @throws WrongThreadException          if the array belongs to another thread and is not shared
     */
    public long getLong(long... index) {
        return readLong(atN(index));
    }

    /**
     * Reads an element of a 1-axis array as a long, as {@link #getLong(long...)} does, without an
     * index array: the accessor to use in loops.
     *
     * @param i the index on axis 0
     * @return the value
     * @throws IllegalArgumentException      if the array is not 1-dimensional ({@link #ndim()})
     * @throws IndexOutOfBoundsException     if the index is outside its axis
     * @throws UnsupportedOperationException if the dtype is complex or custom, or the memory is on a
     *                                       device
     * @throws IllegalStateException         if the array is closed
     * @throws WrongThreadException          if the array belongs to another thread and is not shared
     */
    public long getLong(long i) {
        return readLong(at1(i));
    }

    /**
     * Reads an element of a 2-axis array as a long, as {@link #getLong(long...)} does, without an
     * index array: the accessor to use in loops.
     *
     * @param i the index on axis 0
     * @param j the index on axis 1
     * @return the value
     * @throws IllegalArgumentException      if the array is not 2-dimensional ({@link #ndim()})
     * @throws IndexOutOfBoundsException     if an index is outside its axis
     * @throws UnsupportedOperationException if the dtype is complex or custom, or the memory is on a
     *                                       device
     * @throws IllegalStateException         if the array is closed
     * @throws WrongThreadException          if the array belongs to another thread and is not shared
     */
    public long getLong(long i, long j) {
        return readLong(at2(i, j));
    }

    /**
     * Writes an element from a long. Integers keep the low bits (as a C cast); floats round to
     * nearest; booleans are {@code value != 0}.
     *
     * @param value the value
     * @param index one index per axis
     * @throws IllegalArgumentException      if the number of indices is not {@link #ndim()}
     * @throws IndexOutOfBoundsException     if an index is outside its axis
     * @throws UnsupportedOperationException if the dtype is custom, the memory is on a device, or the
     *                                       array is read-only
     * @throws IllegalStateException         if the array is closed
     * @throws WrongThreadException          if the array belongs to another thread and is not shared
     */
    public void setLong(long value, long... index) {
        writeLong(atN(index), value);
    }

    /**
     * Writes an element of a 1-axis array from a long, as {@link #setLong(long, long...)} does,
     * without an index array: the accessor to use in loops.
     *
     * @param value the value
     * @param i     the index on axis 0
     * @throws IllegalArgumentException      if the array is not 1-dimensional ({@link #ndim()})
     * @throws IndexOutOfBoundsException     if the index is outside its axis
     * @throws UnsupportedOperationException if the dtype is custom, the memory is on a device, or the
     *                                       array is read-only
     * @throws IllegalStateException         if the array is closed
     * @throws WrongThreadException          if the array belongs to another thread and is not shared
     */
    public void setLong(long value, long i) {
        writeLong(at1(i), value);
    }

    /**
     * Writes an element of a 2-axis array from a long, as {@link #setLong(long, long...)} does,
     * without an index array: the accessor to use in loops.
     *
     * @param value the value
     * @param i     the index on axis 0
     * @param j     the index on axis 1
     * @throws IllegalArgumentException      if the array is not 2-dimensional ({@link #ndim()})
     * @throws IndexOutOfBoundsException     if an index is outside its axis
     * @throws UnsupportedOperationException if the dtype is custom, the memory is on a device, or the
     *                                       array is read-only
     * @throws IllegalStateException         if the array is closed
     * @throws WrongThreadException          if the array belongs to another thread and is not shared
     */
    public void setLong(long value, long i, long j) {
        writeLong(at2(i, j), value);
    }

    /**
     * Reads an element as a boolean: whether it is non-zero.
     *
     * @param index one index per axis
     * @return the value
     * @throws IllegalArgumentException      if the number of indices is not {@link #ndim()}
     * @throws IndexOutOfBoundsException     if an index is outside its axis
     * @throws UnsupportedOperationException if the dtype is custom, or the memory is on a device
     * @throws IllegalStateException         if the array is closed
     * @throws WrongThreadException          if the array belongs to another thread and is not shared
     */
    public boolean getBoolean(long... index) {
        long off = atN(index);
        try {
            return ElementCodec.readBoolean(dtype, access(), off);
        } catch (IllegalStateException | WrongThreadException e) {
            throw failed(e);
        }
    }

    /**
     * Writes an element from a boolean (1 or 0).
     *
     * @param value the value
     * @param index one index per axis
     * @throws IllegalArgumentException      if the number of indices is not {@link #ndim()}
     * @throws IndexOutOfBoundsException     if an index is outside its axis
     * @throws UnsupportedOperationException if the dtype is custom, the memory is on a device, or the
     *                                       array is read-only
     * @throws IllegalStateException         if the array is closed
     * @throws WrongThreadException          if the array belongs to another thread and is not shared
     */
    public void setBoolean(boolean value, long... index) {
        writeLong(atN(index), value ? 1 : 0);
    }

    /**
     * Reads an element as a complex number {@code {real, imaginary}}; real dtypes read with an
     * imaginary part of 0.
     *
     * @param index one index per axis
     * @return a new two-element array
     * @throws IllegalArgumentException      if the number of indices is not {@link #ndim()}
     * @throws IndexOutOfBoundsException     if an index is outside its axis
     * @throws UnsupportedOperationException if the dtype is custom, or the memory is on a device
     * @throws IllegalStateException         if the array is closed
     * @throws WrongThreadException          if the array belongs to another thread and is not shared
     */
    public double[] getComplex(long... index) {
        long off = atN(index);
        try {
            return ElementCodec.readAsComplex(dtype, access(), off);
        } catch (IllegalStateException | WrongThreadException e) {
            throw failed(e);
        }
    }

    /**
     * Writes a complex element.
     *
     * @param real      the real part
     * @param imaginary the imaginary part
     * @param index     one index per axis
     * @throws IllegalArgumentException      if the number of indices is not {@link #ndim()}, or
     *                                       {@code imaginary} is not 0 for a real dtype
     * @throws IndexOutOfBoundsException     if an index is outside its axis
     * @throws UnsupportedOperationException if the dtype is custom, the memory is on a device, or the
     *                                       array is read-only
     * @throws IllegalStateException         if the array is closed
     * @throws WrongThreadException          if the array belongs to another thread and is not shared
     */
    public void setComplex(double real, double imaginary, long... index) {
        long off = atN(index);
        if (readOnly) {
            throw readOnly();
        }
        try {
            ElementCodec.writeAsComplex(dtype, access(), off, real, imaginary);
        } catch (IllegalStateException | WrongThreadException e) {
            throw failed(e);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Why an access failed

    /**
     * What a failed access throws, {@code e} being what the JDK's check on the segment threw: the
     * array's closing, its memory's resize, the memory's being on a device, or its belonging to
     * another thread, each in one message naming the array and its handler.
     */
    RuntimeException failed(RuntimeException e) {
        ArrayMemory m = memory;
        if (m.isDevice()) {
            return onDevice();
        }
        IllegalStateException closed = whyClosed();
        if (closed != null) {
            closed.initCause(e);
            return closed;
        }
        if (m.isNotShared()) {
            Thread owner = m.ownerThread();
            return new WrongThreadException(this + " belongs to thread '" + (owner == null ? "?" : owner.getName())
                    + "', which created it; call share() on it (once, from any thread) before other threads read or"
                    + " write its elements" + (m.isStrict() ? " (but it is confined(): it can never be shared)" : "")
                    + ", or use Parallel, which shares the arrays its loop captures", e);
        }
        return e;
    }

    /** Why this array may no longer be used, or null: closed, its memory freed, or resized since it was made. */
    private IllegalStateException whyClosed() {
        ArrayMemory m = memory;
        IllegalStateException e = m.whyNotLive(this);
        if (e != null && m != ArrayMemory.CLOSED && this instanceof View) {
            NDArray root = this;
            while (root instanceof View v) {
                root = v.base;
            }
            if (root.memory != m && root.memory.isLive()) {
                return new IllegalStateException(this + " is no longer valid: the owning array was resized, which"
                        + " reallocated its memory");
            }
        }
        return e;
    }

    private UnsupportedOperationException readOnly() {
        return new UnsupportedOperationException(this + " is read-only");
    }

    private UnsupportedOperationException onDevice() {
        if (over().isNativeOnly()) {
            return new UnsupportedOperationException(this + " was made for native code (a tensor a C caller"
                    + " allocated through DLPack); Java does not reach its elements");
        }
        MemoryTraits traits = over().traits();
        return new UnsupportedOperationException("this array's memory is on " + traits.device() + " ("
                + traits.kind() + " memory of handler '" + handlerName()
                + "'), which the host cannot access; copy it to host memory and read that: with any backend,"
                + " traits().interchange().copyToHost(...) or a DLPack export to the CPU device"
                + " (DLPack.toDLPack(array, DLPackOptions.defaults().withDlDevice(Device.CPU)));"
                + " with datamem's, CUDA: io.datamem.cuda.CudaMemory.toHost(array) or CudaMemory.copy(source,"
                + " target), SYCL USM device memory: io.datamem.sycl.SyclQueue.copy(destination, source))");
    }

    private String handlerName() {
        DataMemHandler h = handler();
        return h == null ? "none" : h.name();
    }

    /**
     * The lifecycle check of every path that hands out an address, a segment or a view.
     *
     * @throws IllegalStateException if the array may no longer be used (see {@link #isClosed()})
     */
    void checkLive() {
        IllegalStateException e = whyClosed();
        if (e != null) {
            throw e;
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Bulk operations

    /**
     * Sets every element to a value, converting as {@link #setDouble} does.
     *
     * @param value the value
     * @throws UnsupportedOperationException if the dtype is custom, the memory is on a device, or the
     *                                       array is read-only
     * @throws IllegalStateException         if the array is closed
     * @throws WrongThreadException          if the array belongs to another thread and is not shared
     */
    public void fill(double value) {
        MemorySegment d = writableData();
        try {
            if (Double.doubleToRawLongBits(value) == 0 && isCContiguous()) {
                zero(d);
            } else {
                forEachOffset(off -> ElementCodec.writeDouble(dtype, d, off, value));
            }
        } catch (IllegalStateException | WrongThreadException e) {
            throw failed(e);
        }
    }

    /**
     * Sets every element to a value, converting as {@link #setLong} does.
     *
     * @param value the value
     * @throws UnsupportedOperationException if the dtype is custom, the memory is on a device, or the
     *                                       array is read-only
     * @throws IllegalStateException         if the array is closed
     * @throws WrongThreadException          if the array belongs to another thread and is not shared
     */
    public void fill(long value) {
        MemorySegment d = writableData();
        try {
            if (value == 0 && isCContiguous()) {
                zero(d);
            } else {
                forEachOffset(off -> ElementCodec.writeLong(dtype, d, off, value));
            }
        } catch (IllegalStateException | WrongThreadException e) {
            throw failed(e);
        }
    }

    /** Zeroes this C-contiguous array's bytes through {@code d}, the access segment. */
    private void zero(MemorySegment d) {
        long bytes = byteSize();
        if (bytes > 0) {
            d.asSlice(origin, bytes).fill((byte) 0);
        }
    }

    /**
     * Copies the elements of another array of the same shape into this one, converting between
     * dtypes as the element setters do. Overlapping memory is handled (the source is read first).
     *
     * @param source the array to copy from
     * @throws NullPointerException          if {@code source} is null
     * @throws IllegalArgumentException      if the shapes differ, or a complex source with a non-zero
     *                                       imaginary part is copied to a real dtype
     * @throws UnsupportedOperationException if either memory is on a device, the dtypes differ and
     *                                       one is custom, or this array is read-only
     * @throws IllegalStateException         if either array is closed
     * @throws WrongThreadException          if either array belongs to another thread and is not shared
     */
    public void copyFrom(NDArray source) {
        Objects.requireNonNull(source, "source");
        if (!Arrays.equals(shape, source.shape)) {
            throw new IllegalArgumentException("shape " + Arrays.toString(source.shape) + " of the source (expected: "
                    + Arrays.toString(shape) + ", this array's)");
        }
        writableData();
        ArrayTransfer.transfer(source, this);
    }

    /**
     * Copies values into this array in C order, converting as {@link #setDouble} does.
     *
     * @param values exactly {@link #size()} values
     * @throws NullPointerException          if {@code values} is null
     * @throws IllegalArgumentException      if the length is not {@link #size()}
     * @throws UnsupportedOperationException if the dtype is custom, the memory is on a device, or the
     *                                       array is read-only
     * @throws IllegalStateException         if the array is closed
     * @throws WrongThreadException          if the array belongs to another thread and is not shared
     */
    public void copyFrom(double[] values) {
        Objects.requireNonNull(values, "values");
        checkLength(values.length);
        MemorySegment d = writableData();
        int[] i = {0};
        try {
            forEachOffset(off -> ElementCodec.writeDouble(dtype, d, off, values[i[0]++]));
        } catch (IllegalStateException | WrongThreadException e) {
            throw failed(e);
        }
    }

    /**
     * Copies values into this array in C order, converting as {@link #setLong} does.
     *
     * @param values exactly {@link #size()} values
     * @throws NullPointerException          if {@code values} is null
     * @throws IllegalArgumentException      if the length is not {@link #size()}
     * @throws UnsupportedOperationException if the dtype is custom, the memory is on a device, or the
     *                                       array is read-only
     * @throws IllegalStateException         if the array is closed
     * @throws WrongThreadException          if the array belongs to another thread and is not shared
     */
    public void copyFrom(long[] values) {
        Objects.requireNonNull(values, "values");
        checkLength(values.length);
        MemorySegment d = writableData();
        int[] i = {0};
        try {
            forEachOffset(off -> ElementCodec.writeLong(dtype, d, off, values[i[0]++]));
        } catch (IllegalStateException | WrongThreadException e) {
            throw failed(e);
        }
    }

    /**
     * The elements in C order, as doubles.
     *
     * @return a new array of {@link #size()} values
     * @throws IllegalStateException         if the array is closed, or has more than
     *                                       {@code Integer.MAX_VALUE - 8} elements
     * @throws UnsupportedOperationException if the dtype is complex or custom, or the memory is on a
     *                                       device
     * @throws WrongThreadException          if the array belongs to another thread and is not shared
     */
    public double[] toDoubleArray() {
        MemorySegment d = hostData();
        double[] out = new double[javaLength()];
        int[] i = {0};
        try {
            forEachOffset(off -> out[i[0]++] = ElementCodec.readDouble(dtype, d, off));
        } catch (IllegalStateException | WrongThreadException e) {
            throw failed(e);
        }
        return out;
    }

    /**
     * The elements in C order, as longs.
     *
     * @return a new array of {@link #size()} values
     * @throws IllegalStateException         if the array is closed, or has more than
     *                                       {@code Integer.MAX_VALUE - 8} elements
     * @throws UnsupportedOperationException if the dtype is complex or custom, or the memory is on a
     *                                       device
     * @throws WrongThreadException          if the array belongs to another thread and is not shared
     */
    public long[] toLongArray() {
        MemorySegment d = hostData();
        long[] out = new long[javaLength()];
        int[] i = {0};
        try {
            forEachOffset(off -> out[i[0]++] = ElementCodec.readLong(dtype, d, off));
        } catch (IllegalStateException | WrongThreadException e) {
            throw failed(e);
        }
        return out;
    }

    private int javaLength() {
        long size = size();
        if (size > Integer.MAX_VALUE - 8) {
            throw new IllegalStateException(this + " has " + size + " elements, more than a Java array holds");
        }
        return (int) size;
    }

    private void checkLength(int length) {
        long size = size();
        if (length != size) {
            throw new IllegalArgumentException("values: " + length + " elements (expected: " + size
                    + ", the size of shape " + Arrays.toString(shape) + ")");
        }
    }

    /** Calls {@code action} with the offset in {@link #hostData()} of every element, in C order. */
    void forEachOffset(LongConsumer action) {
        ArrayTransfer.forEachOffset(origin, shape, strides, size(), action);
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
        return new View(this, memory, viewReadOnly, newOrigin, newShape, newStrides);
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
                    + (this instanceof View ? " is a view" : " wraps foreign memory"));
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
        if (this instanceof View) {
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
     * The former name of {@link #whileHeld}.
     *
     * @param action what to do with the memory held
     * @param <T>    what the action returns
     * @return what {@code action} returned
     * @throws NullPointerException  if {@code action} is null
     * @throws IllegalStateException as {@link #whileHeld}
     * @deprecated "pin" reads as CUDA's page-locking, which this is not; use {@link #whileHeld}.
     */
    @Deprecated(since = "0.2.0", forRemoval = true)
    public <T> T whilePinned(Supplier<? extends T> action) {
        return whileHeld(action);
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

    /**
     * The former name of {@link #hold()}.
     *
     * @return the hold, as a {@link Pin}
     * @throws IllegalStateException as {@link #hold()}
     * @deprecated "pin" reads as CUDA's page-locking, which this is not; use {@link #hold()}.
     */
    @Deprecated(since = "0.2.0", forRemoval = true)
    public Pin pin() {
        return new Pin(retainExport(), this);
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
    public static sealed class Hold implements AutoCloseable permits Pin {

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

    /**
     * The former name of {@link Hold}.
     *
     * @deprecated "pin" reads as CUDA's page-locking, which this is not; use {@link Hold}.
     */
    @Deprecated(since = "0.2.0", forRemoval = true)
    public static final class Pin extends Hold {
        private Pin(ArrayMemory memory, NDArray array) {
            super(memory, array);
        }
    }

    @Override
    public String toString() {
        return "NDArray[" + dtype + ", shape " + Arrays.toString(shape) + ", handler " + handlerName()
                + (ownsData() ? ", owner" : this instanceof View ? ", view" : ", foreign") + "]";
    }
}
