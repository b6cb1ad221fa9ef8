package io.datamem.usm;

import io.datamem.DeviceType;
import io.datamem.MemoryTraits;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.buffer.BufferException;
import io.datamem.DeviceInterchange;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * dpctl's {@code __sycl_usm_array_interface__}: how an array on SYCL USM memory is described to
 * SYCL-aware libraries without copying. The components are the dictionary's fields, with dpctl's
 * units: {@code strides} and {@code offset} count elements, not bytes; {@code data} is the USM
 * allocation's start and whether it is read-only; {@code strides} is null for a C-contiguous
 * array (Python's {@code None}).
 *
 * <p>{@link #of(NDArray)} describes an array whose memory is SYCL USM (device type
 * {@link DeviceType#ONE_API} and a backend {@link DeviceInterchange} that names its
 * {@code syclobj}). The description is valid while the array is open. Host and shared USM memory
 * may also be exported as a CPU buffer ({@link NDArray#getBuffer(int)}); device USM memory only
 * with {@link io.datamem.buffer.BufferFlags#DEVICE}.
 *
 * @param shape     {@code "shape"}: the length of each axis
 * @param typestr   {@code "typestr"}: NumPy's array-interface type string, such as {@code <f4}
 * @param typedescr {@code "typedescr"}: NumPy's {@code descr}, a list of (name, typestr) pairs
 * @param data      {@code "data"}: (USM pointer, read-only flag)
 * @param strides   {@code "strides"}: element strides, or null for C-contiguous
 * @param offset    {@code "offset"}: elements from {@code data}'s pointer to element {@code [0, ..., 0]}
 * @param version   {@code "version"}: {@value #VERSION}
 * @param syclobj   {@code "syclobj"}: the queue or the native handles naming the SYCL context
 */
public record SyclUsmArrayInterface(List<Long> shape, String typestr, List<TypeDescr> typedescr, Data data,
                                    List<Long> strides, long offset, int version, SyclObject syclobj) {

    /** The interface version dpctl defines (the only one). */
    public static final int VERSION = 1;

    /** The keys of {@link #toMap()}, in order. */
    public static final List<String> KEYS =
            List.of("shape", "typestr", "typedescr", "data", "strides", "offset", "version", "syclobj");

    /**
     * The {@code "data"} tuple.
     *
     * @param pointer  the USM pointer ({@code static_cast<size_t>(usm_ptr)})
     * @param readOnly whether the data is read-only
     */
    public record Data(long pointer, boolean readOnly) {
    }

    /**
     * One entry of {@code "typedescr"}: a field name and its type string.
     *
     * @param name    the field name, empty for a plain dtype
     * @param typestr the type string
     */
    public record TypeDescr(String name, String typestr) {
        /**
         * Validates the components.
         *
         * @throws NullPointerException if an argument is null
         */
        public TypeDescr {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(typestr, "typestr");
        }
    }

    /**
     * Validates the components.
     *
     * @throws NullPointerException     if a component other than {@code strides} is null
     * @throws IllegalArgumentException if a shape entry or {@code offset} is negative,
     *                                  {@code strides} has not one entry per axis,
     *                                  {@code typestr} is blank or {@code version} is below 1
     */
    public SyclUsmArrayInterface {
        shape = List.copyOf(shape);
        Objects.requireNonNull(typestr, "typestr");
        typedescr = List.copyOf(typedescr);
        Objects.requireNonNull(data, "data");
        Objects.requireNonNull(syclobj, "syclobj");
        strides = strides == null ? null : List.copyOf(strides);
        if (typestr.isBlank()) {
            throw new IllegalArgumentException("typestr: blank");
        }
        for (int i = 0; i < shape.size(); i++) {
            if (shape.get(i) < 0) {
                throw new IllegalArgumentException("shape[" + i + "]: " + shape.get(i) + " (expected: >= 0)");
            }
        }
        if (strides != null && strides.size() != shape.size()) {
            throw new IllegalArgumentException("strides: " + strides.size() + " values (expected: " + shape.size()
                    + ", one per axis)");
        }
        if (offset < 0) {
            throw new IllegalArgumentException("offset: " + offset + " (expected: >= 0)");
        }
        if (version < 1) {
            throw new IllegalArgumentException("version: " + version + " (expected: >= 1)");
        }
    }

    /**
     * Describes an array on SYCL USM memory.
     *
     * @param array the array
     * @return the interface; {@code data} is the start of the array's USM allocation and
     *         {@code offset} the element index of {@code [0, ..., 0]} from it
     * @throws NullPointerException  if {@code array} is null
     * @throws IllegalStateException if the array {@linkplain NDArray#isClosed() is closed} or a
     *                               close of its memory has begun
     * @throws UnsupportedOperationException if the array wraps a Java heap segment
     * @throws BufferException       if the memory is not SYCL USM (its device type is not
     *                               {@code ONE_API}), its backend gives no {@code syclobj}, its USM
     *                               kind is unknown, or a stride or the offset is not a multiple of
     *                               the item size (dpctl counts elements)
     */
    public static SyclUsmArrayInterface of(NDArray array) {
        Objects.requireNonNull(array, "array");
        // Pinned while the backend is asked about the block: it can be neither closed nor resized
        // meanwhile (the interface itself, like NumPy's __array_interface__, is valid while the array is).
        return array.whileHeld(() -> describe(array));
    }

    private static SyclUsmArrayInterface describe(NDArray array) {
        long address = array.address();
        MemoryTraits traits = array.traits();
        if (traits.device().type() != DeviceType.ONE_API) {
            throw new BufferException(array + " is not on SYCL USM memory: its device is " + traits.device()
                    + " (expected: a oneAPI/SYCL device, DLPack kDLOneAPI)");
        }
        Optional<UsmHook> hook = traits.hook(UsmHook.class);
        MemorySegment block = MemorySegment.ofAddress(address - array.byteOffset());
        Optional<SyclObject> syclobj = hook.flatMap(h -> h.syclObject(block));
        if (syclobj.isEmpty()) {
            throw new BufferException(array + " is on " + traits.device() + ", but handler '"
                    + (array.handler() == null ? "none" : array.handler().name()) + "' gives no syclobj (its"
                    + " backend's DeviceInterchange must serve a UsmHook that names the SYCL queue or context)");
        }
        UsmKind kind = hook.get().usmKind(block, traits);
        if (kind == UsmKind.UNKNOWN) {
            throw new BufferException(array + ": the SYCL backend reports USM kind 'unknown' for its memory");
        }
        DType dtype = array.dtype();
        long item = dtype.itemSize();
        if (array.byteOffset() % item != 0) {
            throw new BufferException(array + ": byte offset " + array.byteOffset() + " is not a multiple of the"
                    + " item size " + item + " (the SYCL USM array interface counts the offset in elements)");
        }
        List<Long> shape = new ArrayList<>();
        for (long d : array.shape()) {
            shape.add(d);
        }
        List<Long> strides = null;
        if (!array.isCContiguous()) {
            strides = new ArrayList<>();
            long[] byteStrides = array.strides();
            for (int i = 0; i < byteStrides.length; i++) {
                if (byteStrides[i] % item != 0) {
                    throw new BufferException(array + ": stride " + byteStrides[i] + " of axis " + i + " is not a"
                            + " multiple of the item size " + item + " (the SYCL USM array interface counts strides"
                            + " in elements)");
                }
                strides.add(byteStrides[i] / item);
            }
        }
        return new SyclUsmArrayInterface(shape, dtype.typestr(), List.of(new TypeDescr("", dtype.typestr())),
                new Data(block.address(), array.isReadOnly()), strides, array.byteOffset() / item, VERSION,
                syclobj.get());
    }

    /**
     * The dictionary form, with exactly the keys {@link #KEYS} in that order: {@code shape} a
     * {@code List<Long>}, {@code typestr} a {@code String}, {@code typedescr} a list of
     * two-element {@code List<String>}s, {@code data} a two-element list {@code [Long, Boolean]},
     * {@code strides} a {@code List<Long>} or null, {@code offset} a {@code Long}, {@code version}
     * an {@code Integer}, {@code syclobj} the {@link SyclObject}.
     *
     * @return an unmodifiable map
     */
    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("shape", shape);
        m.put("typestr", typestr);
        m.put("typedescr", typedescr.stream().map(t -> List.of(t.name(), t.typestr())).toList());
        m.put("data", List.of(data.pointer(), data.readOnly()));
        m.put("strides", strides);
        m.put("offset", offset);
        m.put("version", version);
        m.put("syclobj", syclobj);
        return Collections.unmodifiableMap(m);
    }
}
