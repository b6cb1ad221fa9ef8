package io.datamem.arrow;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.OutOfNativeMemoryException;
import io.datamem.array.DType;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * What both directions of {@link ArrowCData} share: the structs as the specification's
 * {@code abi.h} lays them out, with their field offsets, the Arrow format of each dtype datamem
 * carries, the check of a struct argument, raw access to memory at an address, and the native
 * memory of the structs datamem owns.
 */
final class ArrowAbi {

    /** {@code struct ArrowSchema} (72 bytes). */
    static final StructLayout ARROW_SCHEMA = MemoryLayout.structLayout(
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
    static final StructLayout ARROW_ARRAY = MemoryLayout.structLayout(
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
    static final StructLayout ARROW_DEVICE_ARRAY = MemoryLayout.structLayout(
            ARROW_ARRAY.withName("array"),
            JAVA_LONG.withName("device_id"),
            JAVA_INT.withName("device_type"),
            MemoryLayout.paddingLayout(4),
            ADDRESS.withName("sync_event"),
            MemoryLayout.sequenceLayout(3, JAVA_LONG).withName("reserved")).withName("ArrowDeviceArray");

    // ArrowSchema offsets
    static final long S_FORMAT = 0;
    static final long S_NAME = 8;
    static final long S_METADATA = 16;
    static final long S_FLAGS = 24;
    static final long S_N_CHILDREN = 32;
    static final long S_CHILDREN = 40;
    static final long S_DICTIONARY = 48;
    static final long S_RELEASE = 56;
    static final long S_PRIVATE = 64;
    // ArrowArray offsets
    static final long A_LENGTH = 0;
    static final long A_NULL_COUNT = 8;
    static final long A_OFFSET = 16;
    static final long A_N_BUFFERS = 24;
    static final long A_N_CHILDREN = 32;
    static final long A_BUFFERS = 40;
    static final long A_CHILDREN = 48;
    static final long A_DICTIONARY = 56;
    static final long A_RELEASE = 64;
    static final long A_PRIVATE = 72;
    // ArrowDeviceArray offsets
    static final long D_DEVICE_ID = 80;
    static final long D_DEVICE_TYPE = 88;
    static final long D_SYNC_EVENT = 96;

    /** The Arrow format of each dtype datamem exports and imports, in a fixed order. */
    static final Map<DType, String> FORMATS = formats();

    /**
     * All of memory as one segment, to read and write structs at raw addresses on the hot paths
     * without making a segment per access (a segment that escapes an un-inlined call is an
     * allocation). As unchecked as the {@code reinterpret} it replaces.
     */
    static final MemorySegment RAW = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

    private ArrowAbi() {
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
     * A struct argument as a segment of the struct's size.
     *
     * @throws NullPointerException     if {@code segment} is null
     * @throws IllegalArgumentException if it is NULL, a heap segment, or a non-zero-length segment
     *                                  smaller than the struct
     */
    static MemorySegment struct(MemorySegment segment, StructLayout layout, String what) {
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

    /** Native memory for the structs, buffer tables and strings datamem owns, zeroed. */
    static MemorySegment malloc(long byteSize) {
        DataMemAllocator meta = DataMem.builtinDefault().allocator();
        MemorySegment raw = meta.malloc(byteSize);
        if (raw.address() == 0) {
            throw new OutOfNativeMemoryException(DataMem.builtinDefault().name(), byteSize, 16, "malloc");
        }
        MemorySegment m = raw.reinterpret(byteSize);
        m.fill((byte) 0);
        return m;
    }

    /** Gives back memory {@link #malloc} returned. */
    static void free(MemorySegment block) {
        DataMem.builtinDefault().allocator().free(MemorySegment.ofAddress(block.address()), block.byteSize());
    }
}
