package io.datamem.array;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.MemoryTraits;
import io.datamem.AllocationRefusal;
import io.datamem.LimitExceededException;
import io.datamem.OutOfNativeMemoryException;
import io.datamem.buffer.BufferDeviceHook;
import io.datamem.buffer.BufferException;
import io.datamem.buffer.BufferExporter;
import io.datamem.buffer.BufferFlags;
import io.datamem.buffer.BufferRequest;
import io.datamem.buffer.BufferView;
import io.datamem.buffer.DeviceInfo;
import io.datamem.internal.Strides;
import io.datamem.spi.BlockReleased;
import io.datamem.DeviceInterchange;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.util.Arrays;
import java.util.Objects;
import java.util.function.Supplier;
import java.util.function.LongConsumer;

/**
 * An n-dimensional array over native memory, allocated through a {@link DataMemHandler}.
 *
 * <p>An owning array captures {@link DataMem#current()} once, when it is created, and reallocates
 * ({@link #resize}) and frees ({@link #close}) through that handler with the exact byte size it
 * allocated, whatever is bound or set as default by then. Views ({@link #slice}, {@link #reshape},
 * {@link #transpose}, {@link #select}) share their base's memory, keep their base reachable, report
 * their base's handler and do not own data.
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
 * {@link io.datamem.buffer}); while a {@link BufferView} is held the owner cannot be closed or
 * resized.
 *
 * <p>Which handler allocated each new array can be logged: set the {@link System.Logger}
 * {@code io.datamem.array.handler} to {@code DEBUG} ({@code java.util.logging}'s {@code FINE})
 * before the first array is created, and each creation through {@link #empty}, {@link #zeros} and
 * the copying methods is logged with the handler's name, the thread, and whether the handler came
 * from a scoped binding or the process default. Off (the default), the check costs nothing.
 *
 * <p>Thread safety: element access from several threads is safe (the memory is shared, races on the
 * same element are the caller's). {@code close} and {@code resize} may be called from any thread; a
 * concurrent access then either completes or throws {@link IllegalStateException}.
 */
public final class NDArray implements AutoCloseable, BufferExporter {

    /** {@link #accessGeneration} of a closed array: never a memory's live generation. */
    private static final int CLOSED_ARRAY = Integer.MIN_VALUE;

    /** The most axes an array may have (NumPy's limit, and the buffer protocol's). */
    public static final int MAX_NDIM = BufferView.MAX_NDIM;

    private final NDArray base;          // the array a view was made from; null for owners and wrapped arrays
    private final ArrayMemory memory;
    private final boolean owner;
    private final DType dtype;
    private final boolean readOnly;

    // Change only on resize (owners).
    private MemorySegment data;          // host segment over the whole block that any thread may use (the
                                         // shared one, or the wrapped segment); null until first needed
                                         // (and always for device memory), see hostData()
    // The memory's local segment (see ArrayMemory) and the one thread that may use it, as given to
    // that thread by hostData(); null until then. Used only after checking the thread and the
    // generation, never handed out.
    private MemorySegment local;
    private Thread localThread;
    private long dataAddress;
    private long dataByteSize;           // the block's allocated size
    private int generation;              // the memory's generation this array was made for
    // generation while this array is open, CLOSED_ARRAY once it is closed: the accessors' fast path
    // compares it with the memory's live generation, which checks both at once
    private int accessGeneration;
    private long offset;                 // bytes from the block start to element [0, ..., 0]
    private long[] shape;
    private long[] strides;
    private long size;
    private boolean closed;
    // The 1- and 2-axis accessors' layout as fields, so that they load no array and check no length
    // (see layout()): an axis's length is 0 when the array has another number of axes, so that the
    // bounds check alone refuses the call, and the slow path says why.
    private long length1;
    private long rows2;
    private long columns2;
    private long stride0;
    private long stride1;
    // The float64 accessors' fast path: length1 and rows2 when the dtype is float64 and the rows are
    // C-contiguous (stride 8, and a row stride of columns × 8), else 0, so that one comparison
    // checks the index, the dtype and the layout; other arrays take the general path.
    private long denseLength1;
    private long denseRows2;
    // dataAddress + offset: the address of element [0, ..., 0], for the dense float64 accessors' path
    // on the creating thread (see EVERYTHING)
    private long elementBase;

    /**
     * A segment over the whole address space, in the global scope: the dense float64 accessors on the
     * creating thread read and write through it at {@link #elementBase} + the checked index × 8. Being
     * a constant, it costs no loads and no scope check of its own; its bounds are no bounds. What
     * keeps such an access safe is what keeps the local segment safe (see {@link ArrayMemory}): the
     * calling thread is the one the memory granted it to, the generation is live, the index is within
     * its axis, and the layout was checked against the block when the array was made.
     */
    private static final MemorySegment EVERYTHING = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

    private NDArray(NDArray base, ArrayMemory memory, boolean owner, DType dtype, boolean readOnly,
                    MemorySegment data, long dataAddress, long dataByteSize, int generation, long offset,
                    long[] shape, long[] strides) {
        this.base = base;
        this.memory = memory;
        this.owner = owner;
        this.dtype = dtype;
        this.readOnly = readOnly;
        this.data = readOnly && data != null ? data.asReadOnly() : data;
        this.dataAddress = dataAddress;
        this.dataByteSize = dataByteSize;
        this.generation = generation;
        this.accessGeneration = generation;
        this.offset = offset;
        this.shape = shape;
        this.strides = strides;
        this.size = ArrayLayout.elementCount(shape);
        layout();
    }

    /**
     * An owner of a block a handler allocated: its memory is made here, since it is also the phantom
     * reference to this array that frees a leaked block (see {@link ArrayMemory}).
     */
    private NDArray(DataMemHandler handler, MemorySegment block, long allocatedByteSize, DType dtype,
                    boolean readOnly, long offset, long[] shape, long[] strides, long size) {
        this.base = null;
        this.owner = true;
        this.dtype = dtype;
        this.readOnly = readOnly;
        this.dataAddress = block.address();
        this.dataByteSize = allocatedByteSize;
        // A new memory is at its first generation: no need to ask it (a lock) for what we know
        this.generation = ArrayMemory.FIRST_GENERATION;
        this.accessGeneration = ArrayMemory.FIRST_GENERATION;
        this.offset = offset;
        this.shape = shape;
        this.strides = strides;
        this.size = size;
        layout();
        this.memory = ArrayMemory.owned(this, handler, block, allocatedByteSize, dtype, shape);
    }

    /** Copies the first two axes of {@link #shape} and {@link #strides} into the accessors' fields. */
    private void layout() {
        int n = shape.length;
        length1 = n == 1 ? shape[0] : 0;
        rows2 = n == 2 ? shape[0] : 0;
        columns2 = n == 2 ? shape[1] : 0;
        stride0 = n > 0 ? strides[0] : 0;
        stride1 = n > 1 ? strides[1] : 0;
        boolean f64 = dtype == DType.FLOAT64;
        denseLength1 = f64 && n == 1 && stride0 == Double.BYTES ? length1 : 0;
        denseRows2 = f64 && n == 2 && stride1 == Double.BYTES && stride0 == columns2 * Double.BYTES ? rows2 : 0;
        elementBase = dataAddress + offset;
    }

