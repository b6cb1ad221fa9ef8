package io.datamem.arrow;

import io.datamem.DeviceInterchange;
import io.datamem.OutOfNativeMemoryException;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.buffer.BufferException;
import io.datamem.usm.UsmHook;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.util.Objects;
import java.util.Optional;

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

    // The public face only: ArrowExport writes exports, ArrowImport reads imports, ArrowReleases
    // holds the live exported structs, their release callbacks and the calls of producers' ones,
    // ArrowAbi the layouts and offsets both directions share.

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
    public static final StructLayout ARROW_SCHEMA = ArrowAbi.ARROW_SCHEMA;

    /** {@code struct ArrowArray} (80 bytes). */
    public static final StructLayout ARROW_ARRAY = ArrowAbi.ARROW_ARRAY;

    /** {@code struct ArrowDeviceArray} (128 bytes). */
    public static final StructLayout ARROW_DEVICE_ARRAY = ArrowAbi.ARROW_DEVICE_ARRAY;

    private ArrowCData() {
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
        return Optional.ofNullable(ArrowAbi.FORMATS.get(dtype));
    }

    /**
     * The number of exports (schemas and arrays) not yet released, across the JVM.
     *
     * @return live exports
     */
    public static long outstandingExports() {
        return ArrowReleases.outstanding();
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
        ArrowExport.export(array, schema, out, false);
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
        ArrowExport.export(array, schema, out, true);
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
        ArrowReleases.callRelease(ArrowAbi.struct(schema, ARROW_SCHEMA, "schema"), ArrowAbi.S_RELEASE);
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
        ArrowReleases.callRelease(ArrowAbi.struct(array, ARROW_ARRAY, "array"), ArrowAbi.A_RELEASE);
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
        return ArrowImport.importArray(schema, array);
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
        return ArrowImport.importDeviceArray(schema, deviceArray, syncEvents);
    }
}
