package io.datamem.arrow;

import io.datamem.DataMemHandler;
import io.datamem.Device;
import io.datamem.DeviceType;
import io.datamem.MemoryTraits;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.buffer.BufferException;
import io.datamem.dlpack.DLPack;
import io.datamem.spi.ReleasingAllocator;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Map;

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
import static io.datamem.arrow.ArrowAbi.A_RELEASE;
import static io.datamem.arrow.ArrowAbi.D_DEVICE_ID;
import static io.datamem.arrow.ArrowAbi.D_DEVICE_TYPE;
import static io.datamem.arrow.ArrowAbi.D_SYNC_EVENT;
import static io.datamem.arrow.ArrowAbi.FORMATS;
import static io.datamem.arrow.ArrowAbi.S_CHILDREN;
import static io.datamem.arrow.ArrowAbi.S_DICTIONARY;
import static io.datamem.arrow.ArrowAbi.S_FORMAT;
import static io.datamem.arrow.ArrowAbi.S_METADATA;
import static io.datamem.arrow.ArrowAbi.S_N_CHILDREN;
import static io.datamem.arrow.ArrowAbi.S_RELEASE;
import static io.datamem.arrow.ArrowAbi.struct;
import static io.datamem.arrow.ArrowCData.EXTENSION_METADATA;
import static io.datamem.arrow.ArrowCData.EXTENSION_NAME;
import static io.datamem.arrow.ArrowCData.FIXED_SHAPE_TENSOR;
import static io.datamem.arrow.ArrowCData.HANDLER_NAME;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The import direction of {@link ArrowCData}: validates a producer's {@code ArrowSchema} and
 * {@code ArrowArray} (or {@code ArrowDeviceArray}), moves the array struct into datamem's memory
 * and adopts the producer's buffer as a read-only array whose allocator calls the producer's
 * {@code release} once (through {@link ArrowReleases.Moved}), or takes back a struct datamem
 * exported itself ({@link ArrowReleases.Taken}).
 */
final class ArrowImport {

    /** The dtype of each one-character format, by the character; null where none. */
    private static final DType[] BY_FORMAT_CHAR = byFormatChar();

    private ArrowImport() {
    }

    private static DType[] byFormatChar() {
        DType[] table = new DType[128];
        for (Map.Entry<DType, String> e : FORMATS.entrySet()) {
            table[e.getValue().charAt(0)] = e.getKey();
        }
        return table;
    }

    /** {@link ArrowCData#importArray}, whose javadoc gives the exceptions. */
    static NDArray importArray(MemorySegment schema, MemorySegment array) {
        MemorySegment s = struct(schema, ARROW_SCHEMA, "schema");
        MemorySegment a = struct(array, ARROW_ARRAY, "array");
        return importStructs(s, a, Device.CPU, null);
    }

    /** {@link ArrowCData#importDeviceArray(MemorySegment, MemorySegment, SyncEventHandler)}. */
    static NDArray importDeviceArray(MemorySegment schema, MemorySegment deviceArray,
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
            ArrowReleases.callRelease(a, A_RELEASE);
            ArrowReleases.callRelease(s, S_RELEASE);
            return out.asReadOnly();
        }
        long taken = ArrowReleases.liveArrayToken(a.address());
        if (taken != -1) {
            // An array datamem exported, back in this JVM: taken over instead of moved. The caller's
            // struct is marked released; the import releases the export by its token.
            a.set(JAVA_LONG, A_RELEASE, 0);
            NDArray imported;
            try {
                ArrowReleases.Taken release = new ArrowReleases.Taken(taken);
                DataMemHandler handler = new DataMemHandler(HANDLER_NAME, 1, ReleasingAllocator.of(HANDLER_NAME,
                        release, traits, release));
                imported = NDArray.adopt(handler, MemorySegment.ofAddress(data), count == 0 ? 0 : endByte, dtype,
                        shape, null, count == 0 ? 0 : firstByte, true);
            } catch (RuntimeException | Error e) {
                a.set(JAVA_LONG, A_RELEASE, ArrowReleases.RELEASE_ARRAY_ADDRESS);   // the struct is the caller's again
                throw e;
            }
            ArrowReleases.callRelease(s, S_RELEASE);
            return imported;
        }
        // The struct is moved into one of ours: a slot of a table of 80-byte blocks (no malloc), or
        // a block of its own when the table is full.
        long movedToken = ArrowReleases.MOVED.acquire(Boolean.TRUE);
        MemorySegment moved = movedToken != -1
                ? MemorySegment.ofAddress(ArrowReleases.MOVED.address(movedToken))
                        .reinterpret(ARROW_ARRAY.byteSize())
                : ArrowAbi.malloc(ARROW_ARRAY.byteSize());
        MemorySegment.copy(a, 0, moved, 0, ARROW_ARRAY.byteSize());
        a.set(JAVA_LONG, A_RELEASE, 0);   // moved: the caller's struct is released
        ArrowReleases.Moved release = new ArrowReleases.Moved(moved, movedToken);
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
        ArrowReleases.callRelease(s, S_RELEASE);
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
            byte c = ArrowAbi.RAW.get(JAVA_BYTE, formatAddress);
            if (c > 0 && ArrowAbi.RAW.get(JAVA_BYTE, formatAddress + 1) == 0 && BY_FORMAT_CHAR[c] != null) {
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
        return ArrowAbi.RAW.get(JAVA_LONG, a.get(JAVA_LONG, A_BUFFERS) + 8L * i);
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
}