    /**
     * {@code i}, checked against {@link #denseLength1}: the JDK's range check, which loop
     * predication moves out of a loop (a comparison of its own would keep the store loops of
     * {@code setDouble} from being vectorised).
     */
    private long denseIndex1(long i) {
        try {
            return Objects.checkIndex(i, denseLength1);
        } catch (IndexOutOfBoundsException e) {
            throw badIndex(i);
        }
    }

    /** The byte offset from {@link #offset} of element {@code [i, j]} of a dense float64 matrix, checked. */
    private long denseIndex2(long i, long j) {
        long columns = columns2;
        // The row: an unsigned comparison (loop-invariant in the loops over a row, where it is hoisted
        // whatever its form); the column: the JDK's range check, which loop predication moves out of
        // the inner loop so that it vectorises
        if (Long.compareUnsigned(i, denseRows2) >= 0) {
            throw badIndex(i, j);
        }
        try {
            Objects.checkIndex(j, columns);
        } catch (IndexOutOfBoundsException e) {
            throw badIndex(i, j);
        }
        // i × (row bytes) + j × 8: the inner loop's address is then an invariant plus j × 8, which
        // the vectoriser recognises ((i × columns + j) << 3 it did not: a fill loop ran 2.3× slower)
        return i * (columns << 3) + (j << 3);
    }

    /** The byte offset of element {@code [i]} of a 1-axis array: one range check on the fields. */
    private long offset1(long i) {
        try {
            Objects.checkIndex(i, length1);
        } catch (IndexOutOfBoundsException e) {
            throw badIndex(i);
        }
        return offset + scaled(i, stride0);
    }

    /** The byte offset of element {@code [i, j]} of a 2-axis array: two range checks on the fields. */
    private long offset2(long i, long j) {
        try {
            Objects.checkIndex(i, rows2);
            Objects.checkIndex(j, columns2);
        } catch (IndexOutOfBoundsException e) {
            throw badIndex(i, j);
        }
        return offset + scaled(i, stride0) + scaled(j, stride1);
    }

    /**
     * {@code index * stride}, written so that the compiler sees a constant scale for the common
     * stride of 8 bytes (contiguous 8-byte elements): a loop over such an array then compiles as a
     * loop over the segment does (unrolled and vectorised), the other strides on a copy of the loop.
     */
    private static long scaled(long index, long stride) {
        return stride == Long.BYTES ? index * Long.BYTES : index * stride;
    }

    /**
     * Why {@link #offset1} or {@link #offset2} refused an index: {@link ArrayLayout#elementOffset}
     * checks it again and throws the refusal (the number of axes, or an axis's bounds).
     */
    private RuntimeException badIndex(long... index) {
        ArrayLayout.elementOffset(shape, strides, offset, index);
        throw new AssertionError("index " + Arrays.toString(index) + " is within shape " + Arrays.toString(shape));
    }

    // ---------------------------------------------------------------------------------------------
    // Creation

    /**
     * A new array of uninitialised elements, allocated with {@code malloc} through
     * {@link DataMem#current()}.
     *
     * @param dtype the element type
     * @param shape the length of each axis (none for a 0-d array)
     * @return the array, which owns its memory
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
        return allocate(DataMem.current(), dtype, shape, false);
    }

    /**
     * A new array of zeros, allocated with {@code calloc} through {@link DataMem#current()}.
     *
     * @param dtype the element type
     * @param shape the length of each axis
     * @return the array, which owns its memory
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
        return allocate(DataMem.current(), dtype, shape, true);
    }

    private static NDArray allocate(DataMemHandler handler, DType dtype, long[] shape, boolean zeroed) {
        Objects.requireNonNull(dtype, "dtype");
        long[] s = ArrayLayout.checkShape(shape);
        long count = ArrayLayout.elementCount(s);
        long byteSize = ArrayLayout.byteSizeOf(dtype, s, count);
        DataMemAllocator allocator = handler.allocator();
        AllocationRefusal.clear();
        MemorySegment block = zeroed ? allocator.calloc(count, dtype.itemSize()) : allocator.malloc(byteSize);
        if (block.address() == 0) {
            throw AllocationRefusal.failure(handler, byteSize, zeroed ? "calloc" : "malloc");
        }
        NDArray array;
        try {
            // s is this array's own copy already, and C strides are never changed in place: no more copies
            array = newOwner(handler, block, byteSize, dtype, s, ArrayLayout.cStrides(dtype, s), 0, false, count);
        } catch (RuntimeException | Error e) {
            allocator.free(block, byteSize);
            throw e;
        }
        if (HandlerTrace.ENABLED) {
            HandlerTrace.created(handler, dtype, s);
        }
        return array;
    }

    /**
     * An array that takes ownership of a block a handler allocated: closing (or collecting) the
     * array frees the block through {@code handler} with {@code allocatedByteSize}. This is how
     * foreign memory with a known deallocator (a DLPack deleter, say) becomes an array.
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
     *                                  has elements,
     *                                  {@code allocatedByteSize} is negative, the shape is invalid,
     *                                  {@code strides} has the wrong length, or an element would lie
     *                                  outside {@code [block, block + allocatedByteSize)}; ownership
     *                                  then stays with the caller
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
        return adoptChecked(handler, block, allocatedByteSize, dtype, s, st, byteOffset, readOnly);
    }

    private static NDArray adoptChecked(DataMemHandler handler, MemorySegment block, long allocatedByteSize,
                                        DType dtype, long[] shape, long[] strides, long byteOffset,
                                        boolean readOnly) {
        if (!block.isNative()) {
            throw new IllegalArgumentException("block: a Java heap segment (expected: a native block that handler '"
                    + handler.name() + "' allocated)");
        }
        long count = ArrayLayout.elementCount(shape);
        if (block.address() == 0 && count != 0) {   // no element, no memory: DLPack allows NULL
            throw new IllegalArgumentException("block: NULL for " + count + " element(s) (expected: a"
                    + " block that handler '" + handler.name() + "' allocated)");
        }
        if (allocatedByteSize < 0) {
            throw new IllegalArgumentException("allocatedByteSize: " + allocatedByteSize + " (expected: >= 0, the size"
                    + " handler '" + handler.name() + "' allocated)");
        }
        ArrayLayout.checkExtent(dtype, shape, strides, byteOffset, allocatedByteSize);
        // shape and strides are adopt's own copies (or C strides, shared and never written): no more copies
        return newOwner(handler, block, allocatedByteSize, dtype, shape, strides, byteOffset, readOnly, count);
    }

    /**
     * An owner over a block, taking {@code shape} and {@code strides} as they are: the caller passes
     * arrays nobody else changes (shape and stride arrays are never written in place once in an array,
     * so views and the memory share them), and their element count.
     */
    private static NDArray newOwner(DataMemHandler handler, MemorySegment block, long allocatedByteSize, DType dtype,
                                    long[] shape, long[] strides, long byteOffset, boolean readOnly, long size) {
        return new NDArray(handler, block, allocatedByteSize, dtype, readOnly, byteOffset, shape, strides, size);
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
     * An array over memory datamem does not own, with explicit strides and offset.
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
        ArrayMemory memory = ArrayMemory.foreign(segment, MemoryTraits.host(
                io.datamem.internal.Checks.alignmentOf(segment.address())));
        return new NDArray(null, memory, false, dtype, segment.isReadOnly(), segment, segment.address(),
                segment.byteSize(), 0, byteOffset, s, st);
    }

