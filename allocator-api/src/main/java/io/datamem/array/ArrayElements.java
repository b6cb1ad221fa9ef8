package io.datamem.array;

import io.datamem.DataMemHandler;
import io.datamem.MemoryTraits;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Objects;
import java.util.function.LongConsumer;

/**
 * What {@link NDArray} is made of for its elements: the layout its accessors read (shape, strides
 * and origin, and the first two axes as fields), the memory they go through, every typed element
 * accessor (one index check, {@code at1}, {@code at2} or {@code atN}, and one read or write through
 * {@link ElementCodec}, which serves every dtype), the bulk copies between an array and Java arrays,
 * and the lifecycle check with its messages. Its public methods are {@code NDArray}'s (documented
 * there); the class is not a type of its own for users: sealed, package-private, its only subclass
 * {@code NDArray}.
 */
abstract sealed class ArrayElements permits NDArray {

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
    byte nd;
    long d0;
    long d1;
    long s0;
    long s1;

    /** The layout of a new array; its {@link #memory} is set by the subclass's constructor. */
    ArrayElements(DType dtype, boolean readOnly, long origin, long[] shape, long[] strides) {
        this.dtype = dtype;
        this.readOnly = readOnly;
        this.origin = origin;
        this.shape = shape;
        this.strides = strides;
        layout();
    }

    /** Copies the first two axes of {@link #shape} and {@link #strides} into the accessors' fields. */
    final void layout() {
        int n = shape.length;
        nd = (byte) n;
        d0 = n > 0 ? shape[0] : 0;
        d1 = n > 1 ? shape[1] : 0;
        s0 = n > 0 ? strides[0] : 0;
        s1 = n > 1 ? strides[1] : 0;
    }

    private NDArray self() {
        return (NDArray) this;
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
    final long at1(long i) {
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
    final long at2(long i, long j) {
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
    final long atN(long[] index) {
        return ArrayLayout.elementOffset(shape, strides, origin, index);
    }

    /** Why an index was refused: {@link ArrayLayout#elementOffset} checks it again and throws. */
    private RuntimeException badIndex(long... index) {
        ArrayLayout.elementOffset(shape, strides, origin, index);
        throw new AssertionError("index " + Arrays.toString(index) + " is within shape " + Arrays.toString(shape));
    }

    /**
     * The segment this thread's accesses go through (see {@link ArrayMemory}): plain loads and
     * comparisons, all of which stay out of loops. Only unshared memory asks which thread this is
     * (its owner's accesses go through {@link ArrayMemory#ALL}); shared memory's segment serves every
     * thread, its owner included, so a loop body run by the owner and by workers takes one path (a
     * thread test taken both ways made C2 recompile such a loop over and over: docs/decisions.md).
     * Both kinds of memory are in this test's profile from the first array on ({@link AccessProfile}).
     */
    final MemorySegment access() {
        ArrayMemory m = memory;
        MemorySegment s = m.seg;
        return s == ArrayMemory.NOT_SHARED && m.owner == Thread.currentThread() ? ArrayMemory.ALL : s;
    }

    // Each accessor calls the codec on its only path that returns, where the JIT always inlines it
    // (a call it meets on a branch it thinks rare it may leave a call: docs/decisions.md, "Every
    // element path inlines").

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
     * @throws IllegalArgumentException      if the number of indices is not {@link NDArray#ndim()}
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
     * @throws IllegalArgumentException      if the array is not 1-dimensional ({@link NDArray#ndim()})
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
     * @throws IllegalArgumentException      if the array is not 2-dimensional ({@link NDArray#ndim()})
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
     * @throws IllegalArgumentException      if the number of indices is not {@link NDArray#ndim()}
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
     * @throws IllegalArgumentException      if the array is not 1-dimensional ({@link NDArray#ndim()})
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
     * @throws IllegalArgumentException      if the array is not 2-dimensional ({@link NDArray#ndim()})
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
     * @throws IllegalArgumentException      if the number of indices is not {@link NDArray#ndim()}
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
     * @throws IllegalArgumentException      if the array is not 1-dimensional ({@link NDArray#ndim()})
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
     * @throws IllegalArgumentException      if the array is not 2-dimensional ({@link NDArray#ndim()})
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
     * @throws IllegalArgumentException      if the number of indices is not {@link NDArray#ndim()}
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
     * @throws IllegalArgumentException      if the array is not 1-dimensional ({@link NDArray#ndim()})
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
     * @throws IllegalArgumentException      if the array is not 2-dimensional ({@link NDArray#ndim()})
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
     * @throws IllegalArgumentException      if the number of indices is not {@link NDArray#ndim()}
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
     * @throws IllegalArgumentException      if the number of indices is not {@link NDArray#ndim()}
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
     * @throws IllegalArgumentException      if the number of indices is not {@link NDArray#ndim()}
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
     * @throws IllegalArgumentException      if the number of indices is not {@link NDArray#ndim()}, or
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
    final RuntimeException failed(RuntimeException e) {
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
        if (e != null && m != ArrayMemory.CLOSED && self().base != null) {
            NDArray root = self();
            while (root.base != null) {
                root = root.base;
            }
            if (root.memory != m && root.memory.isLive()) {
                return new IllegalStateException(this + " is no longer valid: the owning array was resized, which"
                        + " reallocated its memory");
            }
        }
        return e;
    }

    final UnsupportedOperationException readOnly() {
        return new UnsupportedOperationException(this + " is read-only");
    }

    final UnsupportedOperationException onDevice() {
        if (self().over().isNativeOnly()) {
            return new UnsupportedOperationException(this + " was made for native code (a tensor a C caller"
                    + " allocated through DLPack); Java does not reach its elements");
        }
        MemoryTraits traits = self().over().traits();
        return new UnsupportedOperationException("this array's memory is on " + traits.device() + " ("
                + traits.kind() + " memory of handler '" + handlerName()
                + "'), which the host cannot access; copy it to host memory and read that: with any backend,"
                + " traits().interchange().copyToHost(...) or a DLPack export to the CPU device"
                + " (DLPack.toDLPack(array, DLPackOptions.defaults().withDlDevice(Device.CPU)));"
                + " with datamem's, CUDA: io.datamem.cuda.CudaMemory.toHost(array) or CudaMemory.copy(source,"
                + " target), SYCL USM device memory: io.datamem.sycl.SyclQueue.copy(destination, source))");
    }

    final String handlerName() {
        DataMemHandler h = self().handler();
        return h == null ? "none" : h.name();
    }

    /**
     * The lifecycle check of every path that hands out an address, a segment or a view.
     *
     * @throws IllegalStateException if the array may no longer be used (see {@link NDArray#isClosed()})
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
            if (Double.doubleToRawLongBits(value) == 0 && self().isCContiguous()) {
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
            if (value == 0 && self().isCContiguous()) {
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
        long bytes = self().byteSize();
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
        ArrayTransfer.transfer(source, self());
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
        long size = self().size();
        if (size > Integer.MAX_VALUE - 8) {
            throw new IllegalStateException(this + " has " + size + " elements, more than a Java array holds");
        }
        return (int) size;
    }

    private void checkLength(int length) {
        long size = self().size();
        if (length != size) {
            throw new IllegalArgumentException("values: " + length + " elements (expected: " + size
                    + ", the size of shape " + Arrays.toString(shape) + ")");
        }
    }

    /** Calls {@code action} with the offset in {@link #hostData()} of every element, in C order. */
    void forEachOffset(LongConsumer action) {
        ArrayTransfer.forEachOffset(origin, shape, strides, self().size(), action);
    }
}
