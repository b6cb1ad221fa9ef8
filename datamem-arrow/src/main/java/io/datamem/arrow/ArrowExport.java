package io.datamem.arrow;

import io.datamem.Device;
import io.datamem.DeviceInterchange;
import io.datamem.MemoryTraits;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.buffer.BufferException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;

import static io.datamem.arrow.ArrowAbi.ARROW_ARRAY;
import static io.datamem.arrow.ArrowAbi.ARROW_DEVICE_ARRAY;
import static io.datamem.arrow.ArrowAbi.ARROW_SCHEMA;
import static io.datamem.arrow.ArrowAbi.A_BUFFERS;
import static io.datamem.arrow.ArrowAbi.A_CHILDREN;
import static io.datamem.arrow.ArrowAbi.A_DICTIONARY;
import static io.datamem.arrow.ArrowAbi.A_LENGTH;
import static io.datamem.arrow.ArrowAbi.A_NULL_COUNT;
import static io.datamem.arrow.ArrowAbi.A_N_BUFFERS;
import static io.datamem.arrow.ArrowAbi.A_N_CHILDREN;
import static io.datamem.arrow.ArrowAbi.A_OFFSET;
import static io.datamem.arrow.ArrowAbi.A_PRIVATE;
import static io.datamem.arrow.ArrowAbi.A_RELEASE;
import static io.datamem.arrow.ArrowAbi.D_DEVICE_ID;
import static io.datamem.arrow.ArrowAbi.D_DEVICE_TYPE;
import static io.datamem.arrow.ArrowAbi.D_SYNC_EVENT;
import static io.datamem.arrow.ArrowAbi.FORMATS;
import static io.datamem.arrow.ArrowAbi.S_CHILDREN;
import static io.datamem.arrow.ArrowAbi.S_DICTIONARY;
import static io.datamem.arrow.ArrowAbi.S_FLAGS;
import static io.datamem.arrow.ArrowAbi.S_FORMAT;
import static io.datamem.arrow.ArrowAbi.S_METADATA;
import static io.datamem.arrow.ArrowAbi.S_NAME;
import static io.datamem.arrow.ArrowAbi.S_N_CHILDREN;
import static io.datamem.arrow.ArrowAbi.S_PRIVATE;
import static io.datamem.arrow.ArrowAbi.S_RELEASE;
import static io.datamem.arrow.ArrowAbi.struct;
import static io.datamem.arrow.ArrowCData.EXTENSION_METADATA;
import static io.datamem.arrow.ArrowCData.EXTENSION_NAME;
import static io.datamem.arrow.ArrowCData.FIXED_SHAPE_TENSOR;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The export direction of {@link ArrowCData}: fills a consumer's {@code ArrowSchema} and
 * {@code ArrowArray} (or {@code ArrowDeviceArray}) for an array, sharing its memory under a hold
 * or copying it (not C-contiguous, bool), and registers every struct with
 * {@link ArrowReleases}, whose release callbacks give the hold, the copy and the structs' native
 * memory back.
 */
final class ArrowExport {

    /** A valid, aligned address for the data buffer of arrays without elements (never dereferenced). */
    private static final MemorySegment EMPTY = Arena.global().allocate(64, 64);

    /**
     * The format strings of {@link ArrowAbi#FORMATS} as C strings, and the names {@code ""} and
     * {@code "item"}: made once in the global arena, never freed, shared by every export (a schema's
     * strings must live until its release; these live for the process).
     */
    private static final Map<DType, Long> STATIC_FORMATS = staticFormats();
    private static final long EMPTY_NAME = Arena.global().allocateFrom("").address();
    private static final long ITEM_NAME = Arena.global().allocateFrom("item").address();

    /** The dtypes of {@link ArrowAbi#FORMATS} and their static C strings, in the same order. */
    private static final DType[] FORMAT_DTYPES = FORMATS.keySet().toArray(DType[]::new);
    private static final long[] FORMAT_ADDRESSES = Arrays.stream(FORMAT_DTYPES)
            .mapToLong(d -> STATIC_FORMATS.get(d)).toArray();

    private ArrowExport() {
    }

    private static Map<DType, Long> staticFormats() {
        Map<DType, Long> m = new HashMap<>();
        for (Map.Entry<DType, String> e : FORMATS.entrySet()) {
            m.put(e.getKey(), Arena.global().allocateFrom(e.getValue()).address());
        }
        return Map.copyOf(m);
    }

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

    /**
     * Exports {@code array} into the consumer's structs: {@link ArrowCData#exportArray} and, with
     * {@code device}, {@link ArrowCData#exportDeviceArray}, whose javadoc gives the exceptions.
     */
    static void export(NDArray array, MemorySegment schema, MemorySegment out, boolean device) {
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
                long token = ArrowReleases.registerPair(new ArrowReleases.Pair(view, owned));
                tokens[taken++] = token;
                long buffers = ArrowReleases.SLOTS.address(token);
                ArrowAbi.RAW.set(JAVA_LONG, buffers, 0);
                ArrowAbi.RAW.set(JAVA_LONG, buffers + 8, data);
                fillArray(a, length, 2, 0, buffers, 0, token);
                fillSchema(s, format, EMPTY_NAME, 0, 0, 0, token | ArrowReleases.SCHEMA_TAG);
            } else {
                // The array side: buffer tables and the child, in one block.
                arrayBlock = ArrowAbi.malloc(8 + 8 + ARROW_ARRAY.byteSize() + 16);
                ArrowReleases.Shared arrayShared = new ArrowReleases.Shared(2, view, owned, arrayBlock);
                // The schema side: strings, metadata and the child.
                byte[] fmt = cString("+w:" + listSize);
                byte[] metadata = ArrowMetadata.encode(Map.of(EXTENSION_NAME, FIXED_SHAPE_TENSOR,
                        EXTENSION_METADATA, ArrowMetadata.tensorJson(Arrays.copyOfRange(array.shape(), 1,
                                array.ndim()))));
                long schemaBytes = fmt.length + 8 + 8 + ARROW_SCHEMA.byteSize() + metadata.length;
                schemaBlock = ArrowAbi.malloc(align8(schemaBytes));
                ArrowReleases.Shared schemaShared = new ArrowReleases.Shared(2, null, null, schemaBlock);
                MemorySegment child = arrayBlock.asSlice(16, ARROW_ARRAY.byteSize());
                MemorySegment childSchema = schemaBlock.asSlice(8, ARROW_SCHEMA.byteSize());
                // the parents' nodes name their children, released with them unless moved away
                tokens[taken++] = ArrowReleases.register(arrayShared, child.address(), false);
                tokens[taken++] = ArrowReleases.register(arrayShared, 0, false);
                tokens[taken++] = ArrowReleases.register(schemaShared, childSchema.address(), true);
                tokens[taken++] = ArrowReleases.register(schemaShared, 0, true);
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
                ArrowReleases.unregister(tokens[i]);
            }
            if (owned != null) {
                owned.close();
            }
            if (arrayBlock != null) {
                ArrowAbi.free(arrayBlock);
            }
            if (schemaBlock != null) {
                ArrowAbi.free(schemaBlock);
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
        a.set(JAVA_LONG, A_RELEASE, ArrowReleases.RELEASE_ARRAY_ADDRESS);
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
        s.set(JAVA_LONG, S_RELEASE, ArrowReleases.RELEASE_SCHEMA_ADDRESS);
    }
}