    // ---------------------------------------------------------------------------------------------
    // Properties

    /**
     * The handler that frees this array's memory: the one captured at creation. A view reports its
     * base's.
     *
     * @return the handler, or null for memory datamem does not own ({@link #wrap})
     */
    public DataMemHandler handler() {
        return memory.handler;
    }

    /**
     * Whether this array owns its memory (frees it on close). False for views and wrapped memory.
     *
     * @return true for arrays made by {@link #empty}, {@link #zeros}, {@link #adopt} and copies
     */
    public boolean ownsData() {
        return owner && memory.handler != null;
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
        checkOpen();
        return view(offset, shape, strides, true);
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
     */
    public MemoryTraits traits() {
        return memory.traits;
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
        return size;
    }

    /**
     * The bytes the elements occupy: {@code size() * dtype().itemSize()}.
     *
     * @return bytes
     */
    public long byteSize() {
        return size * dtype.itemSize();
    }

    /**
     * Bytes from the start of the memory block to element [0, ..., 0].
     *
     * @return the byte offset
     */
    public long byteOffset() {
        return offset;
    }

    /**
     * The address of element [0, ..., 0], also for device memory.
     *
     * @return the address
     * @throws IllegalStateException         if the array {@linkplain #isClosed() is closed}
     * @throws UnsupportedOperationException if the array wraps a Java heap segment
     */
    public long address() {
        checkLive();
        if (memory.handler == null && !data.isNative()) {
            throw new UnsupportedOperationException(this + " wraps a Java heap segment, which has no native address:"
                    + " copy it into native memory first (copy())");
        }
        return dataAddress + offset;
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
        return closed || !memory.isLive(generation);
    }

    /**
     * Confines this array's memory strictly to the calling thread, and returns this array. Segments
     * and element access then work on this thread only (other threads get
     * {@link WrongThreadException}; {@link #segment()} too gives a segment confined to this thread),
     * and {@link #close()} and {@link #resize} must be called here too. Without it, element access
     * on the creating thread already makes no arena, but other threads may share the array (through
     * a shared arena, whose close synchronises with every thread of the JVM); use it to make sure an
     * array never leaves its thread. It applies to the memory, so to the owner and
     * all its views. Memory the host cannot access has no segments; confining it only records the
     * thread.
     *
     * @return this array
     * @throws IllegalStateException if the array is closed, wraps memory datamem does not own (its
     *                               segment keeps its own scope), is confined to another thread, or
     *                               its memory was already reached through a shared segment or from
     *                               another thread
     */
    public NDArray confined() {
        checkOpen();
        if (memory.handler == null) {
            throw new IllegalStateException(this + " wraps memory datamem does not own; its segment keeps the"
                    + " scope it was given");
        }
        memory.confine();
        return this;
    }

    /**
     * Whether this array's memory is confined to a thread ({@link #confined()}).
     *
     * @return true if confined
     */
    public boolean isConfined() {
        return memory.confinedTo() != null;
    }

    /**
     * Frees the memory of arrays that other threads closed (or that leaked) while this thread's
     * local segments still reached it, and of arrays whose creating thread has ended. An array's
     * elements are accessed on the thread that created it through a segment of no arena, checked
     * on each access (nothing to make or close); that thread may be inside an access when another
     * thread closes (or resizes) the array, so the array is closed at once but its block waits for
     * the creating thread, which frees it by itself, outside any access, the next time it creates
     * or closes an array. A thread that will not do either for a while (one about to block, say)
     * may call this to return that memory now. Cheap when nothing waits.
     *
     * @return how many blocks still wait for other threads
     */
    public static int reclaim() {
        ArrayMemory.drainRetired();
        return ArrayMemory.retiredCount();
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
     * array it is exactly {@link #byteSize()} bytes.
     *
     * @return the segment
     * @throws IllegalStateException         if the array {@linkplain #isClosed() is closed}
     * @throws UnsupportedOperationException if the memory is not host-accessible (device memory)
     */
    public MemorySegment segment() {
        checkLive();
        MemorySegment d = memory.data(generation, dataAddress, dataByteSize);   // may go to any thread
        if (d == null) {
            throw onDevice();
        }
        return ownRange(d);
    }

    /** This array's range of {@code d}, a segment over the whole block: read-only if the array is. */
    private MemorySegment ownRange(MemorySegment d) {
        if (readOnly) {
            d = d.asReadOnly();
        }
        if (size == 0) {
            return d.asSlice(offset, 0);
        }
        long lo = Strides.lowestByte(shape, strides);
        return d.asSlice(offset + lo, Strides.highestByte(shape, strides) - lo + dtype.itemSize());
    }

    /**
     * The segment element access uses on this thread, for use within the calling method only (it may
     * be this thread's local segment, which must never be handed out, nor held across anything that
     * may create or close an array: see {@link ArrayMemory}). The fast path is a few loads: this
     * thread's local segment, or else the cached shared one, while the memory is still at this
     * array's generation (which also says it is not being closed) and the segment usable from this
     * thread; otherwise the memory gives the right one (this thread's local segment, the shared one,
     * or a dead one).
     */
    MemorySegment hostData() {
        if (localThread == Thread.currentThread() && memory.liveGenerationPlain() == accessGeneration) {
            return localSegment();
        }
        MemorySegment d = data;
        if (d != null && memory.liveGenerationPlain() == accessGeneration
                && d.isAccessibleBy(Thread.currentThread())) {
            return d;
        }
        return hostDataSlow();
    }

    /**
     * This thread's local segment, made on first use (the dense float64 accessors need none): over
     * the block of this array's generation, which the grant found live; no arena (see
     * {@link ArrayMemory}). Only on {@link #localThread}, after its checks.
     */
    private MemorySegment localSegment() {
        MemorySegment l = local;
        if (l == null) {
            l = MemorySegment.ofAddress(dataAddress).reinterpret(dataByteSize);
            local = l = readOnly ? l.asReadOnly() : l;
        }
        return l;
    }

    /**
     * Makes the calling thread this array's {@link #localThread} if the memory grants it (see
     * {@link ArrayMemory#grantLocal}): what the accessors' own fast path needs, without a segment.
     *
     * @return true if granted now (the fast path's checks then pass, unless a close comes between)
     */
    private boolean grantLocalAccess() {
        Thread me = Thread.currentThread();
        if (localThread == me || closed || !memory.grantLocal(generation)) {
            return false;
        }
        localThread = me;
        return true;
    }

    private MemorySegment hostDataSlow() {
        checkOpen();
        MemorySegment d;
        if (memory.grantLocal(generation)) {
            localThread = Thread.currentThread();
            return localSegment();
        }
        d = memory.accessData(generation, dataAddress, dataByteSize);
        if (d == null) {
            throw onDevice();
        }
        d = readOnly ? d.asReadOnly() : d;
        data = d;
        return d;
    }

    /**
     * The segment of the typed element accessors: {@link #hostData()} without its thread check on
     * the shared segment, which the access itself makes (a strictly confined segment of another
     * thread throws {@link WrongThreadException}, and the accessor retries through
     * {@link #retryData}). The fast path is this thread's local segment, checked by thread and
     * generation, or the cached shared one and one comparison of generations.
     */
    private MemorySegment elementData() {
        if (localThread == Thread.currentThread() && memory.liveGenerationPlain() == accessGeneration) {
            return localSegment();
        }
        MemorySegment d = data;
        if (d != null && memory.liveGenerationPlain() == accessGeneration) {
            return d;
        }
        return hostDataSlow();
    }

    /** {@link #elementData()} of a writable array. */
    private MemorySegment writableElementData() {
        MemorySegment d = elementData();
        if (readOnly) {
            throw new UnsupportedOperationException(this + " is read-only");
        }
        return d;
    }

    /**
     * After an element access failed with {@code e}: the segment to retry with, if it failed for
     * being another thread's local segment; otherwise throws what the failure means (the array or
     * its memory closed, see {@link #closedOr}).
     */
    private MemorySegment retryData(RuntimeException e) {
        if (e instanceof WrongThreadException) {
            return hostData();   // its slow path gives this thread's segment, or says why not
        }
        throw closedOr((IllegalStateException) e);
    }

    private double readDoubleRetry(long off, RuntimeException e) {
        MemorySegment d = retryData(e);
        try {
            return ElementCodec.readDouble(dtype, d, off);
        } catch (IllegalStateException again) {
            throw closedOr(again);
        }
    }

    private void writeDoubleRetry(long off, double value, RuntimeException e) {
        MemorySegment d = retryData(e);
        try {
            ElementCodec.writeDouble(dtype, d, off, value);
        } catch (IllegalStateException again) {
            throw closedOr(again);
        }
    }

    private long readLongRetry(long off, RuntimeException e) {
        MemorySegment d = retryData(e);
        try {
            return ElementCodec.readLong(dtype, d, off);
        } catch (IllegalStateException again) {
            throw closedOr(again);
        }
    }

    private void writeLongRetry(long off, long value, RuntimeException e) {
        MemorySegment d = retryData(e);
        try {
            ElementCodec.writeLong(dtype, d, off, value);
        } catch (IllegalStateException again) {
            throw closedOr(again);
        }
    }

    private UnsupportedOperationException onDevice() {
        return new UnsupportedOperationException("this array's memory is on " + memory.traits.device() + " ("
                + memory.traits.kind() + " memory of handler '" + handlerName()
                + "'), which the host cannot access; copy it to host memory and read that: with any backend,"
                + " traits().interchange().copyToHost(...) or a DLPack export to the CPU device"
                + " (DLPack.toDLPack(array, DLPackOptions.defaults().withDlDevice(Device.CPU)));"
                + " with datamem's, CUDA: io.datamem.cuda.CudaMemory.toHost(array) or CudaMemory.copy(source,"
                + " target), SYCL USM device memory: io.datamem.sycl.SyclQueue.copy(destination, source))");
    }

    private MemorySegment writableData() {
        MemorySegment d = hostData();
        if (readOnly) {
            throw new UnsupportedOperationException(this + " is read-only");
        }
        return d;
    }

    private String handlerName() {
        return memory.handler == null ? "none" : memory.handler.name();
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException(this + " is closed");
        }
    }

    /**
     * The lifecycle check of every path that hands out an address, a segment or a view: this array
     * is open and its memory is still the memory it was made for (not freed, not being closed, not
     * reallocated by a resize; a wrapped segment still alive). Exports pin instead
     * ({@link #retainExport()}), which checks the same under the same lock.
     */
    private void checkLive() {
        checkOpen();
        memory.checkLive(generation, this);
    }

    /** What a failed access throws: the array's or its memory's closing (caused by {@code e}), else {@code e}. */
    RuntimeException closedOr(IllegalStateException e) {
        if (closed) {
            return new IllegalStateException(this + " is closed" + (memory.handler == null ? ""
                    : ": its memory was freed through handler '" + handlerName() + "'"), e);
        }
        IllegalStateException why = memory.whyNotLive(generation, this);
        if (why != null) {
            why.initCause(e);
            return why;
        }
        return e;
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
     */
    public double getDouble(long... index) {
        MemorySegment d = elementData();
        long off = ArrayLayout.elementOffset(shape, strides, offset, index);
        try {
            return ElementCodec.readDouble(dtype, d, off);
        } catch (IllegalStateException | WrongThreadException e) {
            return readDoubleRetry(off, e);
        }
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
     */
    public void setDouble(double value, long... index) {
        MemorySegment d = writableElementData();
        long off = ArrayLayout.elementOffset(shape, strides, offset, index);
        try {
            ElementCodec.writeDouble(dtype, d, off, value);
        } catch (IllegalStateException | WrongThreadException e) {
            writeDoubleRetry(off, value, e);
        }
    }

    /**
     * Reads an element of a 1-axis array as a double, as {@link #getDouble(long...)} does,
     * without an index array: the accessor to use in loops.
     *
     * @param i the index on axis 0
     * @return the value
     * @throws IllegalArgumentException      if the array is not 1-dimensional ({@link #ndim()})
     * @throws IndexOutOfBoundsException     if an index is outside its axis
     * @throws UnsupportedOperationException if the dtype is complex or custom, or the memory is on a
     *                                       device
     * @throws IllegalStateException         if the array {@linkplain #isClosed() is closed}
     */
    public double getDouble(long i) {
        if (localThread == Thread.currentThread() && memory.liveGenerationPlain() == accessGeneration
                && denseLength1 != 0) {
            return EVERYTHING.get(ValueLayout.JAVA_DOUBLE_UNALIGNED, elementBase + (denseIndex1(i) << 3));
        }
        return getDoubleShared(i);
    }

    private double getDoubleShared(long i) {
        if (grantLocalAccess()) {   // this thread's first access: the fast path from now on
            return getDouble(i);
        }
        MemorySegment d = elementData();
        if (denseLength1 != 0) {
            long off = offset + (denseIndex1(i) << 3);
            try {
                return d.get(ValueLayout.JAVA_DOUBLE_UNALIGNED, off);
            } catch (IllegalStateException | WrongThreadException e) {
                return readDoubleRetry(off, e);
            }
        }
        long off = offset1(i);
        try {
            return ElementCodec.readDouble(dtype, d, off);
        } catch (IllegalStateException | WrongThreadException e) {
            return readDoubleRetry(off, e);
        }
    }

    /**
     * Writes an element of a 1-axis array from a double, as {@link #setDouble(double, long...)} does,
     * without an index array: the accessor to use in loops.
     *
     * @param value the value
     * @param i the index on axis 0
     * @throws IllegalArgumentException      if the array is not 1-dimensional ({@link #ndim()})
     * @throws IndexOutOfBoundsException     if an index is outside its axis
     * @throws UnsupportedOperationException if the dtype is custom, the memory is on a device, or the
     *                                       array is read-only
     * @throws IllegalStateException         if the array {@linkplain #isClosed() is closed}
     */
    public void setDouble(double value, long i) {
        if (localThread == Thread.currentThread() && memory.liveGenerationPlain() == accessGeneration
                && denseLength1 != 0 && !readOnly) {
            EVERYTHING.set(ValueLayout.JAVA_DOUBLE_UNALIGNED, elementBase + (denseIndex1(i) << 3), value);
            return;
        }
        setDoubleShared(value, i);
    }

    private void setDoubleShared(double value, long i) {
        if (grantLocalAccess()) {   // this thread's first access: the fast path from now on
            setDouble(value, i);
            return;
        }
        MemorySegment d = writableElementData();
        if (denseLength1 != 0) {
            long off = offset + (denseIndex1(i) << 3);
            try {
                d.set(ValueLayout.JAVA_DOUBLE_UNALIGNED, off, value);
            } catch (IllegalStateException | WrongThreadException e) {
                writeDoubleRetry(off, value, e);
            }
            return;
        }
        long off = offset1(i);
        try {
            ElementCodec.writeDouble(dtype, d, off, value);
        } catch (IllegalStateException | WrongThreadException e) {
            writeDoubleRetry(off, value, e);
        }
    }

    /**
     * Reads an element of a 2-axis array as a double, as {@link #getDouble(long...)} does,
     * without an index array: the accessor to use in loops.
     *
     * @param i the index on axis 0
     * @param j the index on axis 1
     * @return the value
     * @throws IllegalArgumentException      if the array is not 2-dimensional ({@link #ndim()})
     * @throws IndexOutOfBoundsException     if an index is outside its axis
     * @throws UnsupportedOperationException if the dtype is complex or custom, or the memory is on a
     *                                       device
     * @throws IllegalStateException         if the array {@linkplain #isClosed() is closed}
     */
    public double getDouble(long i, long j) {
        if (localThread == Thread.currentThread() && memory.liveGenerationPlain() == accessGeneration
                && denseRows2 != 0) {
            return EVERYTHING.get(ValueLayout.JAVA_DOUBLE_UNALIGNED, elementBase + denseIndex2(i, j));
        }
        return getDoubleShared(i, j);
    }

    private double getDoubleShared(long i, long j) {
        if (grantLocalAccess()) {   // this thread's first access: the fast path from now on
            return getDouble(i, j);
        }
        MemorySegment d = elementData();
        if (denseRows2 != 0) {
            long off = offset + denseIndex2(i, j);
            try {
                return d.get(ValueLayout.JAVA_DOUBLE_UNALIGNED, off);
            } catch (IllegalStateException | WrongThreadException e) {
                return readDoubleRetry(off, e);
            }
        }
        long off = offset2(i, j);
        try {
            return ElementCodec.readDouble(dtype, d, off);
        } catch (IllegalStateException | WrongThreadException e) {
            return readDoubleRetry(off, e);
        }
    }

    /**
     * Writes an element of a 2-axis array from a double, as {@link #setDouble(double, long...)} does,
     * without an index array: the accessor to use in loops.
     *
     * @param value the value
     * @param i the index on axis 0
     * @param j the index on axis 1
     * @throws IllegalArgumentException      if the array is not 2-dimensional ({@link #ndim()})
     * @throws IndexOutOfBoundsException     if an index is outside its axis
     * @throws UnsupportedOperationException if the dtype is custom, the memory is on a device, or the
     *                                       array is read-only
     * @throws IllegalStateException         if the array {@linkplain #isClosed() is closed}
     */
    public void setDouble(double value, long i, long j) {
        if (localThread == Thread.currentThread() && memory.liveGenerationPlain() == accessGeneration
                && denseRows2 != 0 && !readOnly) {
            EVERYTHING.set(ValueLayout.JAVA_DOUBLE_UNALIGNED, elementBase + denseIndex2(i, j), value);
            return;
        }
        setDoubleShared(value, i, j);
    }

    private void setDoubleShared(double value, long i, long j) {
        if (grantLocalAccess()) {   // this thread's first access: the fast path from now on
            setDouble(value, i, j);
            return;
        }
        MemorySegment d = writableElementData();
        if (denseRows2 != 0) {
            long off = offset + denseIndex2(i, j);
            try {
                d.set(ValueLayout.JAVA_DOUBLE_UNALIGNED, off, value);
            } catch (IllegalStateException | WrongThreadException e) {
                writeDoubleRetry(off, value, e);
            }
            return;
        }
        long off = offset2(i, j);
        try {
            ElementCodec.writeDouble(dtype, d, off, value);
        } catch (IllegalStateException | WrongThreadException e) {
            writeDoubleRetry(off, value, e);
        }
    }

    /**
     * Reads an element of a 1-axis array as a long, as {@link #getLong(long...)} does,
     * without an index array: the accessor to use in loops.
     *
     * @param i the index on axis 0
     * @return the value
     * @throws IllegalArgumentException      if the array is not 1-dimensional ({@link #ndim()})
     * @throws IndexOutOfBoundsException     if an index is outside its axis
     * @throws UnsupportedOperationException if the dtype is complex or custom, or the memory is on a
     *                                       device
     * @throws IllegalStateException         if the array {@linkplain #isClosed() is closed}
     */
    public long getLong(long i) {
        MemorySegment d = elementData();
        long off = offset1(i);
        try {
            return ElementCodec.readLong(dtype, d, off);
        } catch (IllegalStateException | WrongThreadException e) {
            return readLongRetry(off, e);
        }
    }

    /**
     * Writes an element of a 1-axis array from a long, as {@link #setLong(long, long...)} does,
     * without an index array: the accessor to use in loops.
     *
     * @param value the value
     * @param i the index on axis 0
     * @throws IllegalArgumentException      if the array is not 1-dimensional ({@link #ndim()})
     * @throws IndexOutOfBoundsException     if an index is outside its axis
     * @throws UnsupportedOperationException if the dtype is custom, the memory is on a device, or the
     *                                       array is read-only
     * @throws IllegalStateException         if the array {@linkplain #isClosed() is closed}
     */
    public void setLong(long value, long i) {
        MemorySegment d = writableElementData();
        long off = offset1(i);
        try {
            ElementCodec.writeLong(dtype, d, off, value);
        } catch (IllegalStateException | WrongThreadException e) {
            writeLongRetry(off, value, e);
        }
    }

    /**
     * Reads an element of a 2-axis array as a long, as {@link #getLong(long...)} does,
     * without an index array: the accessor to use in loops.
     *
     * @param i the index on axis 0
     * @param j the index on axis 1
     * @return the value
     * @throws IllegalArgumentException      if the array is not 2-dimensional ({@link #ndim()})
     * @throws IndexOutOfBoundsException     if an index is outside its axis
     * @throws UnsupportedOperationException if the dtype is complex or custom, or the memory is on a
     *                                       device
     * @throws IllegalStateException         if the array {@linkplain #isClosed() is closed}
     */
    public long getLong(long i, long j) {
        MemorySegment d = elementData();
        long off = offset2(i, j);
        try {
            return ElementCodec.readLong(dtype, d, off);
        } catch (IllegalStateException | WrongThreadException e) {
            return readLongRetry(off, e);
        }
    }

    /**
     * Writes an element of a 2-axis array from a long, as {@link #setLong(long, long...)} does,
     * without an index array: the accessor to use in loops.
     *
     * @param value the value
     * @param i the index on axis 0
     * @param j the index on axis 1
     * @throws IllegalArgumentException      if the array is not 2-dimensional ({@link #ndim()})
     * @throws IndexOutOfBoundsException     if an index is outside its axis
     * @throws UnsupportedOperationException if the dtype is custom, the memory is on a device, or the
     *                                       array is read-only
     * @throws IllegalStateException         if the array {@linkplain #isClosed() is closed}
     */
    public void setLong(long value, long i, long j) {
        MemorySegment d = writableElementData();
        long off = offset2(i, j);
        try {
            ElementCodec.writeLong(dtype, d, off, value);
        } catch (IllegalStateException | WrongThreadException e) {
            writeLongRetry(off, value, e);
        }
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
     */
    public long getLong(long... index) {
        MemorySegment d = elementData();
        long off = ArrayLayout.elementOffset(shape, strides, offset, index);
        try {
            return ElementCodec.readLong(dtype, d, off);
        } catch (IllegalStateException | WrongThreadException e) {
            return readLongRetry(off, e);
        }
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
     */
    public void setLong(long value, long... index) {
        MemorySegment d = writableElementData();
        long off = ArrayLayout.elementOffset(shape, strides, offset, index);
        try {
            ElementCodec.writeLong(dtype, d, off, value);
        } catch (IllegalStateException | WrongThreadException e) {
            writeLongRetry(off, value, e);
        }
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
     */
    public boolean getBoolean(long... index) {
        MemorySegment d = hostData();
        long off = ArrayLayout.elementOffset(shape, strides, offset, index);
        try {
            return ElementCodec.readBoolean(dtype, d, off);
        } catch (IllegalStateException e) {
            throw closedOr(e);
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
     */
    public void setBoolean(boolean value, long... index) {
        setLong(value ? 1 : 0, index);
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
     */
    public double[] getComplex(long... index) {
        MemorySegment d = hostData();
        long off = ArrayLayout.elementOffset(shape, strides, offset, index);
        try {
            return ElementCodec.readAsComplex(dtype, d, off);
        } catch (IllegalStateException e) {
            throw closedOr(e);
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
     */
    public void setComplex(double real, double imaginary, long... index) {
        MemorySegment d = writableData();
        long off = ArrayLayout.elementOffset(shape, strides, offset, index);
        try {
            ElementCodec.writeAsComplex(dtype, d, off, real, imaginary);
        } catch (IllegalStateException e) {
            throw closedOr(e);
        }
    }

    /**
     * Sets every element to a value, converting as {@link #setDouble} does.
     *
     * @param value the value
     * @throws UnsupportedOperationException if the dtype is custom, the memory is on a device, or the
     *                                       array is read-only
     * @throws IllegalStateException         if the array is closed
     */
    public void fill(double value) {
        MemorySegment d = writableData();
        try {
            if (value == 0 && Double.doubleToRawLongBits(value) == 0 && isCContiguous()) {
                segment().fill((byte) 0);
            } else {
                forEachOffset(off -> ElementCodec.writeDouble(dtype, d, off, value));
            }
        } catch (IllegalStateException e) {
            throw closedOr(e);
        }
    }

    /**
     * Sets every element to a value, converting as {@link #setLong} does.
     *
     * @param value the value
     * @throws UnsupportedOperationException if the dtype is custom, the memory is on a device, or the
     *                                       array is read-only
     * @throws IllegalStateException         if the array is closed
     */
    public void fill(long value) {
        MemorySegment d = writableData();
        try {
            if (value == 0 && isCContiguous()) {
                segment().fill((byte) 0);
            } else {
                forEachOffset(off -> ElementCodec.writeLong(dtype, d, off, value));
            }
        } catch (IllegalStateException e) {
            throw closedOr(e);
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
     */
    public void copyFrom(double[] values) {
        Objects.requireNonNull(values, "values");
        checkLength(values.length);
        MemorySegment d = writableData();
        int[] i = {0};
        try {
            forEachOffset(off -> ElementCodec.writeDouble(dtype, d, off, values[i[0]++]));
        } catch (IllegalStateException e) {
            throw closedOr(e);
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
     */
    public void copyFrom(long[] values) {
        Objects.requireNonNull(values, "values");
        checkLength(values.length);
        MemorySegment d = writableData();
        int[] i = {0};
        try {
            forEachOffset(off -> ElementCodec.writeLong(dtype, d, off, values[i[0]++]));
        } catch (IllegalStateException e) {
            throw closedOr(e);
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
     */
    public double[] toDoubleArray() {
        MemorySegment d = hostData();
        double[] out = new double[javaLength()];
        int[] i = {0};
        try {
            forEachOffset(off -> out[i[0]++] = ElementCodec.readDouble(dtype, d, off));
        } catch (IllegalStateException e) {
            throw closedOr(e);
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
     */
    public long[] toLongArray() {
        MemorySegment d = hostData();
        long[] out = new long[javaLength()];
        int[] i = {0};
        try {
            forEachOffset(off -> out[i[0]++] = ElementCodec.readLong(dtype, d, off));
        } catch (IllegalStateException e) {
            throw closedOr(e);
        }
        return out;
    }

    private int javaLength() {
        if (size > Integer.MAX_VALUE - 8) {
            throw new IllegalStateException(this + " has " + size + " elements, more than a Java array holds");
        }
        return (int) size;
    }

    private void checkLength(int length) {
        if (length != size) {
            throw new IllegalArgumentException("values: " + length + " elements (expected: " + size
                    + ", the size of shape " + Arrays.toString(shape) + ")");
        }
    }

    /** Calls {@code action} with the byte offset of every element, in C order. */
    void forEachOffset(LongConsumer action) {
        ArrayTransfer.forEachOffset(offset, shape, strides, size, action);
    }

    /**
     * A new owning C-contiguous copy, allocated through {@link DataMem#current()}.
     *
     * @return the copy
     * @throws OutOfNativeMemoryException    if the allocation fails
     * @throws LimitExceededException        if a limiting adaptor of the handler refused the request
     * @throws UnsupportedOperationException if the memory is on a device
     * @throws IllegalStateException         if the array is closed
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
        checkOpen();
        if (slices.length > shape.length) {
            throw new IllegalArgumentException("slices: " + slices.length + " (expected: at most " + shape.length
                    + ", one per axis)");
        }
        long[] s = shape.clone();
        long[] st = strides.clone();
        long off = offset;
        for (int i = 0; i < slices.length; i++) {
            long[] r = Objects.requireNonNull(slices[i], "slices[" + i + "]").resolve(shape[i]);
            s[i] = r[1];
            if (r[1] > 0) {
                off += r[0] * strides[i];
            }
            st[i] = strides[i] * r[2];
        }
        return view(off, s, st);
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
        checkOpen();
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
        return view(offset + ix * strides[axis], s, st);
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
        checkOpen();
        long[] s = ArrayLayout.inferShape(newShape, size);
        if (isCContiguous()) {
            return view(offset, s, ArrayLayout.cStrides(dtype, s));
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
        checkOpen();
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
        return view(offset, s, st);
    }

    private NDArray view(long newOffset, long[] newShape, long[] newStrides) {
        return view(newOffset, newShape, newStrides, readOnly);
    }

    private NDArray view(long newOffset, long[] newShape, long[] newStrides, boolean viewReadOnly) {
        checkLive();
        NDArray v = new NDArray(this, memory, false, dtype, viewReadOnly, data, dataAddress, dataByteSize, generation,
                newOffset, newShape, newStrides);
        if (viewReadOnly == readOnly) {   // the same thread's local segment, as writable as this array's
            v.local = local;
            v.localThread = localThread;
        }
        return v;
    }

    // ---------------------------------------------------------------------------------------------
    // Resize and close

    /**
     * Changes the shape in place, reallocating through the captured handler's {@code realloc}. The
     * data is kept in C order up to the smaller size; new bytes are zero, as NumPy's
     * {@code ndarray.resize}. Every view and segment obtained before becomes invalid (access throws
     * {@link IllegalStateException}), even when the reallocation fails.
     *
     * @param newShape the new shape
     * @throws IllegalStateException      if this array does not own its memory (a view or wrapped
     *                                    memory), is read-only, is not C-contiguous, is closed, has a
     *                                    buffer export held, or a segment over it is in use by a
     *                                    native call
     * @throws UnsupportedOperationException if the handler's allocator cannot reallocate (an imported
     *                                    DLPack tensor); the array keeps its old shape and contents
     * @throws IllegalArgumentException   if the new shape is invalid
     * @throws LimitExceededException    if a limiting adaptor of the handler refused the request; the
     *                                    array keeps its old shape and contents
     * @throws WrongThreadException      if the memory is {@linkplain #confined() confined} to another
     *                                    thread and was reached through a segment; nothing changes
     * @throws OutOfNativeMemoryException if the reallocation fails; the array keeps its old shape and
     *                                    contents
     * @throws RuntimeException           whatever else the handler's allocator throws: the array keeps its
     *                                    old shape and contents, unless the exception says the block
     *                                    was freed ({@link BlockReleased}, as a guard that found an
     *                                    overrun does); the array is then closed
     */
    public void resize(long... newShape) {
        checkOpen();
        if (!ownsData()) {
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
        DataMemHandler handler = memory.handler;
        synchronized (memory) {
            memory.checkLive(generation, this);
            if (memory.exports() > 0) {
                throw new IllegalStateException("cannot resize " + this + ": " + memory.exports()
                        + " buffer export(s) still held");
            }
            memory.claimResize(generation, this);   // no close, pin or access passes until reattached
            long oldAllocated = memory.allocatedByteSize();
            long oldBytes = byteSize();
            // false: another thread's local segment still reaches the block, which must then stay
            // where it is until that thread frees it; the data moves to a new block instead
            boolean unreachable;
            try {
                unreachable = memory.invalidate();
            } catch (RuntimeException e) {
                memory.unclaimResize(generation);
                throw e;
            }
            MemorySegment old = MemorySegment.ofAddress(memory.address());
            MemorySegment moved;
            AllocationRefusal.clear();
            try {
                moved = unreachable ? handler.allocator().realloc(old, oldAllocated, newBytes)
                        : moveAside(handler.allocator(), old, oldAllocated, newBytes);
            } catch (RuntimeException | Error e) {
                if (unreachable && BlockReleased.by(e)) {
                    memory.released();   // the allocator freed the block: the array is closed
                    data = null;
                    dropLocal();
                    throw e;
                }
                memory.reattach();
                data = null;
                dropLocal();
                generation = memory.generation();
                accessGeneration = generation;
                throw e;
            }
            if (moved.address() == 0) {
                memory.reattach();
                data = null;
                dropLocal();
                generation = memory.generation();
                accessGeneration = generation;
                throw AllocationRefusal.failure(handler, newBytes, "realloc");
            }
            if (!unreachable) {
                memory.retireLocal();
            }
            memory.reattach(moved.address(), newBytes);
            data = null;
            dropLocal();
            generation = memory.generation();
            accessGeneration = generation;
            dataAddress = moved.address();
            dataByteSize = newBytes;
            offset = 0;
            shape = s;
            strides = ArrayLayout.cStrides(dtype, s);
            size = count;
            layout();
            if (newBytes > oldBytes && memory.traits.hostAccessible()) {
                // Under the memory's lock: nobody can free the block meanwhile.
                MemorySegment.ofAddress(dataAddress).reinterpret(newBytes).asSlice(oldBytes, newBytes - oldBytes)
                        .fill((byte) 0);
            }
        }
    }

    /** Forgets this thread's local segment (the owner's, on resize): the next access asks the memory again. */
    private void dropLocal() {
        local = null;
        localThread = null;
    }

    /** realloc's effect without freeing the old block: a new block holding the old one's bytes, or NULL. */
    private static MemorySegment moveAside(DataMemAllocator allocator, MemorySegment old, long oldByteSize,
                                           long newByteSize) {
        MemorySegment moved = allocator.malloc(newByteSize);
        long kept = Math.min(oldByteSize, newByteSize);
        if (moved.address() != 0 && kept > 0) {
            MemorySegment.copy(old.reinterpret(kept), 0, moved.reinterpret(kept), 0, kept);
        }
        return moved;
    }

    /**
     * Closes the array. An owning array invalidates every segment and view over its memory and frees
     * it through the handler captured at creation, with the byte size it allocated. A view or a
     * wrapped array only becomes unusable itself. Idempotent.
     *
     * @throws IllegalStateException if a buffer export of this memory is still held, or a segment
     *                               over it is in use by a native call; the array stays open
     * @throws WrongThreadException  if the memory is {@linkplain #confined() confined} to another
     *                               thread and was reached through a segment; the array stays open
     */
    @Override
    public void close() {
        if (ownsData()) {
            ArrayMemory.drainRetired();
            memory.close();
        }
        closed = true;
        accessGeneration = CLOSED_ARRAY;
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
     * resized.
     *
     * @param flags the request, a combination of {@link BufferFlags}
     * @return the view; release it when done
     * @throws BufferException       if a flag cannot be honoured; the message names it and why
     * @throws IllegalStateException if the array is closed
     */
    @Override
    public BufferView getBuffer(int flags) {
        if (memory.liveGenerationPlain() != accessGeneration) {
            checkLive();   // closed, resized or foreign: says so before the request is looked at
        }
        // Validated (and its arrays copied for the view) before anything is pinned
        BufferView.Builder b = bufferRequest(flags).fill();
        MemoryTraits traits = memory.traits;
        boolean onDevice = !traits.hostAccessible();
        // Pinned, and the segment read, under one lock: a close or resize either happened before
        // (the pin fails) or waits for the view's release (it is refused meanwhile).
        MemorySegment whole = retainExport(!onDevice);
        try {
            b.releaseAction(this::releaseExport);
            if (onDevice) {
                BufferDeviceHook hook = traits.hook(BufferDeviceHook.class).orElseThrow(() -> new BufferException(
                        this + " is " + traits.kind() + " memory on " + traits.device() + ", but handler '"
                        + handlerName() + "' gives no BufferDeviceHook to describe it (its backend must attach a"
                        + " DeviceInterchange that serves one to its traits)", BufferFlags.DEVICE));
                MemorySegment block = MemorySegment.ofAddress(dataAddress);
                DeviceInfo info = hook.deviceInfo(block, traits);
                b.device(hook.bufferDeviceId(), info);
            } else {
                b.segment(ownRange(whole));
            }
            return b.build();
        } catch (RuntimeException | Error e) {
            releaseExport();
            throw e;
        }
    }


    /** The request checked against this array's memory, as {@link BufferRequest} does for any exporter. */
    private BufferRequest bufferRequest(int flags) {
        return BufferRequest.of(this, flags)
                .memory(memory.traits)
                .readOnly(readOnly)
                .elements(dtype.toString(), dtype.format(), dtype.itemSize())
                .layout(dataAddress + offset, shape, strides);
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
    // The export pin

    /**
     * Runs {@code action} with this array's memory pinned: the lifecycle check that every export
     * goes through. The pin is taken under the memory's lock, as close and resize decide under it,
     * so either it is taken before a close or resize begins (which is then refused until
     * {@code action} returns) or this throws and {@code action} does not run. A protocol that hands
     * this array's address or segment to code outside the JVM reads them inside {@code action};
     * DLPack and the USM array interface are built this way, and a third-party protocol can be too.
     * An export that outlives the action (a consumer holding the memory) holds a {@link #pin()}
     * instead, or a buffer view ({@link #getBuffer(int)}), whose release drops its own pin.
     *
     * @param action what to do with the memory pinned; it may call any method of this array
     *               except {@link #close()} and {@link #resize(long...)}, which are refused
     * @param <T>    what the action returns
     * @return what {@code action} returned
     * @throws NullPointerException  if {@code action} is null
     * @throws IllegalStateException if the array is closed or being closed, or is a view of an
     *                               owner resized since the view was made
     */
    public <T> T whilePinned(Supplier<? extends T> action) {
        Objects.requireNonNull(action, "action");
        retainExport();
        try {
            return action.get();
        } finally {
            releaseExport();
        }
    }

    /**
     * Pins this array's memory until the returned pin is closed: the hold an export keeps while a
     * consumer outside the JVM may read the memory (DLPack keeps one per tensor until its deleter
     * runs, Arrow's C Data export until its release callback). The lifecycle check is
     * {@link #whilePinned}'s: either the pin is taken before a close or resize of the memory begins
     * (which is then refused, naming the pin, until it is closed) or this throws. The pin costs no
     * buffer description, so it is the cheap way for a protocol that writes its own struct.
     *
     * @return the pin; close it exactly when the consumer is done (closing it again does nothing)
     * @throws IllegalStateException if the array is closed or being closed, or is a view of an
     *                               owner resized since the view was made
     */
    public Pin pin() {
        checkOpen();
        Pin pin = new Pin(memory, this);
        memory.pinExport(generation, this);
        return pin;
    }

    /**
     * A hold on an array's memory that keeps it from being closed or resized: see {@link #pin()}.
     * Closing it releases the hold once, from any thread; later closes do nothing, so a consumer
     * that calls its release twice cannot unbalance the array's count of exports.
     */
    public static final class Pin implements AutoCloseable {

        private static final java.lang.invoke.VarHandle RELEASED;

        static {
            try {
                RELEASED = java.lang.invoke.MethodHandles.lookup().findVarHandle(Pin.class, "released", boolean.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        private final ArrayMemory memory;
        /** Held strongly: a pinned array is never collected, so its memory is never reclaimed. */
        private final NDArray array;
        @SuppressWarnings("unused") // through RELEASED
        private volatile boolean released;

        private Pin(ArrayMemory memory, NDArray array) {
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
                memory.unpinExport();
            }
        }

        @Override
        public String toString() {
            return "NDArray.Pin[" + array.dtype + ", shape " + Arrays.toString(array.shape) + (released ? ", released" : ", held") + "]";
        }
    }

    /**
     * Records that a buffer export of this array's memory is held: the owner cannot be closed or
     * resized until {@link #releaseExport()}. Checks and pins in one step, a handshake with the
     * closes and resizes (see {@code ArrayMemory.pinExport}), so an export either pins before a
     * close begins (the close is then refused) or fails here.
     *
     * @throws IllegalStateException if the array {@linkplain #isClosed() is closed}
     */
    void retainExport() {
        checkOpen();
        memory.pinExport(generation, this);
    }

    /**
     * {@link #retainExport()}, and under the same lock the segment over the whole block that may go
     * to any thread, as {@link #segment()} takes it.
     *
     * @param withData whether to take the segment (false for memory the host cannot access)
     * @return the segment, or null without {@code withData}
     * @throws IllegalStateException if the array or its memory is closed, or the memory was resized
     * @throws WrongThreadException  if the memory is confined to another thread
     */
    private MemorySegment retainExport(boolean withData) {
        checkOpen();
        return memory.pinExport(generation, this, withData, dataAddress, dataByteSize);
    }

    /**
     * Releases what {@link #retainExport()} recorded.
     *
     * @throws IllegalStateException if no export is held
     */
    void releaseExport() {
        memory.unpinExport();
    }

    @Override
    public String toString() {
        return "NDArray[" + dtype + ", shape " + Arrays.toString(shape) + ", handler " + handlerName()
                + (ownsData() ? ", owner" : base != null ? ", view" : ", foreign") + "]";
    }
}
