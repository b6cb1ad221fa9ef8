package io.datamem.buffer;

import io.datamem.MemoryTraits;
import io.datamem.internal.Strides;

import java.util.Arrays;
import java.util.Objects;

/**
 * A buffer request checked against the strided memory an exporter offers, by CPython's rules (its
 * {@code PyBuffer_FillInfo} and {@code memoryview} exporters), and the {@link BufferView.Builder}
 * that answers it. Any {@link BufferExporter} over strided memory can use it: describe the memory,
 * then {@link #validate()} before pinning it and {@link #fill()} once it is pinned.
 *
 * <pre>{@code
 * public BufferView getBuffer(int flags) {
 *     BufferRequest request = BufferRequest.of(this, flags)
 *             .elements("float64", "d", 8)
 *             .layout(segment.address(), shape, strides);
 *     request.validate();                  // refuses before anything is pinned
 *     pin();
 *     return request.fill().segment(segment).releaseAction(this::unpin).build();
 * }
 * }</pre>
 *
 * <p>The rules, checked in this order, each refusal a {@link BufferException} naming its flag:
 * <ol>
 *   <li>memory the host cannot dereference ({@link MemoryTraits#hostAccessible()} false) needs
 *       {@link BufferFlags#DEVICE};</li>
 *   <li>{@link BufferFlags#WRITABLE} is refused for read-only memory;</li>
 *   <li>{@link BufferFlags#C_CONTIGUOUS}, {@link BufferFlags#F_CONTIGUOUS} and
 *       {@link BufferFlags#ANY_CONTIGUOUS} are refused when the layout is not so (NumPy's test: a
 *       layout with at most one element is both, and axes of length 1 may have any stride);</li>
 *   <li>a request without {@link BufferFlags#STRIDES} needs C-contiguous memory (the consumer
 *       assumes C order);</li>
 *   <li>a request without {@link BufferFlags#ND} sees the memory as {@code len} flat unsigned
 *       bytes, so it may not ask for {@link BufferFlags#FORMAT} unless items are single bytes.</li>
 * </ol>
 *
 * <p>Unset, the memory is host memory, writable, of unsigned bytes ({@code "B"}, 1 byte); the
 * layout must be given. An instance is a mutable description, for one request on one thread, as
 * {@link BufferView.Builder} is.
 */
public final class BufferRequest {

    private final Object exporter;
    private final int flags;
    private MemoryTraits traits;
    private boolean readOnly;
    private String typeName = "B";
    private String format = "B";
    private long itemSize = 1;
    private long address;
    private long[] shape;
    private long[] givenStrides;
    private long[] strides;   // resolved by validate(): the given ones, or C order
    private long len;         // resolved by validate()
    private boolean validated; // validate() passed, and nothing changed since
    private boolean copied;    // shape and givenStrides are this request's own copies (made by fill())

    private BufferRequest(Object exporter, int flags) {
        this.exporter = exporter;
        this.flags = flags;
    }

    /**
     * Starts checking a request that {@code exporter} received.
     *
     * @param exporter the exporting object: the view's {@link BufferView#obj()}, and named in
     *                 refusals by its {@code toString()}
     * @param flags    the {@link BufferFlags} the consumer requested
     * @return a request over host memory, writable, of unsigned bytes, still without a layout
     * @throws NullPointerException if {@code exporter} is null
     */
    public static BufferRequest of(Object exporter, int flags) {
        return new BufferRequest(Objects.requireNonNull(exporter, "exporter"), flags);
    }

    /**
     * The flags the consumer requested.
     *
     * @return the request's {@link BufferFlags}
     */
    public int flags() {
        return flags;
    }

    /**
     * Says what the memory is: where it lives and whether the host can dereference it. Memory the
     * host cannot dereference needs {@link BufferFlags#DEVICE}; the view's {@code device} and
     * {@code device_info} are the exporter's to set ({@link BufferView.Builder#device}).
     *
     * @param memoryTraits the traits of the exported memory
     * @return this request
     * @throws NullPointerException if {@code memoryTraits} is null
     */
    public BufferRequest memory(MemoryTraits memoryTraits) {
        this.traits = Objects.requireNonNull(memoryTraits, "memoryTraits");
        this.validated = false;
        return this;
    }

    /**
     * Says whether the memory is read-only, which refuses {@link BufferFlags#WRITABLE} and makes
     * the view read-only.
     *
     * @param value true for read-only memory
     * @return this request
     */
    public BufferRequest readOnly(boolean value) {
        this.readOnly = value;
        this.validated = false;
        return this;
    }

