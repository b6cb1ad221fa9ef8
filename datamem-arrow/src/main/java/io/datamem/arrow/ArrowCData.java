package io.datamem.arrow;

import io.datamem.DataMemHandler;
import io.datamem.Device;
import io.datamem.DeviceInterchange;
import io.datamem.DeviceType;
import io.datamem.MemoryTraits;
import io.datamem.OutOfNativeMemoryException;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.buffer.BufferException;
import io.datamem.spi.ReleasingAllocator;
import io.datamem.dlpack.DLPack;
import io.datamem.usm.UsmHook;

import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Arrays through the Apache Arrow C Data Interface and C Device Data Interface, both ways, with
 * the structs laid out as the specification's {@code abi.h} declares them.
 *
 * <p><b>What is exported.</b> A 1-D array is a primitive Arrow array: int8..int64 ({@code c s i
 * l}), uint8..uint64 ({@code C S I L}), float16, float32, float64 ({@code e f g}), bool
 * ({@code b}). An array of two or more dimensions is the canonical extension type
 * {@value #FIXED_SHAPE_TENSOR}: its first axis is the Arrow array's length and each element is a
 * tensor of the remaining axes, stored as a {@code FixedSizeList} ({@code +w:N}) of the primitive
 * type, with {@code ARROW:extension:metadata} {@code {"shape":[...]}} (without the first axis),
 * the metadata encoded in the specification's binary map format. A 0-D array is a primitive array
 * of length 1. Arrow has no bfloat16, complex or custom dtypes: those are refused.
 *
 * <p><b>What copies.</b> A C-contiguous array is shared without copying: the data buffer is the
 * array's element {@code [0, ..., 0]}, and the export holds a buffer export of the array, so that
 * the array can be neither closed nor resized until every exported struct is released. Two cases
 * copy, through {@link io.datamem.DataMem#current()}, into memory the export owns: an array that
 * is not C-contiguous, and bool arrays (datamem stores a byte per element, Arrow a bit). Device
 * memory is never copied: such arrays are refused. Arrow has no read-only flag; a read-only
 * array is exported all the same, as the specification asks consumers to treat exported data as
 * immutable.
 *
 * <p><b>Release.</b> Every exported struct (children included) carries a release callback, an FFM
 * upcall callable from any thread, also after Java dropped the array; it runs exactly once per
 * struct, marks it released ({@code release = NULL}), and when the last struct of an export is
 * released the export's pin (or copy) and its native memory go. A consumer may move structs
 * before releasing them, as the specification allows. A second call is ignored (and logged).
 *
 * <p><b>Devices.</b> {@link #exportDeviceArray} writes an {@code ArrowDeviceArray}: its
 * {@code device_type} and {@code device_id} are the memory's DLPack device (the
 * {@link DeviceInterchange}'s, else the traits'), since {@code ArrowDeviceType} takes DLPack's
 * {@code DLDeviceType} codes. For memory with a device backend, the export first calls the
 * backend's {@link DeviceInterchange#synchronize} with the device's default stream (no consumer
 * stream), so the data is complete when the struct is handed over, and writes {@code sync_event}
 * NULL; CPU memory has a NULL {@code sync_event} too. The plain C Data Interface carries CPU
 * memory only: {@link #exportArray} refuses memory the host cannot access.
 *
 * <p><b>Import.</b> {@link #importArray} and {@link #importDeviceArray} validate both structs
 * before taking anything (on any exception both stay the caller's, who must release them, for
 * example with {@link #releaseSchema} and {@link #releaseArray}). On success the array struct is
 * moved into datamem's memory (the caller's is marked released), the schema is released, and the
 * result is a read-only owning array over the producer's buffer, without copying, whose handler,
 * named {@value #HANDLER_NAME}, calls the producer's {@code release} exactly once when the array
 * is closed or collected. Bool arrays are unpacked into a new array (a copy, through
 * {@link io.datamem.DataMem#current()}) and the structs released at once. Arrays with nulls
 * (a validity bitmap and a non-zero null count), dictionaries, and formats other than those
 * above are refused. The structs' fields are checked (NULL release, buffer counts, NULL data
 * with elements, negative lengths and offsets, sizes overflowing the address space); pointers to
 * unmapped memory cannot be checked by anyone and are not.
 */
public final class ArrowCData {

    /** The name of the handler of imported arrays. */
    public static final String HANDLER_NAME = "arrow";

    /** The canonical extension type N-D arrays are exported as. */
    public static final String FIXED_SHAPE_TENSOR = "arrow.fixed_shape_tensor";

    /** The metadata key of an extension type's name. */
    public static final String EXTENSION_NAME = "ARROW:extension:name";

    /** The metadata key of an extension type's serialised parameters. */
    public static final String EXTENSION_METADATA = "ARROW:extension:metadata";

    /** {@code ARROW_FLAG_NULLABLE}. */
    public static final long FLAG_NULLABLE = 2;

    /** {@code struct ArrowSchema} (72 bytes). */
    public static final StructLayout ARROW_SCHEMA = MemoryLayout.structLayout(
            ADDRESS.withName("format"),
            ADDRESS.withName("name"),
            ADDRESS.withName("metadata"),
            JAVA_LONG.withName("flags"),
            JAVA_LONG.withName("n_children"),
            ADDRESS.withName("children"),
            ADDRESS.withName("dictionary"),
            ADDRESS.withName("release"),
            ADDRESS.withName("private_data")).withName("ArrowSchema");

    /** {@code struct ArrowArray} (80 bytes). */
    public static final StructLayout ARROW_ARRAY = MemoryLayout.structLayout(
            JAVA_LONG.withName("length"),
            JAVA_LONG.withName("null_count"),
            JAVA_LONG.withName("offset"),
            JAVA_LONG.withName("n_buffers"),
            JAVA_LONG.withName("n_children"),
            ADDRESS.withName("buffers"),
            ADDRESS.withName("children"),
            ADDRESS.withName("dictionary"),
            ADDRESS.withName("release"),
            ADDRESS.withName("private_data")).withName("ArrowArray");

    /** {@code struct ArrowDeviceArray} (128 bytes). */
    public static final StructLayout ARROW_DEVICE_ARRAY = MemoryLayout.structLayout(
            ARROW_ARRAY.withName("array"),
            JAVA_LONG.withName("device_id"),
            JAVA_INT.withName("device_type"),
            MemoryLayout.paddingLayout(4),
            ADDRESS.withName("sync_event"),
            MemoryLayout.sequenceLayout(3, JAVA_LONG).withName("reserved")).withName("ArrowDeviceArray");

    // ArrowSchema offsets
    private static final long S_FORMAT = 0;
    private static final long S_NAME = 8;
    private static final long S_METADATA = 16;
    private static final long S_FLAGS = 24;
    private static final long S_N_CHILDREN = 32;
    private static final long S_CHILDREN = 40;
    private static final long S_DICTIONARY = 48;
    private static final long S_RELEASE = 56;
    private static final long S_PRIVATE = 64;
    // ArrowArray offsets
    private static final long A_LENGTH = 0;
    private static final long A_NULL_COUNT = 8;
    private static final long A_OFFSET = 16;
    private static final long A_N_BUFFERS = 24;
    private static final long A_N_CHILDREN = 32;
    private static final long A_BUFFERS = 40;
    private static final long A_CHILDREN = 48;
    private static final long A_DICTIONARY = 56;
    private static final long A_RELEASE = 64;
    private static final long A_PRIVATE = 72;
    // ArrowDeviceArray offsets
    private static final long D_DEVICE_ID = 80;
    private static final long D_DEVICE_TYPE = 88;
    private static final long D_SYNC_EVENT = 96;

    /** A valid, aligned address for the data buffer of arrays without elements (never dereferenced). */
    private static final MemorySegment EMPTY = Arena.global().allocate(64, 64);

    private static final Map<DType, String> FORMATS = formats();

    /**
     * The format strings of {@link #FORMATS} as C strings, and the names {@code ""} and
     * {@code "item"}: made once in the global arena, never freed, shared by every export (a schema's
     * strings must live until its release; these live for the process).
     */
    private static final Map<DType, Long> STATIC_FORMATS = staticFormats();
    private static final long EMPTY_NAME = Arena.global().allocateFrom("").address();
    private static final long ITEM_NAME = Arena.global().allocateFrom("item").address();
    /** The dtype of each one-character format, by the character; null where none. */
    private static final DType[] BY_FORMAT_CHAR = byFormatChar();

    private ArrowCData() {
    }

    private static Map<DType, Long> staticFormats() {
        Map<DType, Long> m = new java.util.HashMap<>();
        for (Map.Entry<DType, String> e : FORMATS.entrySet()) {
            m.put(e.getKey(), Arena.global().allocateFrom(e.getValue()).address());
        }
        return Map.copyOf(m);
    }

    /** The dtypes of {@link #FORMATS} and their static C strings, in the same order. */
    private static final DType[] FORMAT_DTYPES = FORMATS.keySet().toArray(DType[]::new);
    private static final long[] FORMAT_ADDRESSES = java.util.Arrays.stream(FORMAT_DTYPES)
            .mapToLong(d -> STATIC_FORMATS.get(d)).toArray();

    /**
     * The static C string of a dtype's format, or 0 if Arrow has none: found by identity first (a
     * record's {@code hashCode} hashes every field, names included), then by equality.
     */
    private static long staticFormat(DType dtype) {
        for (int i = 0; i < FORMAT_DTYPES.length; i++) {
            if (FORMAT_DTYPES[i] == dtype) {
                return FORMAT_ADDRESSES[i];
            }
        }
        Long address = STATIC_FORMATS.get(dtype);
        return address == null ? 0 : address;
    }

    private static DType[] byFormatChar() {
        DType[] table = new DType[128];
        for (Map.Entry<DType, String> e : FORMATS.entrySet()) {
            table[e.getValue().charAt(0)] = e.getKey();
        }
        return table;
    }

    private static Map<DType, String> formats() {
        Map<DType, String> m = new LinkedHashMap<>();
        m.put(DType.BOOL, "b");
        m.put(DType.INT8, "c");
        m.put(DType.UINT8, "C");
        m.put(DType.INT16, "s");
        m.put(DType.UINT16, "S");
        m.put(DType.INT32, "i");
        m.put(DType.UINT32, "I");
        m.put(DType.INT64, "l");
        m.put(DType.UINT64, "L");
        m.put(DType.FLOAT16, "e");
        m.put(DType.FLOAT32, "f");
        m.put(DType.FLOAT64, "g");
        return m;
    }

    /**
     * The Arrow format string of a dtype's elements.
     *
     * @param dtype the dtype
     * @return its format, for example {@code "i"} for int32, or empty when Arrow has no primitive
     *         type for it (bfloat16, complex, custom dtypes)
     * @throws NullPointerException if {@code dtype} is null
     */
    public static Optional<String> format(DType dtype) {
        Objects.requireNonNull(dtype, "dtype");
        return Optional.ofNullable(FORMATS.get(dtype));
    }

    /**
     * The number of exports (schemas and arrays) not yet released, across the JVM.
     *
     * @return live exports
     */
    public static long outstandingExports() {
        return ArrowExports.outstanding();
    }

    // ---------------------------------------------------------------------------------------------
    // Export

    /**
     * Exports an array through the C Data Interface into structs the caller provides (for
     * example Arrow Java's {@code ArrowSchema.allocateNew(allocator).memoryAddress()}, or a C
     * consumer's stack).
     *
     * @param array  the array, on memory the host can access
     * @param schema an {@code ArrowSchema} to fill (its previous contents are overwritten)
     * @param out    an {@code ArrowArray} to fill
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if {@code schema} or {@code out} is NULL or a heap segment,
     *                                  or a non-zero-length segment smaller than the struct
     * @throws IllegalStateException    if the array is closed or a close of its memory has begun
     * @throws BufferException          if the array cannot be exported: a dtype Arrow has no type
     *                                  for, memory the host cannot access, a tensor whose elements
     *                                  have more than {@link Integer#MAX_VALUE} items
     * @throws OutOfNativeMemoryException if the structs' memory or a copy cannot be allocated
     */
    public static void exportArray(NDArray array, MemorySegment schema, MemorySegment out) {
        export(array, schema, out, false);
    }

    /**
     * Exports an array through the C Device Data Interface: an {@code ArrowDeviceArray} whose
     * {@code device_type} and {@code device_id} are the memory's DLPack device, data synchronised
     * with the device's default stream through the memory's {@link DeviceInterchange} before this
     * returns, and {@code sync_event} NULL. Release it through its {@code array.release}.
     *
     * @param array  the array
     * @param schema an {@code ArrowSchema} to fill
     * @param out    an {@code ArrowDeviceArray} to fill
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if {@code schema} or {@code out} is NULL or a heap segment,
     *                                  or a non-zero-length segment smaller than the struct
     * @throws IllegalStateException    if the array is closed or a close of its memory has begun
     * @throws BufferException          if the array cannot be exported: a dtype Arrow has no type
     *                                  for, device memory without a {@link DeviceInterchange},
     *                                  device memory that would need a copy (not C-contiguous, or
     *                                  bool), a tensor with more than {@link Integer#MAX_VALUE}
     *                                  items per element
     * @throws OutOfNativeMemoryException if the structs' memory or a copy cannot be allocated
     * @throws io.datamem.BackendException if the device runtime fails to synchronise
     */
    public static void exportDeviceArray(NDArray array, MemorySegment schema, MemorySegment out) {
        export(array, schema, out, true);
    }

    private static void export(NDArray array, MemorySegment schema, MemorySegment out, boolean device) {
        Objects.requireNonNull(array, "array");
        MemorySegment s = struct(schema, ARROW_SCHEMA, "schema");
        MemorySegment a = struct(out, device ? ARROW_DEVICE_ARRAY : ARROW_ARRAY, "out");
        DType dtype = array.dtype();
        long staticFormat = staticFormat(dtype);
        if (staticFormat == 0) {
            throw new BufferException("dtype " + dtype + " of " + array + " has no Arrow type (datamem exports "
                    + FORMATS.keySet() + ")");
        }
        long[] shape = array.shape();
        long inner = 1;
        for (int i = 1; i < shape.length; i++) {
            inner *= shape[i]; // cannot overflow: the array's size fits
        }
        if (shape.length >= 2 && inner > Integer.MAX_VALUE) {
            throw new BufferException(array + ": " + inner + " items per tensor (expected: at most "
                    + Integer.MAX_VALUE + ", the largest FixedSizeList size)");
        }
        long listSize = inner;
        // The lifecycle check and pin, before the array's address is read; the array side's Shared
        // keeps the pin until its last struct is released (a copy or a failure releases it here).
        NDArray.Hold pin = array.hold();
        boolean kept = false;
        try {
            kept = exportPinned(array, s, a, device, staticFormat, listSize, pin);
        } finally {
            if (!kept) {
                pin.close();
            }
        }
    }

    /** The export proper, with the array pinned; true if the export keeps {@code pin}. */
    private static boolean exportPinned(NDArray array, MemorySegment s, MemorySegment a, boolean deviceExport,
                                        long format, long listSize, NDArray.Hold pin) {
        MemoryTraits traits = array.traits();
        MemorySegment block = MemorySegment.ofAddress(array.address() - array.byteOffset());
        DeviceInterchange interchange = traits.interchange();
        Device device = interchange == null ? traits.device() : interchange.dlpackDevice(block, traits);
        boolean host = traits.hostAccessible();
        if (!host && !deviceExport) {
            throw new BufferException(array + " is " + traits.kind() + " memory on " + device + ", which the host"
                    + " cannot access: the C Data Interface carries CPU memory only; export it with exportDeviceArray"
                    + " (the C Device Data Interface)");
        }
        if (!host && interchange == null) {
            throw new BufferException(array + " is on " + device + ", but its handler's traits carry no"
                    + " DeviceInterchange to synchronise it");
        }
        boolean bool = array.dtype() == DType.BOOL;
        boolean copy = bool || !array.isCContiguous();
        if (copy && !host) {
            throw new BufferException(array + " on " + device + " needs a copy to be exported (" + (bool
                    ? "Arrow's bool is a bitmap" : "it is not C-contiguous") + "), which datamem cannot make on a"
                    + " device: copy it to a C-contiguous array there first");
        }
        if (interchange != null && !copy) {
            interchange.synchronize(block, OptionalLong.empty());
        }
        boolean tensor = array.ndim() >= 2;
        long length = array.ndim() == 0 ? 1 : array.shape()[0];
        NDArray.Hold view = null;
        NDArray owned = null;
        MemorySegment arrayBlock = null;
        MemorySegment schemaBlock = null;
        long[] tokens = new long[tensor ? 4 : 1];
        int taken = 0;
        try {
            if (bool) {
                owned = packBits(array);
            } else if (copy) {
                owned = array.copy();
            } else {
                view = pin;
            }
            long data = array.size() == 0 ? EMPTY.address() : owned != null ? owned.address() : array.address();
            if (!tensor) {
                // A 1-D array: schema and array in one slot (a pair), whose block is the buffer
                // table; the schema's strings are the static ones. Nothing is allocated but the slot.
                long token = ArrowExports.registerPair(new ArrowExports.Pair(view, owned));
                tokens[taken++] = token;
                long buffers = ArrowExports.SLOTS.address(token);
                ArrowExports.RAW.set(JAVA_LONG, buffers, 0);
                ArrowExports.RAW.set(JAVA_LONG, buffers + 8, data);
                fillArray(a, length, 2, 0, buffers, 0, token);
                fillSchema(s, format, EMPTY_NAME, 0, 0, 0, token | ArrowExports.SCHEMA_TAG);
            } else {
                // The array side: buffer tables and the child, in one block.
                arrayBlock = ArrowExports.malloc(8 + 8 + ARROW_ARRAY.byteSize() + 16);
                ArrowExports.Shared arrayShared = new ArrowExports.Shared(2, view, owned, arrayBlock);
                // The schema side: strings, metadata and the child.
                byte[] fmt = cString("+w:" + listSize);
                byte[] metadata = ArrowMetadata.encode(Map.of(EXTENSION_NAME, FIXED_SHAPE_TENSOR,
                        EXTENSION_METADATA, ArrowMetadata.tensorJson(Arrays.copyOfRange(array.shape(), 1,
                                array.ndim()))));
                long schemaBytes = fmt.length + 8 + 8 + ARROW_SCHEMA.byteSize() + metadata.length;
                schemaBlock = ArrowExports.malloc(align8(schemaBytes));
                ArrowExports.Shared schemaShared = new ArrowExports.Shared(2, null, null, schemaBlock);
                MemorySegment child = arrayBlock.asSlice(16, ARROW_ARRAY.byteSize());
                MemorySegment childSchema = schemaBlock.asSlice(8, ARROW_SCHEMA.byteSize());
                // the parents' nodes name their children, released with them unless moved away
                tokens[taken++] = ArrowExports.register(arrayShared, child.address(), false);
                tokens[taken++] = ArrowExports.register(arrayShared, 0, false);
                tokens[taken++] = ArrowExports.register(schemaShared, childSchema.address(), true);
                tokens[taken++] = ArrowExports.register(schemaShared, 0, true);
                // Nothing fails from here on.
                writeTensorArray(a, arrayBlock, child, tokens[0], tokens[1], length, listSize, data);
                writeTensorSchema(s, schemaBlock, childSchema, tokens[2], tokens[3], format,
                        fmt, metadata);
            }
            if (deviceExport) {
                a.set(JAVA_LONG, D_DEVICE_ID, device.id());
                a.set(JAVA_INT, D_DEVICE_TYPE, device.type().code());
                a.set(JAVA_INT, D_DEVICE_TYPE + 4, 0);
                a.set(ADDRESS, D_SYNC_EVENT, MemorySegment.NULL);
                for (int i = 0; i < 3; i++) {
                    a.set(JAVA_LONG, D_SYNC_EVENT + 8 + 8L * i, 0);
                }
            }
            return view != null;
        } catch (RuntimeException | Error e) {
            for (int i = 0; i < taken; i++) {
                ArrowExports.unregister(tokens[i]);
            }
            if (owned != null) {
                owned.close();
            }
            if (arrayBlock != null) {
                ArrowExports.free(arrayBlock);
            }
            if (schemaBlock != null) {
                ArrowExports.free(schemaBlock);
            }
            throw e;   // the caller releases the pin
        }
    }

    private static long align8(long n) {
        return (n + 7) & ~7L;
    }

    private static byte[] cString(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        return Arrays.copyOf(b, b.length + 1);
    }

    /** A bool array as Arrow's bitmap (LSB first), in a new uint8 array. */
    private static NDArray packBits(NDArray array) {
        long n = array.size();
        NDArray bits = NDArray.zeros(DType.UINT8, Math.max(1, (n + 7) / 8));
        try {
            MemorySegment out = bits.segment();
            NDArray flat = array.isCContiguous() ? array : null;
            if (flat != null) {
                MemorySegment in = array.segment();
                for (long i = 0; i < n; i++) {
                    if (in.get(JAVA_BYTE, i) != 0) {
                        out.set(JAVA_BYTE, i >>> 3, (byte) (out.get(JAVA_BYTE, i >>> 3) | (1 << (i & 7))));
                    }
                }
            } else {
                try (NDArray c = array.copy()) {
                    MemorySegment in = c.segment();
                    for (long i = 0; i < n; i++) {
                        if (in.get(JAVA_BYTE, i) != 0) {
                            out.set(JAVA_BYTE, i >>> 3, (byte) (out.get(JAVA_BYTE, i >>> 3) | (1 << (i & 7))));
                        }
                    }
                }
            }
            return bits;
        } catch (RuntimeException | Error e) {
            bits.close();
            throw e;
        }
    }

    /** A tensor's array side: block = buffers[1] | children[1] | child ArrowArray | child buffers[2]. */
    private static void writeTensorArray(MemorySegment a, MemorySegment block, MemorySegment child, long token,
                                         long childToken, long length, long listSize, long data) {
        MemorySegment childBuffers = block.asSlice(16 + ARROW_ARRAY.byteSize(), 16);
        block.set(JAVA_LONG, 0, 0);                       // validity: no nulls
        block.set(JAVA_LONG, 8, child.address());
        childBuffers.set(JAVA_LONG, 0, 0);
        childBuffers.set(JAVA_LONG, 8, data);
        fillArray(child, length * listSize, 2, 0, childBuffers.address(), 0, childToken);
        fillArray(a, length, 1, 1, block.address(), block.address() + 8, token);
    }

    private static void fillArray(MemorySegment a, long length, long nBuffers, long nChildren, long buffers,
                                  long children, long token) {
        a.set(JAVA_LONG, A_LENGTH, length);
        a.set(JAVA_LONG, A_NULL_COUNT, 0);
        a.set(JAVA_LONG, A_OFFSET, 0);
        a.set(JAVA_LONG, A_N_BUFFERS, nBuffers);
        a.set(JAVA_LONG, A_N_CHILDREN, nChildren);
        a.set(JAVA_LONG, A_BUFFERS, buffers);
        a.set(JAVA_LONG, A_CHILDREN, children);
        a.set(JAVA_LONG, A_DICTIONARY, 0);
        a.set(JAVA_LONG, A_PRIVATE, token);
        a.set(JAVA_LONG, A_RELEASE, ArrowExports.RELEASE_ARRAY_ADDRESS);
    }

    /**
     * A tensor's schema side: block = children[1] | child ArrowSchema | format | metadata; the
     * child's format and both names are static strings.
     */
    private static void writeTensorSchema(MemorySegment s, MemorySegment block, MemorySegment child, long token,
                                          long childToken, long childFormat, byte[] fmt, byte[] metadata) {
        block.set(JAVA_LONG, 0, child.address());
        long at = 8 + ARROW_SCHEMA.byteSize();
        fillSchema(child, childFormat, ITEM_NAME, 0, 0, 0, childToken);
        long format = put(block, at, fmt);
        at += fmt.length;
        long meta = put(block, at, metadata);
        fillSchema(s, format, EMPTY_NAME, meta, 1, block.address(), token);
    }

    private static long put(MemorySegment block, long at, byte[] bytes) {
        MemorySegment.copy(MemorySegment.ofArray(bytes), 0, block, at, bytes.length);
        return block.address() + at;
    }

    private static void fillSchema(MemorySegment s, long format, long name, long metadata, long nChildren,
                                   long children, long token) {
        s.set(JAVA_LONG, S_FORMAT, format);
        s.set(JAVA_LONG, S_NAME, name);
        s.set(JAVA_LONG, S_METADATA, metadata);
        s.set(JAVA_LONG, S_FLAGS, 0);
        s.set(JAVA_LONG, S_N_CHILDREN, nChildren);
        s.set(JAVA_LONG, S_CHILDREN, children);
        s.set(JAVA_LONG, S_DICTIONARY, 0);
        s.set(JAVA_LONG, S_PRIVATE, token);
        s.set(JAVA_LONG, S_RELEASE, ArrowExports.RELEASE_SCHEMA_ADDRESS);
    }

    // ---------------------------------------------------------------------------------------------
    // Release, for consumers

    /**
     * Calls a schema's release callback, if it is not released yet: what a consumer does with a
     * schema it will not use (one an import rejected, say).
     *
     * @param schema an {@code ArrowSchema}
     * @throws NullPointerException     if {@code schema} is null
     * @throws IllegalArgumentException if {@code schema} is NULL or a heap segment
     */
    public static void releaseSchema(MemorySegment schema) {
        ArrowImport.callRelease(struct(schema, ARROW_SCHEMA, "schema"), S_RELEASE);
    }

    /**
     * Calls an array's release callback, if it is not released yet. An {@code ArrowDeviceArray}
     * is released through the {@code ArrowArray} it begins with: pass it here.
     *
     * @param array an {@code ArrowArray} or {@code ArrowDeviceArray}
     * @throws NullPointerException     if {@code array} is null
     * @throws IllegalArgumentException if {@code array} is NULL or a heap segment
     */
    public static void releaseArray(MemorySegment array) {
        ArrowImport.callRelease(struct(array, ARROW_ARRAY, "array"), A_RELEASE);
    }

    // ---------------------------------------------------------------------------------------------
    // Import

    /**
     * Imports an array from the C Data Interface without copying (bool arrays excepted): see the
     * class description. CPU memory.
     *
     * @param schema the producer's {@code ArrowSchema}; released on success
     * @param array  the producer's {@code ArrowArray}; moved on success (marked released, its
     *               contents owned by the returned array)
     * @return a read-only owning array
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if a struct is NULL, a heap segment, or a non-zero-length
     *                                  segment smaller than the struct
     * @throws BufferException          if the structs are rejected; both then stay the caller's
     * @throws OutOfNativeMemoryException if memory for the moved struct or a bool array's copy
     *                                  cannot be allocated; both structs then stay the caller's
     */
    public static NDArray importArray(MemorySegment schema, MemorySegment array) {
        MemorySegment s = struct(schema, ARROW_SCHEMA, "schema");
        MemorySegment a = struct(array, ARROW_ARRAY, "array");
        return importStructs(s, a, Device.CPU, null);
    }

    /**
     * Imports an array from the C Device Data Interface, refusing a non-NULL {@code sync_event}
     * (datamem cannot wait on a device runtime's events itself; use
     * {@link #importDeviceArray(MemorySegment, MemorySegment, SyncEventHandler)}).
     *
     * @param schema      the producer's {@code ArrowSchema}; released on success
     * @param deviceArray the producer's {@code ArrowDeviceArray}; its {@code array} moved on success
     * @return a read-only owning array on the struct's device
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if a struct is NULL, a heap segment, or a non-zero-length
     *                                  segment smaller than the struct
     * @throws BufferException          if the structs are rejected (a non-NULL {@code sync_event}
     *                                  included); both then stay the caller's
     * @throws OutOfNativeMemoryException if memory for the moved struct cannot be allocated
     */
    public static NDArray importDeviceArray(MemorySegment schema, MemorySegment deviceArray) {
        return importDeviceArray(schema, deviceArray, null);
    }

    /**
     * Imports an array from the C Device Data Interface: as {@link #importArray}, on the device
     * the struct names. The array's traits follow that device as a DLPack import's do: host memory
     * for {@code ARROW_DEVICE_CPU}, host-pinned for {@code CUDA_HOST}/{@code ROCM_HOST}, managed for
     * {@code CUDA_MANAGED}, device memory for every other type, with the
     * {@link DeviceInterchange} of the installed backend that manages the device, if any; for
     * {@code ONEAPI}, whose arrays do not tell their USM kind, that backend is asked
     * ({@link UsmHook#usmKind}): USM host memory imports as host-pinned and USM shared memory as
     * managed memory, both host-accessible, anything else as device memory. A
     * non-NULL {@code sync_event} is handed to {@code syncEvents} before the import.
     *
     * @param schema      the producer's {@code ArrowSchema}; released on success
     * @param deviceArray the producer's {@code ArrowDeviceArray}; its {@code array} moved on success
     * @param syncEvents  what waits on a non-NULL {@code sync_event}, or null to refuse one
     * @return a read-only owning array on the struct's device
     * @throws NullPointerException     if {@code schema} or {@code deviceArray} is null
     * @throws IllegalArgumentException if a struct is NULL, a heap segment, or a non-zero-length
     *                                  segment smaller than the struct
     * @throws BufferException          if the structs are rejected: as {@link #importArray}, and
     *                                  an unknown device type, a device id outside 0..2^31-1, a
     *                                  non-NULL {@code sync_event} without {@code syncEvents},
     *                                  a bool array on memory the host cannot access; both then
     *                                  stay the caller's
     * @throws OutOfNativeMemoryException if memory for the moved struct cannot be allocated
     */
    public static NDArray importDeviceArray(MemorySegment schema, MemorySegment deviceArray,
                                            SyncEventHandler syncEvents) {
        MemorySegment s = struct(schema, ARROW_SCHEMA, "schema");
        MemorySegment d = struct(deviceArray, ARROW_DEVICE_ARRAY, "deviceArray");
        long id = d.get(JAVA_LONG, D_DEVICE_ID);
        int type = d.get(JAVA_INT, D_DEVICE_TYPE);
        DeviceType deviceType;
        try {
            deviceType = DeviceType.ofCode(type);
        } catch (IllegalArgumentException e) {
            throw reject("device_type " + type + " is not a device type datamem knows (ArrowDeviceType takes"
                    + " DLPack's DLDeviceType codes)");
        }
        if (id < 0 || id > Integer.MAX_VALUE) {
            throw reject("device_id " + id + " (expected: 0.." + Integer.MAX_VALUE + ")");
        }
        Device device = new Device(deviceType, (int) id);
        long event = d.get(JAVA_LONG, D_SYNC_EVENT);
        if (event != 0 && syncEvents == null) {
            throw reject("sync_event 0x" + Long.toHexString(event) + " is set for " + device + ": the consumer must"
                    + " wait on it, which datamem cannot do for every device runtime; import with a"
                    + " SyncEventHandler");
        }
        return importStructs(s, d.asSlice(0, ARROW_ARRAY.byteSize()), device,
                event == 0 ? null : () -> syncEvents.await(MemorySegment.ofAddress(event), device));
    }

    /** What the schema describes. */
    private record Described(DType dtype, long listSize, long[] tensorShape) {
    }

    private static NDArray importStructs(MemorySegment s, MemorySegment a, Device device, Runnable sync) {
        if (s.get(JAVA_LONG, S_RELEASE) == 0) {
            throw reject("the schema is released (its release is NULL)");
        }
        if (a.get(JAVA_LONG, A_RELEASE) == 0) {
            throw reject("the array is released (its release is NULL)");
        }
        Described described = describe(s);
        DType dtype = described.dtype();
        boolean tensor = described.tensorShape() != null;
        long length = a.get(JAVA_LONG, A_LENGTH);
        long offset = a.get(JAVA_LONG, A_OFFSET);
        checkArray(a, "array", tensor ? 1 : 2, tensor ? 1 : 0);
        long count;
        long elementOffset;
        long data;
        if (tensor) {
            long children = a.get(JAVA_LONG, A_CHILDREN);
            if (children == 0) {
                throw reject("array: children is NULL for n_children 1");
            }
            long childAddress = MemorySegment.ofAddress(children).reinterpret(8).get(JAVA_LONG, 0);
            if (childAddress == 0) {
                throw reject("array: children[0] is NULL");
            }
            MemorySegment child = MemorySegment.ofAddress(childAddress).reinterpret(ARROW_ARRAY.byteSize());
            if (child.get(JAVA_LONG, A_RELEASE) == 0) {
                throw reject("array: children[0] is released (its release is NULL)");
            }
            checkArray(child, "array.children[0]", 2, 0);
            long listSize = described.listSize();
            count = mul(length, listSize, "length " + length + " x list size " + listSize);
            long needed = mul(add(offset, length, "offset + length"), listSize, "(offset + length) x list size");
            long childLength = child.get(JAVA_LONG, A_LENGTH);
            if (needed > childLength) {
                throw reject("array: offset " + offset + " + length " + length + " tensors of " + listSize
                        + " items need " + needed + " child items, but children[0] has length " + childLength);
            }
            elementOffset = add(child.get(JAVA_LONG, A_OFFSET), mul(offset, listSize, "offset x list size"),
                    "child offset + offset x list size");
            data = buffer(child, 1);
        } else {
            count = length;
            elementOffset = offset;
            data = buffer(a, 1);
        }
        if (count > 0 && data == 0) {
            throw reject("the data buffer is NULL for " + count + " element(s)");
        }
        boolean bool = dtype == DType.BOOL;
        long firstByte = bool ? elementOffset / 8 : mul(elementOffset, dtype.itemSize(), "offset in bytes");
        long endByte = bool ? (add(elementOffset, count, "offset + length") + 7) / 8
                : add(firstByte, mul(count, dtype.itemSize(), "length in bytes"), "offset + length in bytes");
        if (count > 0 && (data < 0 || data > Long.MAX_VALUE - endByte)) {
            throw reject("data 0x" + Long.toHexString(data) + " + " + endByte + " bytes reaches outside the"
                    + " address space");
        }
        long[] shape;
        if (tensor) {
            long[] ts = described.tensorShape();
            shape = new long[ts.length + 1];
            shape[0] = length;
            System.arraycopy(ts, 0, shape, 1, ts.length);
        } else {
            shape = new long[] {length};
        }
        if (shape.length > NDArray.MAX_NDIM) {
            throw reject("a tensor of " + shape.length + " dimensions (expected: at most " + NDArray.MAX_NDIM + ")");
        }
        MemoryTraits traits = importTraits(device, count == 0 ? data : data + firstByte);
        if (bool && !traits.hostAccessible()) {
            throw reject("a bool array on " + device + ": its bitmap must be unpacked by the host, which cannot"
                    + " access that memory");
        }
        if (sync != null) {
            sync.run();
        }
        if (bool) {
            NDArray out = NDArray.empty(DType.BOOL, shape);
            try {
                if (count > 0) {
                    MemorySegment bits = MemorySegment.ofAddress(data).reinterpret(endByte);
                    MemorySegment o = out.segment();
                    for (long i = 0; i < count; i++) {
                        long bit = elementOffset + i;
                        o.set(JAVA_BYTE, i, (byte) ((bits.get(JAVA_BYTE, bit >>> 3) >>> (bit & 7)) & 1));
                    }
                }
            } catch (RuntimeException | Error e) {
                out.close();
                throw e;
            }
            ArrowImport.callRelease(a, A_RELEASE);
            ArrowImport.callRelease(s, S_RELEASE);
            return out.asReadOnly();
        }
        long taken = ArrowExports.liveArrayToken(a.address());
        if (taken != -1) {
            // An array datamem exported, back in this JVM: taken over instead of moved. The caller's
            // struct is marked released; the import releases the export by its token.
            a.set(JAVA_LONG, A_RELEASE, 0);
            NDArray imported;
            try {
                ArrowImport.Taken release = new ArrowImport.Taken(taken);
                DataMemHandler handler = new DataMemHandler(HANDLER_NAME, 1, ReleasingAllocator.of(HANDLER_NAME,
                        release, traits, release));
                imported = NDArray.adopt(handler, MemorySegment.ofAddress(data), count == 0 ? 0 : endByte, dtype,
                        shape, null, count == 0 ? 0 : firstByte, true);
            } catch (RuntimeException | Error e) {
                a.set(JAVA_LONG, A_RELEASE, ArrowExports.RELEASE_ARRAY_ADDRESS);   // the struct is the caller's again
                throw e;
            }
            ArrowImport.callRelease(s, S_RELEASE);
            return imported;
        }
        // The struct is moved into one of ours: a slot of a table of 80-byte blocks (no malloc), or
        // a block of its own when the table is full.
        long movedToken = ArrowExports.MOVED.acquire(Boolean.TRUE);
        MemorySegment moved = movedToken != -1
                ? MemorySegment.ofAddress(ArrowExports.MOVED.address(movedToken)).reinterpret(ARROW_ARRAY.byteSize())
                : ArrowExports.malloc(ARROW_ARRAY.byteSize());
        MemorySegment.copy(a, 0, moved, 0, ARROW_ARRAY.byteSize());
        a.set(JAVA_LONG, A_RELEASE, 0);   // moved: the caller's struct is released
        ArrowImport.Moved release = new ArrowImport.Moved(moved, movedToken);
        NDArray imported;
        try {
            DataMemHandler handler = new DataMemHandler(HANDLER_NAME, 1, ReleasingAllocator.of(HANDLER_NAME,
                    release, traits, release));
            long byteOffset = count == 0 ? 0 : firstByte;
            imported = NDArray.adopt(handler, MemorySegment.ofAddress(data),
                    count == 0 ? 0 : endByte, dtype, shape, null, byteOffset, true);
        } catch (RuntimeException | Error e) {
            MemorySegment.copy(moved, 0, a, 0, ARROW_ARRAY.byteSize());
            release.discard();
            throw e;
        }
        ArrowImport.callRelease(s, S_RELEASE);
        return imported;
    }

    private static Described describe(MemorySegment s) {
        if (s.get(JAVA_LONG, S_DICTIONARY) != 0) {
            throw reject("the schema has a dictionary (dictionary-encoded arrays are not imported)");
        }
        long formatAddress = s.get(JAVA_LONG, S_FORMAT);
        long nChildren = s.get(JAVA_LONG, S_N_CHILDREN);
        if (formatAddress != 0 && nChildren == 0) {
            // The common case, a one-character primitive format, read without making a String.
            byte c = ArrowExports.RAW.get(JAVA_BYTE, formatAddress);
            if (c > 0 && ArrowExports.RAW.get(JAVA_BYTE, formatAddress + 1) == 0 && BY_FORMAT_CHAR[c] != null) {
                return new Described(BY_FORMAT_CHAR[c], 0, null);
            }
        }
        String format = ArrowMetadata.cString(formatAddress, "the schema's format");
        if (format == null) {
            throw reject("the schema's format is NULL");
        }
        if (!format.startsWith("+w:")) {
            if (nChildren != 0) {
                throw reject("the schema of format '" + format + "' has n_children " + nChildren + " (expected: 0)");
            }
            return new Described(primitive(format), 0, null);
        }
        long listSize;
        try {
            listSize = Integer.parseInt(format.substring(3));
        } catch (NumberFormatException e) {
            throw reject("format '" + format + "': the list size is not an int32");
        }
        if (listSize < 0) {
            throw reject("format '" + format + "': negative list size");
        }
        long children = s.get(JAVA_LONG, S_CHILDREN);
        if (nChildren != 1 || children == 0) {
            throw reject("the schema of format '" + format + "' has n_children " + nChildren + " and children 0x"
                    + Long.toHexString(children) + " (expected: 1 and a pointer)");
        }
        long childAddress = MemorySegment.ofAddress(children).reinterpret(8).get(JAVA_LONG, 0);
        if (childAddress == 0) {
            throw reject("the schema's children[0] is NULL");
        }
        MemorySegment child = MemorySegment.ofAddress(childAddress).reinterpret(ARROW_SCHEMA.byteSize());
        if (child.get(JAVA_LONG, S_DICTIONARY) != 0 || child.get(JAVA_LONG, S_N_CHILDREN) != 0) {
            throw reject("the FixedSizeList's child has children or a dictionary (expected: a primitive type)");
        }
        String childFormat = ArrowMetadata.cString(child.get(JAVA_LONG, S_FORMAT), "the child schema's format");
        if (childFormat == null) {
            throw reject("the child schema's format is NULL");
        }
        DType dtype = primitive(childFormat);
        if (dtype == DType.BOOL) {
            throw reject("a FixedSizeList of bool (tensors of bool are not imported)");
        }
        Map<String, String> metadata = ArrowMetadata.decode(s.get(JAVA_LONG, S_METADATA));
        long[] tensorShape = {listSize};
        if (FIXED_SHAPE_TENSOR.equals(metadata.get(EXTENSION_NAME))) {
            tensorShape = tensorShape(metadata.get(EXTENSION_METADATA), listSize);
        }
        return new Described(dtype, listSize, tensorShape);
    }

    private static long[] tensorShape(String json, long listSize) {
        if (json == null) {
            throw reject(FIXED_SHAPE_TENSOR + " without " + EXTENSION_METADATA);
        }
        Object parsed = ArrowMetadata.parseJson(json);
        if (!(parsed instanceof Map<?, ?> map)) {
            throw reject(FIXED_SHAPE_TENSOR + " metadata " + json + " is not a JSON object");
        }
        long[] shape = ArrowMetadata.longs(map.get("shape"), "shape");
        if (shape == null) {
            throw reject(FIXED_SHAPE_TENSOR + " metadata " + json + " has no shape");
        }
        long product = 1;
        for (long d : shape) {
            if (d < 0) {
                throw reject(FIXED_SHAPE_TENSOR + " shape " + Arrays.toString(shape) + " has a negative dimension");
            }
            product = mul(product, d, "the tensor shape's product");
        }
        if (product != listSize) {
            throw reject(FIXED_SHAPE_TENSOR + " shape " + Arrays.toString(shape) + " has " + product
                    + " items, but the storage's list size is " + listSize);
        }
        long[] permutation = ArrowMetadata.longs(map.get("permutation"), "permutation");
        if (permutation != null) {
            for (int i = 0; i < permutation.length; i++) {
                if (permutation[i] != i || permutation.length != shape.length) {
                    throw reject(FIXED_SHAPE_TENSOR + " permutation " + Arrays.toString(permutation) + " (datamem"
                            + " imports row-major tensors only: no permutation, or the identity)");
                }
            }
        }
        return shape;
    }

    private static DType primitive(String format) {
        for (Map.Entry<DType, String> e : FORMATS.entrySet()) {
            if (e.getValue().equals(format)) {
                return e.getKey();
            }
        }
        throw reject("format '" + format + "' (datamem imports " + String.join(" ", FORMATS.values())
                + ", and FixedSizeLists of them as arrays of two or more dimensions)");
    }

    private static void checkArray(MemorySegment a, String what, long nBuffers, long nChildren) {
        long length = a.get(JAVA_LONG, A_LENGTH);
        long offset = a.get(JAVA_LONG, A_OFFSET);
        long nullCount = a.get(JAVA_LONG, A_NULL_COUNT);
        if (length < 0) {
            throw reject(what + ": length " + length + " (expected: >= 0)");
        }
        if (offset < 0) {
            throw reject(what + ": offset " + offset + " (expected: >= 0)");
        }
        if (a.get(JAVA_LONG, A_N_BUFFERS) != nBuffers) {
            throw reject(what + ": n_buffers " + a.get(JAVA_LONG, A_N_BUFFERS) + " (expected: " + nBuffers + ")");
        }
        if (a.get(JAVA_LONG, A_N_CHILDREN) != nChildren) {
            throw reject(what + ": n_children " + a.get(JAVA_LONG, A_N_CHILDREN) + " (expected: " + nChildren + ")");
        }
        if (a.get(JAVA_LONG, A_DICTIONARY) != 0) {
            throw reject(what + ": a dictionary (expected: NULL)");
        }
        if (a.get(JAVA_LONG, A_BUFFERS) == 0) {
            throw reject(what + ": buffers is NULL for n_buffers " + nBuffers);
        }
        long validity = buffer(a, 0);
        if (nullCount < -1 || (nullCount != 0 && validity != 0)) {
            throw reject(what + ": null_count " + nullCount + " with validity bitmap 0x" + Long.toHexString(validity)
                    + " (datamem arrays have no nulls: expected null_count 0, or a NULL bitmap)");
        }
        if (nullCount > 0) {
            throw reject(what + ": null_count " + nullCount + " without a validity bitmap");
        }
    }

    private static long buffer(MemorySegment a, int i) {
        return ArrowExports.RAW.get(JAVA_LONG, a.get(JAVA_LONG, A_BUFFERS) + 8L * i);
    }

    private static MemoryTraits importTraits(Device device, long block) {
        return DLPack.importTraits(device, block);
    }

    private static long mul(long a, long b, String what) {
        try {
            return Math.multiplyExact(a, b);
        } catch (ArithmeticException e) {
            throw reject(what + " overflows a 64-bit count");
        }
    }

    private static long add(long a, long b, String what) {
        try {
            return Math.addExact(a, b);
        } catch (ArithmeticException e) {
            throw reject(what + " overflows a 64-bit count");
        }
    }

    private static BufferException reject(String why) {
        return new BufferException("Arrow array rejected, ownership stays with the caller: " + why);
    }

    private static MemorySegment struct(MemorySegment segment, StructLayout layout, String what) {
        Objects.requireNonNull(segment, what);
        if (!segment.isNative() || segment.address() == 0) {
            throw new IllegalArgumentException(what + ": " + (segment.isNative() ? "NULL" : "a heap segment")
                    + " (expected: a native " + layout.name().orElseThrow() + " pointer)");
        }
        if (segment.byteSize() != 0 && segment.byteSize() < layout.byteSize()) {
            throw new IllegalArgumentException(what + ": " + segment.byteSize() + " bytes (expected: at least "
                    + layout.byteSize() + " for " + layout.name().orElseThrow() + ")");
        }
        return MemorySegment.ofAddress(segment.address()).reinterpret(layout.byteSize());
    }
}
