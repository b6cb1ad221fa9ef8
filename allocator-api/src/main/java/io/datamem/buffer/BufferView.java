package io.datamem.buffer;

import io.datamem.internal.Strides;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.StructLayout;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A buffer exported by a {@link BufferExporter}: CPython's {@code Py_buffer} with the extended
 * buffer protocol draft's fields ({@link #flags()}, {@link #extFlags()}, {@link #device()},
 * {@link #deviceInfo()}).
 *
 * <p>Every field follows CPython's rules for the request it answers ({@link #requestFlags()}):
 * {@link #format()} is null unless {@link BufferFlags#FORMAT} was requested (the data is then
 * unsigned bytes, but {@link #itemSize()} keeps the original item size, as in CPython);
 * {@link #shape()} is null unless {@link BufferFlags#ND} was requested (then {@link #ndim()} is 1
 * and the buffer is {@link #len()} flat bytes) or the buffer is 0-dimensional; {@link #strides()}
 * is null unless {@link BufferFlags#STRIDES} was requested (the data is then C-contiguous);
 * {@link #suboffsets()} is null unless {@link BufferFlags#INDIRECT} was requested and the exporter
 * needs them. The extension fields are set only when an extended flag was requested, and a
 * consumer must check {@link #flags()} before reading them: {@code device} is null for memory the
 * host can dereference (a CPU buffer) and otherwise names the device definition
 * ({@value DeviceInfo#CUDA_DEVICE_ID}, {@value DeviceInfo#SYCL_DEVICE_ID}, ...) that
 * {@link #deviceInfo()} follows.
 *
 * <p>A view holds an export: the exporter refuses to free or resize its memory until
 * {@link #release()} (or {@link #close()}) is called. Releasing is idempotent and may happen on
 * any thread. After release the view's {@link #segment()} and {@link #toNative} refuse; its other
 * fields stay readable as a description.
 *
 * <p>{@link #toNative(SegmentAllocator)} writes the view as CPython's x86-64 {@code Py_buffer}
 * followed by the draft's fields, {@link #NATIVE_LAYOUT}, so C code can consume it.
 *
 * <p>Instances are immutable apart from their release state, and thread-safe.
 */
public final class BufferView implements AutoCloseable {

    /** The most dimensions a buffer may have: CPython's {@code PyBUF_MAX_NDIM}, NumPy's limit too. */
    public static final int MAX_NDIM = 64;

    /**
     * CPython's {@code Py_buffer} on 64-bit platforms (80 bytes) followed by the extended buffer
     * protocol draft's fields (24 bytes): 104 bytes, 8-byte aligned.
     *
     * <pre>{@code
     * offset  field          C type
     *      0  buf            void *
     *      8  obj            PyObject *   (always NULL: there is no Python object)
     *     16  len            Py_ssize_t
     *     24  itemsize       Py_ssize_t
     *     32  readonly       int
     *     36  ndim           int
     *     40  format         char *
     *     48  shape          Py_ssize_t *
     *     56  strides        Py_ssize_t *
     *     64  suboffsets     Py_ssize_t *
     *     72  internal       void *       (always NULL)
     *     80  flags          int          (draft: extended request flags honoured)
     *     84  ext_flags      int          (draft: 0)
     *     88  device         char *       (draft: NULL = CPU, else a unique UTF-8 id)
     *     96  device_info    void *       (draft: the device definition's struct)
     * }</pre>
     */
    public static final StructLayout NATIVE_LAYOUT = MemoryLayout.structLayout(
            ADDRESS.withName("buf"),
            ADDRESS.withName("obj"),
            JAVA_LONG.withName("len"),
            JAVA_LONG.withName("itemsize"),
            JAVA_INT.withName("readonly"),
            JAVA_INT.withName("ndim"),
            ADDRESS.withName("format"),
            ADDRESS.withName("shape"),
            ADDRESS.withName("strides"),
            ADDRESS.withName("suboffsets"),
            ADDRESS.withName("internal"),
            JAVA_INT.withName("flags"),
            JAVA_INT.withName("ext_flags"),
            ADDRESS.withName("device"),
            ADDRESS.withName("device_info")).withName("Py_buffer_extended");

    /** {@code sizeof(Py_buffer)} on 64-bit CPython: the classic part of {@link #NATIVE_LAYOUT}. */
    public static final long PY_BUFFER_BYTE_SIZE = 80;

    private static final long OFF_BUF = 0;
    private static final long OFF_OBJ = 8;
    private static final long OFF_LEN = 16;
    private static final long OFF_ITEMSIZE = 24;
    private static final long OFF_READONLY = 32;
    private static final long OFF_NDIM = 36;
    private static final long OFF_FORMAT = 40;
    private static final long OFF_SHAPE = 48;
    private static final long OFF_STRIDES = 56;
    private static final long OFF_SUBOFFSETS = 64;
    private static final long OFF_INTERNAL = 72;
    private static final long OFF_FLAGS = 80;
    private static final long OFF_EXT_FLAGS = 84;
    private static final long OFF_DEVICE = 88;
    private static final long OFF_DEVICE_INFO = 96;

    private final Object obj;
    private final int requestFlags;
    private final long address;
    private final MemorySegment segment;
    private final long len;
    private final long itemSize;
    private final boolean readOnly;
    private final String format;
    private final int ndim;
    private final long[] shape;
    private final long[] strides;
    private final long[] suboffsets;
    private final int flags;
    private final int extFlags;
    private final String device;
    private final DeviceInfo deviceInfo;
    private final Runnable releaseAction;
    private static final java.lang.invoke.VarHandle RELEASED;

    static {
        try {
            RELEASED = java.lang.invoke.MethodHandles.lookup().findVarHandle(BufferView.class, "released",
                    boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @SuppressWarnings("unused") // through RELEASED
    private volatile boolean released;

    private BufferView(Builder b) {
        this.obj = b.obj;
        this.requestFlags = b.requestFlags;
        this.address = b.address;
        this.segment = b.segment;
        this.len = b.len;
        this.itemSize = b.itemSize;
        this.readOnly = b.readOnly;
        this.format = b.format;
        this.ndim = b.ndim;
        this.shape = b.shape;
        this.strides = b.strides;
        this.suboffsets = b.suboffsets;
        this.flags = b.flags;
        this.extFlags = b.extFlags;
        this.device = b.device;
        this.deviceInfo = b.deviceInfo;
        this.releaseAction = b.releaseAction;
    }

    /**
     * Starts describing a buffer an exporter hands out for a request. Exporters use this; the
     * builder checks that the view obeys the request's rules (see {@link Builder#build()}).
     *
     * @param obj          the exporting object, reported by {@link #obj()}
     * @param requestFlags the flags the consumer requested
     * @return a builder
     * @throws NullPointerException if {@code obj} is null
     */
    public static Builder builder(Object obj, int requestFlags) {
        return new Builder(Objects.requireNonNull(obj, "obj"), requestFlags);
    }

    // ---------------------------------------------------------------------------------------------
    // Fields

    /**
     * The exporting object (CPython's {@code obj}).
     *
     * @return the exporter, for example the {@link io.datamem.array.NDArray}
     */
    public Object obj() {
        return obj;
    }

    /**
     * The flags the consumer requested.
     *
     * @return the request
     */
    public int requestFlags() {
        return requestFlags;
    }

    /**
     * {@code buf}: the address of the first element of the logical structure (element
     * {@code [0, ..., 0]}, which with negative strides is not the lowest address). A device
     * address for device buffers.
     *
     * @return the address
     */
    public long address() {
        return address;
    }

    /**
     * The memory the buffer spans, from its lowest to its highest byte, bounds- and
     * lifetime-checked. For a C-contiguous buffer it starts at {@link #address()} and is
     * {@link #len()} bytes long.
     *
     * @return the segment
     * @throws IllegalStateException         if the view was released
     * @throws UnsupportedOperationException if the host cannot dereference the memory
     *                                       ({@link #device()} is not null), or the exporter gave
     *                                       no segment
     */
    public MemorySegment segment() {
        checkHeld();
        if (segment == null) {
            throw new UnsupportedOperationException(device != null
                    ? "this buffer is on device '" + device + "', which the host cannot access"
                    : "the exporter of this buffer gave no host segment");
        }
        return segment;
    }

    /**
     * {@code len}: {@code product(shape) * itemsize}, the bytes of the logical structure (for a
     * non-contiguous buffer, not the span in memory).
     *
     * @return the length in bytes
     */
    public long len() {
        return len;
    }

    /**
     * {@code itemsize}: the size of one element, also when {@link #format()} is null.
     *
     * @return bytes per element
     */
    public long itemSize() {
        return itemSize;
    }

    /**
     * {@code readonly}.
     *
     * @return whether the consumer must not write
     */
    public boolean readOnly() {
        return readOnly;
    }

    /**
     * {@code format}: the PEP 3118 format of an element (read by {@code io.datamem.format.FormatString}).
     *
     * @return the format, or null when {@link BufferFlags#FORMAT} was not requested (unsigned bytes)
     */
    public String format() {
        return format;
    }

    /**
     * {@code ndim}.
     *
     * @return the number of dimensions; 1 when {@link BufferFlags#ND} was not requested
     */
    public int ndim() {
        return ndim;
    }

    /**
     * {@code shape}.
     *
     * @return a copy, or null when {@link BufferFlags#ND} was not requested or {@code ndim} is 0
     */
    public long[] shape() {
        return shape == null ? null : shape.clone();
    }

    /**
     * {@code strides}, in bytes.
     *
     * @return a copy, or null when {@link BufferFlags#STRIDES} was not requested (C-contiguous) or
     *         {@code ndim} is 0
     */
    public long[] strides() {
        return strides == null ? null : strides.clone();
    }

    /**
     * {@code suboffsets}.
     *
     * @return a copy, or null (always for datamem's arrays, which never need them)
     */
    public long[] suboffsets() {
        return suboffsets == null ? null : suboffsets.clone();
    }

    /**
     * The draft's {@code flags}: the extended request flags the exporter honoured. A consumer
     * must check it before reading {@link #device()} and {@link #deviceInfo()}.
     *
     * @return for example {@link BufferFlags#DEVICE}, or 0
     */
    public int flags() {
        return flags;
    }

    /**
     * The draft's {@code ext_flags}, reserved for future extensions.
     *
     * @return 0 for every buffer datamem exports
     */
    public int extFlags() {
        return extFlags;
    }

    /**
     * The draft's {@code device}: the unique id of the device definition the memory follows.
     *
     * @return for example {@value DeviceInfo#CUDA_DEVICE_ID}, or null for memory the host can
     *         dereference (a CPU buffer)
     */
    public String device() {
        return device;
    }

    /**
     * The draft's {@code device_info}, as the device definition named by {@link #device()}
     * defines it.
     *
     * @return the device information, or null (always for CPU buffers)
     */
    public DeviceInfo deviceInfo() {
        return deviceInfo;
    }

    // ---------------------------------------------------------------------------------------------
    // Release

    /**
     * Releases the export ({@code PyBuffer_Release}): the exporter may free or resize its memory
     * again once every view is released. Idempotent; callable from any thread.
     */
    public void release() {
        if (RELEASED.compareAndSet(this, false, true) && releaseAction != null) {
            releaseAction.run();
        }
    }

    /**
     * Whether {@link #release()} was called.
     *
     * @return true once released
     */
    public boolean isReleased() {
        return released;
    }

    /** Same as {@link #release()}, for try-with-resources. */
    @Override
    public void close() {
        release();
    }

    private void checkHeld() {
        if (released) {
            throw new IllegalStateException("this buffer view of " + obj + " was released");
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Native form

    /**
     * Writes this view as a native extended {@code Py_buffer} ({@link #NATIVE_LAYOUT}, 104 bytes),
     * with its format string, shape, strides, suboffsets, device id and device information
     * allocated by {@code allocator}. {@code obj} and {@code internal} are NULL (there is no Python
     * object, so {@code PyBuffer_Release} on it is a no-op: release the Java view instead). The
     * extension fields are written as requested: when no extended flag was requested they are 0.
     *
     * <p>The native struct describes the memory only while this view is held: keep the view
     * unreleased until native code is done with it.
     *
     * @param allocator where to allocate the struct and what it points to, for example an
     *                  {@link java.lang.foreign.Arena}
     * @return the struct
     * @throws NullPointerException          if {@code allocator} is null
     * @throws IllegalStateException         if the view was released
     * @throws UnsupportedOperationException if the view is over a Java heap segment (no native
     *                                       address to give native code)
     */
    public MemorySegment toNative(SegmentAllocator allocator) {
        Objects.requireNonNull(allocator, "allocator");
        checkHeld();
        MemorySegment s = allocator.allocate(NATIVE_LAYOUT);
        write(s, allocator);
        if ((requestFlags & BufferFlags.EXTENDED_FLAGS) == 0) {
            s.asSlice(PY_BUFFER_BYTE_SIZE).fill((byte) 0);
        }
        return s;
    }

    /**
     * Fills a consumer's {@code Py_buffer}, as an exporter's {@code bf_getbuffer} does: the classic
     * 80 bytes always, the draft's extension fields only when an extended flag (such as
     * {@link BufferFlags#DEVICE}) was requested; bytes beyond are not touched.
     *
     * @param pyBuffer  the consumer's struct: at least 80 bytes, or 104 when an extended flag was
     *                  requested
     * @param allocator where to allocate the format string, shape, strides and device fields
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException      if {@code pyBuffer} is too small for the request
     * @throws IllegalStateException         if the view was released
     * @throws UnsupportedOperationException if the view is over a Java heap segment (no native
     *                                       address to give native code)
     */
    public void writeNative(MemorySegment pyBuffer, SegmentAllocator allocator) {
        Objects.requireNonNull(pyBuffer, "pyBuffer");
        Objects.requireNonNull(allocator, "allocator");
        checkHeld();
        boolean extended = (requestFlags & BufferFlags.EXTENDED_FLAGS) != 0;
        long need = extended ? NATIVE_LAYOUT.byteSize() : PY_BUFFER_BYTE_SIZE;
        if (pyBuffer.byteSize() < need) {
            throw new IllegalArgumentException("pyBuffer: " + pyBuffer.byteSize() + " bytes (expected: at least "
                    + need + (extended ? ", the extended Py_buffer, since " + BufferFlags.describe(requestFlags
                    & BufferFlags.EXTENDED_FLAGS) + " was requested)" : ", sizeof(Py_buffer))"));
        }
        write(pyBuffer, allocator);
    }

    private void write(MemorySegment s, SegmentAllocator allocator) {
        if (segment != null && !segment.isNative()) {
            throw new UnsupportedOperationException("this buffer view of " + obj + " is over a Java heap segment,"
                    + " which has no native address: native code cannot read it (copy the data into native memory)");
        }
        s.set(JAVA_LONG, OFF_BUF, address);
        s.set(JAVA_LONG, OFF_OBJ, 0);
        s.set(JAVA_LONG, OFF_LEN, len);
        s.set(JAVA_LONG, OFF_ITEMSIZE, itemSize);
        s.set(JAVA_INT, OFF_READONLY, readOnly ? 1 : 0);
        s.set(JAVA_INT, OFF_NDIM, ndim);
        s.set(ADDRESS, OFF_FORMAT, format == null ? MemorySegment.NULL
                : allocator.allocateFrom(format, StandardCharsets.US_ASCII));
        s.set(ADDRESS, OFF_SHAPE, longs(shape, allocator));
        s.set(ADDRESS, OFF_STRIDES, longs(strides, allocator));
        s.set(ADDRESS, OFF_SUBOFFSETS, longs(suboffsets, allocator));
        s.set(JAVA_LONG, OFF_INTERNAL, 0);
        if ((requestFlags & BufferFlags.EXTENDED_FLAGS) != 0) {
            s.set(JAVA_INT, OFF_FLAGS, flags);
            s.set(JAVA_INT, OFF_EXT_FLAGS, extFlags);
            s.set(ADDRESS, OFF_DEVICE, device == null ? MemorySegment.NULL
                    : allocator.allocateFrom(device, StandardCharsets.UTF_8));
            s.set(ADDRESS, OFF_DEVICE_INFO, deviceInfo == null ? MemorySegment.NULL : deviceInfo.toNative(allocator));
        }
    }

    private static MemorySegment longs(long[] values, SegmentAllocator allocator) {
        return values == null ? MemorySegment.NULL : allocator.allocateFrom(JAVA_LONG, values);
    }

    /**
     * Reads a native {@code Py_buffer} that C code filled in: the reverse of {@link #toNative}. The
     * view describes memory datamem does not own: releasing it does nothing, and its
     * {@link #segment()} (for host buffers) is an unchecked view of the native span (read-only when
     * {@code readonly} is set), valid as long as the buffer's owner keeps it. The request flags are
     * reconstructed from the fields present ({@code FORMAT} if format is set, and so on).
     *
     * @param pyBuffer the struct (its size is not trusted)
     * @param extended whether the struct is the extended {@code Py_buffer}, whose {@code flags}
     *                 field then decides whether the device fields are read
     * @return the view
     * @throws NullPointerException     if {@code pyBuffer} is null
     * @throws IllegalArgumentException if {@code pyBuffer} is NULL or not native, or a field is out
     *                                  of range (negative len or itemsize, ndim outside 0..64,
     *                                  negative shape entries, a device id of {@code "cpu"})
     */
    public static BufferView fromNative(MemorySegment pyBuffer, boolean extended) {
        Objects.requireNonNull(pyBuffer, "pyBuffer");
        if (!pyBuffer.isNative() || pyBuffer.address() == 0) {
            throw new IllegalArgumentException("pyBuffer: " + (pyBuffer.isNative() ? "NULL" : "a heap segment")
                    + " (expected: a native Py_buffer)");
        }
        MemorySegment s = pyBuffer.reinterpret(extended ? NATIVE_LAYOUT.byteSize() : PY_BUFFER_BYTE_SIZE);
        int ndim = s.get(JAVA_INT, OFF_NDIM);
        if (ndim < 0 || ndim > MAX_NDIM) {
            throw new IllegalArgumentException("Py_buffer.ndim: " + ndim + " (expected: 0.." + MAX_NDIM + ")");
        }
        MemorySegment formatPtr = s.get(ADDRESS, OFF_FORMAT);
        long[] shape = readLongs(s.get(ADDRESS, OFF_SHAPE), ndim);
        long[] strides = readLongs(s.get(ADDRESS, OFF_STRIDES), ndim);
        long[] suboffsets = readLongs(s.get(ADDRESS, OFF_SUBOFFSETS), ndim);
        boolean readOnly = s.get(JAVA_INT, OFF_READONLY) != 0;
        int request = (readOnly ? 0 : BufferFlags.WRITABLE)
                | (formatPtr.address() != 0 ? BufferFlags.FORMAT : 0)
                | (shape != null || ndim == 0 ? BufferFlags.ND : 0)
                | (strides != null ? BufferFlags.STRIDES : 0)
                | (suboffsets != null ? BufferFlags.INDIRECT : 0);
        int flags = 0;
        String device = null;
        DeviceInfo info = null;
        if (extended) {
            flags = s.get(JAVA_INT, OFF_FLAGS);
            request |= flags & BufferFlags.EXTENDED_FLAGS;
            if ((flags & BufferFlags.DEVICE) != 0) {
                MemorySegment devicePtr = s.get(ADDRESS, OFF_DEVICE);
                device = devicePtr.address() == 0 ? null : devicePtr.reinterpret(Long.MAX_VALUE)
                        .getString(0, StandardCharsets.UTF_8);
                MemorySegment infoPtr = s.get(ADDRESS, OFF_DEVICE_INFO);
                if (infoPtr.address() != 0) {
                    info = DeviceInfo.CUDA_DEVICE_ID.equals(device) || DeviceInfo.SYCL_DEVICE_ID.equals(device)
                            ? StandardDeviceInfo.fromNative(infoPtr) : new NativeDeviceInfo(infoPtr);
                }
            }
        }
        long address = s.get(JAVA_LONG, OFF_BUF);
        long len = s.get(JAVA_LONG, OFF_LEN);
        long itemSize = s.get(JAVA_LONG, OFF_ITEMSIZE);
        Builder b = builder(pyBuffer, request)
                .address(address)
                .len(len)
                .itemSize(itemSize)
                .readOnly(readOnly)
                .format(formatPtr.address() == 0 ? null
                        : formatPtr.reinterpret(Long.MAX_VALUE).getString(0, StandardCharsets.US_ASCII))
                .ndim(ndim)
                .shape(shape)
                .strides(strides)
                .suboffsets(suboffsets)
                .flags(flags & BufferFlags.EXTENDED_FLAGS)
                .extFlags(extended ? s.get(JAVA_INT, OFF_EXT_FLAGS) : 0);
        if (device != null) {
            b.device(device, info);
        }
        if (device == null && address != 0 && len >= 0) {
            long[] span = span(shape, strides, itemSize, ndim, len);
            MemorySegment spanned = MemorySegment.ofAddress(address + span[0]).reinterpret(span[1]);
            b.segment(readOnly ? spanned.asReadOnly() : spanned);
        }
        return b.build();
    }

    private static long[] readLongs(MemorySegment p, int n) {
        if (p.address() == 0) {
            return null;
        }
        return p.reinterpret(n * 8L).toArray(JAVA_LONG);
    }

    /** {lowest byte relative to buf, span}. */
    private static long[] span(long[] shape, long[] strides, long itemSize, int ndim, long len) {
        if (shape == null || strides == null || ndim == 0) {
            return new long[] {0, len};
        }
        for (int i = 0; i < ndim; i++) {
            if (shape[i] == 0) {
                return new long[] {0, 0};
            }
        }
        try {
            long lo = Strides.lowestByte(shape, strides);
            return new long[] {lo, Math.addExact(Math.subtractExact(Strides.highestByte(shape, strides), lo), itemSize)};
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("Py_buffer.strides " + Arrays.toString(strides) + " with shape "
                    + Arrays.toString(shape) + " and itemsize " + itemSize + " reach beyond a 64-bit byte count");
        }
    }

    @Override
    public String toString() {
        return "BufferView[" + obj + ", " + BufferFlags.describe(requestFlags) + ", len " + len + ", itemsize "
                + itemSize + ", format " + format + ", shape " + Arrays.toString(shape) + ", strides "
                + Arrays.toString(strides) + (readOnly ? ", read-only" : "")
                + (device != null ? ", device " + device : "") + (released ? ", released" : "") + "]";
    }

    // ---------------------------------------------------------------------------------------------

    /**
     * Builds a {@link BufferView}. Every setter is optional; unset fields are 0, false or null.
     * {@link #build()} checks the result against the request, so an exporter cannot hand out a
     * view that breaks the protocol.
     */
    public static final class Builder {

        private final Object obj;
        private final int requestFlags;
        private long address;
        private MemorySegment segment;
        private long len;
        private long itemSize = 1;
        private boolean readOnly;
        private String format;
        private int ndim = 1;
        private long[] shape;
        private long[] strides;
        private long[] suboffsets;
        private int flags;
        private int extFlags;
        private String device;
        private DeviceInfo deviceInfo;
        private Runnable releaseAction;

        private Builder(Object obj, int requestFlags) {
            this.obj = obj;
            this.requestFlags = requestFlags;
        }

        /**
         * Sets {@code buf}.
         *
         * @param bufAddress the address of element {@code [0, ..., 0]}
         * @return this builder
         */
        public Builder address(long bufAddress) {
            this.address = bufAddress;
            return this;
        }

        /**
         * Sets the host memory the buffer spans (lowest to highest byte); leave unset for device
         * memory.
         *
         * @param span the segment
         * @return this builder
         */
        public Builder segment(MemorySegment span) {
            this.segment = span;
            return this;
        }

        /**
         * Sets {@code len}.
         *
         * @param byteLength {@code product(shape) * itemsize}
         * @return this builder
         */
        public Builder len(long byteLength) {
            this.len = byteLength;
            return this;
        }

        /**
         * Sets {@code itemsize} (default 1).
         *
         * @param byteSize bytes per element
         * @return this builder
         */
        public Builder itemSize(long byteSize) {
            this.itemSize = byteSize;
            return this;
        }

        /**
         * Sets {@code readonly}.
         *
         * @param value whether the consumer must not write
         * @return this builder
         */
        public Builder readOnly(boolean value) {
            this.readOnly = value;
            return this;
        }

        /**
         * Sets {@code format}.
         *
         * @param pep3118 the format, or null
         * @return this builder
         */
        public Builder format(String pep3118) {
            this.format = pep3118;
            return this;
        }

        /**
         * Sets {@code ndim} (default 1).
         *
         * @param dimensions the number of dimensions
         * @return this builder
         */
        public Builder ndim(int dimensions) {
            this.ndim = dimensions;
            return this;
        }

        /**
         * Sets {@code shape}.
         *
         * @param lengths one length per dimension, or null
         * @return this builder
         */
        public Builder shape(long[] lengths) {
            this.shape = lengths == null ? null : lengths.clone();
            return this;
        }

        /**
         * Sets {@code strides}.
         *
         * @param byteStrides one byte stride per dimension, or null
         * @return this builder
         */
        public Builder strides(long[] byteStrides) {
            this.strides = byteStrides == null ? null : byteStrides.clone();
            return this;
        }

        /**
         * Sets {@code suboffsets}.
         *
         * @param values one suboffset per dimension (negative: none), or null
         * @return this builder
         */
        public Builder suboffsets(long[] values) {
            this.suboffsets = values == null ? null : values.clone();
            return this;
        }

        /**
         * Sets the draft's {@code flags}: the extended request flags honoured.
         *
         * @param honoured a subset of the request's extended flags
         * @return this builder
         */
        public Builder flags(int honoured) {
            this.flags = honoured;
            return this;
        }

        /**
         * Sets the draft's {@code ext_flags}.
         *
         * @param value the flags (0 today)
         * @return this builder
         */
        public Builder extFlags(int value) {
            this.extFlags = value;
            return this;
        }

        /**
         * Sets the draft's {@code device} and {@code device_info}.
         *
         * @param id   the unique device id, or null for a CPU buffer
         * @param info the device information, or null
         * @return this builder
         */
        public Builder device(String id, DeviceInfo info) {
            this.device = id;
            this.deviceInfo = info;
            return this;
        }

        /**
         * Sets what {@link BufferView#release()} runs, once.
         *
         * @param action the exporter's release, for example unpinning its memory
         * @return this builder
         */
        public Builder releaseAction(Runnable action) {
            this.releaseAction = action;
            return this;
        }

        /**
         * Builds the view, checking it against the request as CPython's rules demand:
         * {@code format} set exactly when {@link BufferFlags#FORMAT} was requested, {@code shape}
         * exactly when {@link BufferFlags#ND} was requested and {@code ndim > 0}, {@code strides}
         * only with {@link BufferFlags#STRIDES} (and then for {@code ndim > 0}),
         * {@code suboffsets} only with {@link BufferFlags#INDIRECT}, not read-only when
         * {@link BufferFlags#WRITABLE} was requested, {@code len == product(shape) * itemsize},
         * and the extension fields only with the extended flags that allow them.
         *
         * @return the view
         * @throws IllegalArgumentException if a field breaks those rules or is out of range
         */
        public BufferView build() {
            if (len < 0) {
                throw bad("len: " + len + " (expected: >= 0)");
            }
            if (itemSize < 1) {
                throw bad("itemsize: " + itemSize + " (expected: >= 1)");
            }
            if (ndim < 0 || ndim > MAX_NDIM) {
                throw bad("ndim: " + ndim + " (expected: 0.." + MAX_NDIM + ")");
            }
            if (readOnly && BufferFlags.requests(requestFlags, BufferFlags.WRITABLE)) {
                throw bad("readonly: true, but WRITABLE was requested");
            }
            boolean wantFormat = BufferFlags.requests(requestFlags, BufferFlags.FORMAT);
            if (wantFormat != (format != null)) {
                throw bad("format: " + (format == null ? "null, but FORMAT was requested"
                        : "'" + format + "', but FORMAT was not requested (it must be NULL)"));
            }
            if (format != null && !isPrintableAscii(format)) {
                throw bad("format: '" + format + "' (expected: ASCII without NUL)");
            }
            boolean wantShape = BufferFlags.requests(requestFlags, BufferFlags.ND);
            if (!wantShape && ndim != 1) {
                throw bad("ndim: " + ndim + ", but ND was not requested (the buffer is then 1-dimensional bytes)");
            }
            checkArray("shape", shape, wantShape, true);
            if (wantShape && ndim > 0 && shape == null) {
                throw bad("shape: null, but ND was requested and ndim is " + ndim);
            }
            boolean wantStrides = BufferFlags.requests(requestFlags, BufferFlags.STRIDES);
            checkArray("strides", strides, wantStrides, false);
            if (wantStrides && ndim > 0 && strides == null) {
                throw bad("strides: null, but STRIDES was requested and ndim is " + ndim);
            }
            checkArray("suboffsets", suboffsets, BufferFlags.requests(requestFlags, BufferFlags.INDIRECT), false);
            if (shape != null) {
                long product = itemSize;
                for (long d : shape) {
                    product = d == 0 ? 0 : product;
                }
                if (product != 0) {
                    for (long d : shape) {
                        long hi = Math.multiplyHigh(product, d);
                        product *= d;
                        if (hi != 0 || product < 0) {
                            throw bad("shape " + Arrays.toString(shape) + " times itemsize " + itemSize
                                    + " overflows a long");
                        }
                    }
                }
                if (product != len) {
                    throw bad("len: " + len + " (expected: product(shape) * itemsize = " + product + ")");
                }
            }
            if ((flags & ~(requestFlags & BufferFlags.EXTENDED_FLAGS)) != 0) {
                throw bad("flags: " + BufferFlags.describe(flags) + " (expected: a subset of the extended flags"
                        + " requested, " + BufferFlags.describe(requestFlags & BufferFlags.EXTENDED_FLAGS) + ")");
            }
            if (extFlags != 0 && (requestFlags & BufferFlags.EXTENDED_FLAGS) == 0) {
                throw bad("ext_flags: " + extFlags + ", but no extended flag was requested");
            }
            if (device != null) {
                if ((flags & BufferFlags.DEVICE) == 0) {
                    throw bad("device: '" + device + "', but flags does not include DEVICE (was it requested?)");
                }
                if (device.isBlank() || device.indexOf('\0') >= 0) {
                    throw bad("device: '" + device + "' (expected: a unique non-blank id without NUL)");
                }
                if (device.equals(DeviceInfo.RESERVED_CPU_ID)) {
                    throw bad("device: 'cpu' is reserved by the extended buffer protocol (a CPU buffer has no"
                            + " device: leave it null)");
                }
            } else if (deviceInfo != null) {
                throw bad("deviceInfo without a device id");
            }
            if (segment != null && (address < segment.address() || address > segment.address() + segment.byteSize())) {
                throw bad("buf 0x" + Long.toHexString(address) + " lies outside the segment it spans");
            }
            return new BufferView(this);
        }

        private static boolean isPrintableAscii(String s) {
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                if (c == 0 || c >= 0x7F) {
                    return false;
                }
            }
            return true;
        }

        /** {@link #shape} and {@link #strides} of arrays the caller made for this view alone (no copy). */
        Builder layoutOwned(long[] lengths, long[] byteStrides) {
            this.shape = lengths;
            this.strides = byteStrides;
            return this;
        }

        private void checkArray(String name, long[] values, boolean requested, boolean notNegative) {
            if (values == null) {
                return;
            }
            if (!requested) {
                throw bad(name + ": set, but its request flag was not given (it must be NULL)");
            }
            if (values.length != ndim) {
                throw bad(name + ": " + values.length + " values (expected: ndim = " + ndim + ")");
            }
            if (ndim == 0) {
                throw bad(name + ": must be NULL when ndim is 0");
            }
            if (notNegative) {
                for (int i = 0; i < values.length; i++) {
                    if (values[i] < 0) {
                        throw bad(name + "[" + i + "]: " + values[i] + " (expected: >= 0)");
                    }
                }
            }
        }

        private IllegalArgumentException bad(String what) {
            return new IllegalArgumentException("buffer view of " + obj + " for request "
                    + BufferFlags.describe(requestFlags) + ": " + what);
        }
    }
}