    /**
     * Says what one element is.
     *
     * @param name         the element type's name in refusals (a dtype's name, or the format)
     * @param pep3118      the PEP 3118 format the view reports when {@link BufferFlags#FORMAT} is
     *                     requested
     * @param itemByteSize the bytes of one element, the view's {@code itemsize}
     * @return this request
     * @throws NullPointerException     if {@code name} or {@code pep3118} is null
     * @throws IllegalArgumentException if {@code itemByteSize} is below 1
     */
    public BufferRequest elements(String name, String pep3118, long itemByteSize) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(pep3118, "pep3118");
        if (itemByteSize < 1) {
            throw new IllegalArgumentException("itemByteSize: " + itemByteSize + " (expected: >= 1)");
        }
        this.typeName = name;
        this.format = pep3118;
        this.itemSize = itemByteSize;
        this.validated = false;
        return this;
    }

    /**
     * Says where the elements are: the address of element {@code [0, ..., 0]}, the length of each
     * axis and the byte stride of each axis (negative strides allowed). The arrays are kept, not
     * copied: {@link #validate()} reads them, and {@link #fill()} copies them for the view (which
     * then validates and keeps those copies), so the caller must not change them until it has
     * filled the view.
     *
     * @param bufAddress  the address of element {@code [0, ..., 0]}, the view's {@code buf}
     * @param shape       the length of each axis, none for a 0-dimensional buffer
     * @param byteStrides the byte stride of each axis, or null for C order
     * @return this request
     * @throws NullPointerException     if {@code shape} is null
     * @throws IllegalArgumentException if there are more than {@value BufferView#MAX_NDIM} axes, a
     *                                  length is negative, or {@code byteStrides} does not have one
     *                                  stride per axis
     */
    public BufferRequest layout(long bufAddress, long[] shape, long[] byteStrides) {
        Objects.requireNonNull(shape, "shape");
        if (shape.length > BufferView.MAX_NDIM) {
            throw new IllegalArgumentException("shape: " + shape.length + " axes (expected: at most "
                    + BufferView.MAX_NDIM + ")");
        }
        for (int i = 0; i < shape.length; i++) {
            if (shape[i] < 0) {
                throw new IllegalArgumentException("shape[" + i + "]: " + shape[i] + " (expected: >= 0)");
            }
        }
        if (byteStrides != null && byteStrides.length != shape.length) {
            throw new IllegalArgumentException("byteStrides: " + byteStrides.length + " values (expected: "
                    + shape.length + ", one per axis)");
        }
        this.address = bufAddress;
        this.shape = shape;
        this.givenStrides = byteStrides;
        this.copied = false;
        this.validated = false;
        return this;
    }

    private static long[] cStrides(long[] shape, long itemSize) {
        long[] st = new long[shape.length];
        long acc = itemSize;
        for (int i = shape.length - 1; i >= 0; i--) {
            st[i] = acc;
            acc *= Math.max(shape[i], 1);
        }
        return st;
    }

    /**
     * Checks the request against the memory by the rules above, in their order. Call it before
     * pinning the memory, so that a refused request pins nothing.
     *
     * @throws BufferException          if a flag cannot be honoured; {@link BufferException#flag()}
     *                                  is that flag ({@link BufferFlags#STRIDES} for a request
     *                                  without strides over memory not in C order,
     *                                  {@link BufferFlags#ND} for one with {@code FORMAT} without
     *                                  {@code ND}), the message names it and why
     * @throws IllegalStateException    if no {@linkplain #layout layout} was given
     * @throws IllegalArgumentException if {@code len}, the product of the lengths and the item size,
     *                                  overflows a {@code long}
     */
    public void validate() {
        if (shape == null) {
            throw new IllegalStateException("no layout: call layout(bufAddress, shape, byteStrides) before "
                    + "validate() or fill()");
        }
        long bytes = itemSize;
        try {
            for (long d : shape) {
                bytes = Math.multiplyExact(bytes, d);
            }
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("shape " + Arrays.toString(shape) + " times itemsize " + itemSize
                    + " overflows a long");
        }
        len = bytes;
        strides = givenStrides != null ? givenStrides : cStrides(shape, itemSize);
        if (traits != null && !traits.hostAccessible() && !BufferFlags.requests(flags, BufferFlags.DEVICE)) {
            throw new BufferException("DEVICE not requested, but " + exporter + " is on " + traits.device() + " ("
                    + traits.kind() + " memory the host cannot access): request BufferFlags.DEVICE, or copy the"
                    + " array to host memory", BufferFlags.DEVICE);
        }
        if (BufferFlags.requests(flags, BufferFlags.WRITABLE) && readOnly) {
            throw new BufferException("WRITABLE requested, but " + exporter + " is read-only", BufferFlags.WRITABLE);
        }
        boolean c = Strides.isContiguous(shape, strides, itemSize, false);
        boolean f = Strides.isContiguous(shape, strides, itemSize, true);
        if (BufferFlags.requests(flags, BufferFlags.C_CONTIGUOUS) && !c) {
            throw layout("C_CONTIGUOUS requested, but", "not C-contiguous", BufferFlags.C_CONTIGUOUS);
        }
        if (BufferFlags.requests(flags, BufferFlags.F_CONTIGUOUS) && !f) {
            throw layout("F_CONTIGUOUS requested, but", "not Fortran-contiguous", BufferFlags.F_CONTIGUOUS);
        }
        if (BufferFlags.requests(flags, BufferFlags.ANY_CONTIGUOUS) && !c && !f) {
            throw layout("ANY_CONTIGUOUS requested, but", "neither C- nor Fortran-contiguous",
                    BufferFlags.ANY_CONTIGUOUS);
        }
        if (!BufferFlags.requests(flags, BufferFlags.STRIDES) && !c) {
            throw layout("STRIDES not requested (the consumer then assumes C order), but", "not C-contiguous",
                    BufferFlags.STRIDES);
        }
        if (!BufferFlags.requests(flags, BufferFlags.ND) && BufferFlags.requests(flags, BufferFlags.FORMAT)
                && itemSize != 1) {
            throw new BufferException("ND not requested, so the buffer is " + len + " flat unsigned bytes,"
                    + " but FORMAT was requested and " + typeName + " (format " + format + ") has "
                    + itemSize + "-byte items: request ND with FORMAT, or drop FORMAT", BufferFlags.ND);
        }
        validated = true;
    }

    private BufferException layout(String requested, String isNot, int flag) {
        return new BufferException(requested + " " + exporter + " is " + isNot + " (shape " + Arrays.toString(shape)
                + ", strides " + Arrays.toString(strides) + ")", flag);
    }

    /**
     * {@linkplain #validate() Validates} the request, then starts the view that answers it, with
     * every field the request decides: {@code buf}, {@code len}, {@code itemsize} (also without
     * {@code FORMAT}) and {@code readonly}; {@code format} with {@link BufferFlags#FORMAT};
     * {@code ndim}, and {@code shape} for {@code ndim > 0}, with {@link BufferFlags#ND} (without it
     * {@code ndim} is 1 and {@code shape} null); {@code strides} for {@code ndim > 0} with
     * {@link BufferFlags#STRIDES}; the draft's {@code flags} reporting {@link BufferFlags#DEVICE}
     * when it was requested. {@code suboffsets} stay null. The exporter adds the rest (the
     * {@linkplain BufferView.Builder#segment segment} for host memory, the
     * {@linkplain BufferView.Builder#device device} for device memory, the
     * {@linkplain BufferView.Builder#releaseAction release action}) and builds. Call it once the
     * memory is pinned, with the layout read after pinning.
     *
     * @return the builder
     * @throws BufferException          if a flag cannot be honoured, as {@link #validate()}
     * @throws IllegalStateException    if no layout was given, as {@link #validate()}
     * @throws IllegalArgumentException if {@code len} overflows a {@code long}, as {@link #validate()}
     */
    public BufferView.Builder fill() {
        if (!copied && shape != null) {
            // The view's own arrays, validated as they are: nothing the caller does later changes them
            shape = shape.clone();
            givenStrides = givenStrides == null ? null : givenStrides.clone();
            copied = true;
            validated = false;
        }
        if (!validated) {
            validate();
        }
        boolean withShape = BufferFlags.requests(flags, BufferFlags.ND);
        boolean withStrides = BufferFlags.requests(flags, BufferFlags.STRIDES);
        return BufferView.builder(exporter, flags)
                .address(address)
                .len(len)
                .itemSize(itemSize)
                .readOnly(readOnly)
                .format(BufferFlags.requests(flags, BufferFlags.FORMAT) ? format : null)
                .ndim(withShape ? shape.length : 1)
                // this request's own copies (made by layout(), or by validate() for C order), which
                // nothing changes once validated: the view takes them without another copy
                .layoutOwned(withShape && shape.length > 0 ? shape : null,
                        withStrides && shape.length > 0 ? strides : null)
                .flags(BufferFlags.requests(flags, BufferFlags.DEVICE) ? BufferFlags.DEVICE : 0);
    }

    @Override
    public String toString() {
        return "BufferRequest[" + exporter + ", " + BufferFlags.describe(flags) + "]";
    }
}
