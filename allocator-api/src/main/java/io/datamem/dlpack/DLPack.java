package io.datamem.dlpack;

import io.datamem.AllocationException;
import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.Device;
import io.datamem.DeviceType;
import io.datamem.MemoryKind;
import io.datamem.MemoryTraits;
import io.datamem.OutOfNativeMemoryException;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.buffer.BufferException;
import io.datamem.spi.ReleasingAllocator;
import io.datamem.format.CustomDTypes;
import io.datamem.internal.Checks;
import io.datamem.internal.Libc;
import io.datamem.internal.Strides;
import io.datamem.DeviceInterchange;
import io.datamem.usm.UsmHook;
import io.datamem.usm.UsmKind;

import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * DLPack export and import: {@code __dlpack__}, {@code __dlpack_device__} and
 * {@code from_dlpack} for {@link NDArray}s.
 *
 * <p><b>Export.</b> {@link #toDLPack(NDArray, DLPackOptions)} writes a
 * {@code DLManagedTensorVersioned} (DLPack {@value #MAJOR_VERSION}.x, version
 * {@link DLPackVersion#CURRENT} or the consumer's lower 1.x) or, for a consumer without
 * {@code max_version}, a legacy {@code DLManagedTensor}, into native memory. For CPU memory its
 * {@code data} is the address of element {@code [0, ..., 0]} and {@code byte_offset} 0, as NumPy
 * exports (consumers that ignore {@code byte_offset}, PyTorch 1.13 among them, then read views
 * right); for device memory {@code data} is the start of the array's allocation and
 * {@code byte_offset} the offset of element {@code [0, ..., 0]}, as the specification asks (a
 * device pointer may be an opaque handle). Arrays of zero elements have NULL and 0; shape and strides (in elements,
 * always written) follow the struct in the same allocation. The tensor holds a buffer export of
 * the array (or owns a copy), so the array cannot be closed or resized until the consumer calls
 * the deleter. The deleter is an FFM upcall: callable from any native thread, also after Java has
 * dropped every reference to the array, and it releases the export exactly once. Read-only arrays
 * carry {@link #FLAG_READ_ONLY}; copies {@link #FLAG_IS_COPIED} (both in versioned tensors only:
 * a read-only array cannot be exported to a legacy consumer, as NumPy refuses too); the sub-byte
 * dtypes ({@link CustomDTypes#subByte()}, one element per byte) {@link #FLAG_IS_SUBBYTE_TYPE_PADDED}
 * (versioned tensors only as well). Strides are set for every tensor, C-contiguous ones included,
 * as DLPack 1.2 requires; a device type or dtype the consumer's version does not define is refused.
 *
 * <p>{@link #managedTensorAllocator(DataMemHandler)} is the producer side of DLPack's C exchange
 * API: a {@code DLPackManagedTensorAllocator} native code calls to get tensors allocated by a
 * datamem handler.
 *
 * <p><b>Import.</b> {@link #fromDLPack(MemorySegment, boolean)} validates a producer's tensor
 * before taking it (any rejection leaves it, and its deleter, with the caller), then returns an
 * owning array over its memory whose handler, named {@value #HANDLER_NAME}, calls the producer's
 * deleter exactly once when the array is closed or collected.
 *
 * <p>Device memory is described by its allocator's {@link DeviceInterchange}: DLPack device,
 * stream synchronisation and copies to the host.
 */
public final class DLPack {

    /** The DLPack major version of {@code DLManagedTensorVersioned} datamem reads and writes. */
    public static final int MAJOR_VERSION = 1;

    /**
     * The DLPack minor version datamem writes: 1.3 (strides always set, device types through
     * {@code kDLTrn}, the float8, float6 and float4 type codes).
     */
    public static final int MINOR_VERSION = 3;

    /** {@code DLPACK_FLAG_BITMASK_READ_ONLY}: the consumer must not write. */
    public static final long FLAG_READ_ONLY = 1L;

    /** {@code DLPACK_FLAG_BITMASK_IS_COPIED}: the producer made a copy the consumer owns alone. */
    public static final long FLAG_IS_COPIED = 1L << 1;

    /** {@code DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED}: sub-byte types are padded, not packed. */
    public static final long FLAG_IS_SUBBYTE_TYPE_PADDED = 1L << 2;

    /** The name of the handler of imported arrays. */
    public static final String HANDLER_NAME = "dlpack";

    /** {@code DLDevice}: {@code int32 device_type, int32 device_id}. */
    public static final StructLayout DL_DEVICE =
            MemoryLayout.structLayout(JAVA_INT.withName("device_type"), JAVA_INT.withName("device_id"))
                    .withName("DLDevice");

    /** {@code DLDataType}: {@code uint8 code, uint8 bits, uint16 lanes}. */
    public static final StructLayout DL_DATA_TYPE = MemoryLayout.structLayout(JAVA_BYTE.withName("code"),
            JAVA_BYTE.withName("bits"), JAVA_SHORT.withName("lanes")).withName("DLDataType");

    /** {@code DLTensor} (48 bytes). */
    public static final StructLayout DL_TENSOR = MemoryLayout.structLayout(
            ADDRESS.withName("data"),
            DL_DEVICE.withName("device"),
            JAVA_INT.withName("ndim"),
            DL_DATA_TYPE.withName("dtype"),
            ADDRESS.withName("shape"),
            ADDRESS.withName("strides"),
            JAVA_LONG.withName("byte_offset")).withName("DLTensor");

    /** The legacy {@code DLManagedTensor} (64 bytes). */
    public static final StructLayout DL_MANAGED_TENSOR = MemoryLayout.structLayout(
            DL_TENSOR.withName("dl_tensor"),
            ADDRESS.withName("manager_ctx"),
            ADDRESS.withName("deleter")).withName("DLManagedTensor");

    /** {@code DLPackVersion}: {@code uint32 major, uint32 minor}. */
    public static final StructLayout DL_PACK_VERSION =
            MemoryLayout.structLayout(JAVA_INT.withName("major"), JAVA_INT.withName("minor")).withName("DLPackVersion");

    /** {@code DLManagedTensorVersioned} (80 bytes). */
    public static final StructLayout DL_MANAGED_TENSOR_VERSIONED = MemoryLayout.structLayout(
            DL_PACK_VERSION.withName("version"),
            ADDRESS.withName("manager_ctx"),
            ADDRESS.withName("deleter"),
            JAVA_LONG.withName("flags"),
            DL_TENSOR.withName("dl_tensor")).withName("DLManagedTensorVersioned");

    /** {@link #toDLPack(NDArray, int)}'s options for a legacy consumer and for any 1.x one. */
    private static final DLPackOptions LEGACY_OPTIONS = DLPackOptions.defaults().withMaxVersion(DLPackVersion.LEGACY);
    private static final DLPackOptions V1_OPTIONS = DLPackOptions.defaults()
            .withMaxVersion(new DLPackVersion(MAJOR_VERSION, Integer.MAX_VALUE));

    private static final long KNOWN_FLAGS = FLAG_READ_ONLY | FLAG_IS_COPIED | FLAG_IS_SUBBYTE_TYPE_PADDED;

    /** Offset of {@code dl_tensor} in {@code DLManagedTensorVersioned}, computed once (a path lookup by name is slow). */
    static final long VERSIONED_TENSOR_OFFSET =
            DL_MANAGED_TENSOR_VERSIONED.byteOffset(MemoryLayout.PathElement.groupElement("dl_tensor"));

    /** The built-in dtypes, and their DLPack {@code (code, bits, lanes)} packed by {@link #dtypeKey}, in the same order. */
    private static final DType[] BUILTINS = DType.builtins().toArray(DType[]::new);
    private static final int[] BUILTIN_KEYS = java.util.Arrays.stream(BUILTINS)
            .mapToInt(d -> dtypeKey(d.dlpackCode(), d.dlpackBits(), d.dlpackLanes())).toArray();

    private static int dtypeKey(int code, int bits, int lanes) {
        return (code & 0xFF) << 24 | (bits & 0xFF) << 16 | (lanes & 0xFFFF);
    }

    /** The traits of imported host memory, by log2 of its alignment (see {@link #importTraits}). */
    private static final MemoryTraits[] CPU_TRAITS = new MemoryTraits[64];

    private DLPack() {
    }

    // ---------------------------------------------------------------------------------------------
    // Export

    /**
     * {@code __dlpack__(max_version=(maxMajorVersion, *))} with the other arguments at their
     * defaults: a {@code DLManagedTensorVersioned} of version {@value #MAJOR_VERSION}.{@value
     * #MINOR_VERSION} when {@code maxMajorVersion >= 1}, otherwise a legacy {@code DLManagedTensor}.
     *
     * @param array           the array to share
     * @param maxMajorVersion the consumer's highest DLPack major version; 0 for a consumer that
     *                        passed no {@code max_version}
     * @return the managed tensor (a segment of the struct's size), valid until its deleter is called
     * @throws NullPointerException     if {@code array} is null
     * @throws IllegalArgumentException if {@code maxMajorVersion} is negative
     * @throws IllegalStateException    if the array is closed
     * @throws BufferException          if the array cannot be described (see
     *                                  {@link #toDLPack(NDArray, DLPackOptions)})
     */
    public static MemorySegment toDLPack(NDArray array, int maxMajorVersion) {
        if (maxMajorVersion < 0) {
            throw new IllegalArgumentException("maxMajorVersion: " + maxMajorVersion + " (expected: >= 0)");
        }
        DLPackOptions options = maxMajorVersion == 0 ? LEGACY_OPTIONS : maxMajorVersion == MAJOR_VERSION ? V1_OPTIONS
                : DLPackOptions.defaults().withMaxVersion(new DLPackVersion(maxMajorVersion, Integer.MAX_VALUE));
        return toDLPack(array, options);
    }

    /**
     * {@code __dlpack__(stream=, max_version=, dl_device=, copy=)}.
     *
     * <ul>
     *   <li>Version: a consumer whose {@code max_version} is at least 1.0 gets a
     *       {@code DLManagedTensorVersioned} of the highest version both read (1.3, or the
     *       consumer's lower 1.x); a legacy consumer gets a {@code DLManagedTensor}. A dtype or
     *       device type the version does not define is refused.</li>
     *   <li>Device: the tensor is on {@link #dlpackDevice(NDArray)}. A {@code dl_device} other
     *       than that must be the CPU: host-accessible memory is then shared as
     *       {@code (kDLCPU, 0)}, device memory is copied to the host (unless
     *       {@link CopyMode#NEVER}).</li>
     *   <li>Copy: {@link CopyMode#ALWAYS} exports a C-contiguous copy allocated through
     *       {@link DataMem#current()}, flagged {@link #FLAG_IS_COPIED}, which must lie on the device
     *       the tensor is exported on (the CPU accepts any host memory; device memory is copied only
     *       to the host); {@link CopyMode#NEVER} refuses any request that needs a copy.</li>
     *   <li>Stream: for device memory, the backend orders the data before the consumer's stream
     *       (unless the stream is -1); a stream for memory exported as CPU memory is an error.</li>
     * </ul>
     *
     * @param array   the array to share
     * @param options the consumer's arguments
     * @return the managed tensor (a segment of the struct's size), valid until its deleter is called
     * @throws NullPointerException          if an argument is null
     * @throws IllegalStateException         if the array {@linkplain NDArray#isClosed() is closed}
     *                                       (a stale view included) or a close of its memory has begun
     * @throws UnsupportedOperationException if the array wraps a Java heap segment, which has no
     *                                       native address
     * @throws IllegalArgumentException      if a stream is given for memory exported as CPU memory, or
     *                                       for memory without a device backend
     * @throws BufferException               if the array cannot be exported as asked: a read-only
     *                                       array for a legacy consumer, a stride that is not a
     *                                       multiple of the item size, a dtype or device type
     *                                       the consumer's version lacks, a {@code dl_device}
     *                                       other than the CPU,
     *                                       {@link CopyMode#NEVER} where a copy is needed, device
     *                                       memory without a {@link DeviceInterchange}
     * @throws OutOfNativeMemoryException    if the struct or a copy cannot be allocated
     */
    public static MemorySegment toDLPack(NDArray array, DLPackOptions options) {
        Objects.requireNonNull(array, "array");
        Objects.requireNonNull(options, "options");
        DLPackVersion max = options.maxVersion();
        boolean versioned = !max.isLegacy();
        DLPackVersion produced = !versioned ? DLPackVersion.LEGACY
                : max.compareTo(DLPackVersion.CURRENT) >= 0 ? DLPackVersion.CURRENT : max;
        // The lifecycle check and pin, before the array's address is read: the memory can be neither
        // closed nor resized until the pin is released (by the consumer's deleter, or below once a
        // copy is made or the export failed); a close that began earlier makes this throw.
        // A shared tensor keeps this pin (NDArray.Hold), released by the deleter; a copy or a failure
        // releases it here.
        NDArray.Hold pin = array.hold();
        boolean kept = false;
        try {
            MemorySegment tensor = export(array, options, max, versioned, produced, pin);
            kept = true;
            return tensor;
        } finally {
            if (!kept) {
                pin.close();
            }
        }
    }

    /** The export proper, with the array pinned. */

    private static MemorySegment export(NDArray array, DLPackOptions options, DLPackVersion max, boolean versioned,
                                        DLPackVersion produced, NDArray.Hold pin) {
        long elementZero = array.address();
        MemoryTraits traits = array.traits();
        MemorySegment block = MemorySegment.ofAddress(elementZero - array.byteOffset());
        DeviceInterchange interchange = traits.interchange();
        Device source = device(traits, block.address());
        Device target = options.dlDevice() == null ? source : options.dlDevice();
        boolean host = traits.hostAccessible();
        boolean copy;
        Device exported;
        if (target.equals(source)) {
            copy = options.copy() == CopyMode.ALWAYS;
            exported = source;
        } else if (target.type() != DeviceType.CPU) {
            throw new BufferException("dl_device " + target + " for " + array + " on " + source
                    + ": copies to another device go only to the CPU (kDLCPU)");
        } else if (host) {
            copy = options.copy() == CopyMode.ALWAYS;
            exported = Device.CPU;
        } else if (options.copy() == CopyMode.NEVER) {
            throw new BufferException("copy NEVER, but dl_device " + target + " needs a copy of " + array + " from "
                    + source + " to the host");
        } else {
            copy = true;
            exported = Device.CPU;
        }
        if (copy && !host && exported.type() != DeviceType.CPU) {
            throw new BufferException("copy ALWAYS of " + array + " on " + source + " needs a copy on the device,"
                    + " which datamem cannot make (its device backends copy only to the host): ask for dl_device"
                    + " (CPU, 0)");
        }
        DType dtype = array.dtype();
        checkDtype(dtype, produced, versioned);
        checkDevice(exported, produced);
        if (!versioned && array.isReadOnly() && !copy) {
            throw new BufferException("cannot export read-only " + array + " as a legacy DLManagedTensor, which"
                    + " cannot say read-only: the consumer must ask for DLPack >= 1.0 (max_version), or a copy");
        }
        long[] shape = copy ? null : array.shape();       // copies: read once, passed on to write
        long[] strides = copy ? null : array.strides();
        if (!copy) {
            checkStrides(array, shape, strides);
        }
        synchronize(array, block, interchange, exported, options.stream(), copy);
        NDArray.Hold view = null;
        NDArray owned = null;
        try {
            if (copy) {
                owned = host ? hostCopy(array) : deviceToHost(array, block, interchange);
                if (exported.type() != DeviceType.CPU) {
                    Device copyDevice = dlpackDevice(owned);
                    if (!copyDevice.equals(exported)) {
                        throw new BufferException("copy ALWAYS of " + array + " on " + exported + ": the copy was"
                                + " allocated through handler '" + owned.handler().name() + "' on " + copyDevice
                                + "; bind a handler of " + exported + " (or ask for dl_device (CPU, 0))");
                    }
                }
                pin.close();   // the copy is the tensor's: the array is free again
            } else {
                view = pin;
            }
            NDArray shared = copy ? owned : array;
            long sharedAddress = copy ? owned.address() : elementZero;
            long flags = (copy ? FLAG_IS_COPIED : 0) | (!copy && array.isReadOnly() ? FLAG_READ_ONLY : 0)
                    | (isPaddedSubByte(dtype) ? FLAG_IS_SUBBYTE_TYPE_PADDED : 0);
            return DLPackTensorWriter.write(shared, sharedAddress, exported, produced, versioned, flags, view, owned,
                    copy ? owned.shape() : shape, copy ? owned.strides() : strides);
        } catch (RuntimeException | Error e) {
            if (owned != null) {
                owned.close();
            }
            throw e;   // the caller releases the pin (closing it twice does nothing)
        }
    }

    private static void checkDtype(DType dtype, DLPackVersion produced, boolean versioned) {
        boolean subByte = isPaddedSubByte(dtype);
        if (!subByte && (long) dtype.dlpackBits() * dtype.dlpackLanes() != dtype.itemSize() * 8L) {
            throw new BufferException("dtype " + dtype + ": DLPack bits x lanes " + dtype.dlpackBits() + " x "
                    + dtype.dlpackLanes() + " does not describe its " + dtype.itemSize() + "-byte items");
        }
        int code = dtype.dlpackCode();
        if (code >= 7 && code <= 17 && (!versioned || produced.compareTo(DLPackVersion.V1_1) < 0)) {
            throw new BufferException("dtype " + dtype + " has DLPack type code " + code + ", defined in DLPack 1.1,"
                    + " but the consumer reads at most " + (versioned ? "DLPack " + produced : "legacy DLPack"));
        }
        if (subByte && !versioned) {
            throw new BufferException("dtype " + dtype + " holds " + dtype.dlpackBits() + "-bit elements one per byte"
                    + " (padded), which only a DLManagedTensorVersioned can say (IS_SUBBYTE_TYPE_PADDED): a legacy"
                    + " DLManagedTensor would be read as packed");
        }
        if (code > 17 && code != DType.DL_OPAQUE_HANDLE) {
            throw new BufferException("dtype " + dtype + " has DLPack type code " + code + ", which DLPack "
                    + DLPackVersion.CURRENT + " does not define");
        }
    }

    /**
     * Whether a dtype is a sub-byte type held one element per byte: DLPack bits x lanes below 8 in
     * a 1-byte item. Such tensors carry {@link #FLAG_IS_SUBBYTE_TYPE_PADDED}.
     */
    static boolean isPaddedSubByte(DType dtype) {
        return dtype.itemSize() == 1 && (long) dtype.dlpackBits() * dtype.dlpackLanes() < 8;
    }

    /** The DLPack version that defined a device type: 1.0 for kDLMAIA, 1.2 for kDLTrn. */
    private static DLPackVersion deviceSince(DeviceType type) {
        return switch (type) {
            case MAIA -> DLPackVersion.V1_0;
            case TRN -> DLPackVersion.V1_2;
            default -> DLPackVersion.LEGACY;
        };
    }

    private static void checkDevice(Device device, DLPackVersion produced) {
        DLPackVersion since = deviceSince(device.type());
        if (produced.compareTo(since) < 0) {
            throw new BufferException("device " + device + " has DLPack device type " + device.type().code()
                    + ", defined in DLPack " + since + ", but the consumer reads at most "
                    + (produced.isLegacy() ? "legacy DLPack" : "DLPack " + produced));
        }
    }

    private static void checkStrides(NDArray array, long[] shape, long[] strides) {
        long item = array.dtype().itemSize();
        for (int i = 0; i < strides.length; i++) {
            if (strides[i] % item != 0 && shape[i] > 1) {
                throw new BufferException(array + ": stride " + strides[i] + " bytes of axis " + i + " is not a"
                        + " multiple of the item size " + item + " (DLPack counts strides in elements); export a copy");
            }
        }
    }

    private static void synchronize(NDArray array, MemorySegment block, DeviceInterchange interchange,
                                    Device exported, OptionalLong stream, boolean copy) {
        if (stream.isPresent() && exported.type() == DeviceType.CPU) {
            throw new IllegalArgumentException("stream: " + stream.getAsLong() + " (expected: none for a tensor on"
                    + " the CPU, as DLPack requires)");
        }
        if (copy) {
            return; // the backend's copyToHost completes the data before returning
        }
        if (interchange == null) {
            if (stream.isPresent()) {
                throw new IllegalArgumentException("stream: " + stream.getAsLong() + " given, but " + array
                        + " has no device backend to synchronise with (its handler's traits carry no"
                        + " DeviceInterchange)");
            }
            return;
        }
        if (stream.isPresent() && stream.getAsLong() == -1) {
            return;
        }
        interchange.synchronize(block, stream);
    }

    private static NDArray hostCopy(NDArray array) {
        DataMemHandler current = DataMem.current();
        if (!current.traits().hostAccessible()) {
            throw new BufferException("a host copy of " + array + " is needed, but the current handler '"
                    + current.name() + "' allocates memory the host cannot access; bind a host handler");
        }
        return array.copy();
    }

    private static NDArray deviceToHost(NDArray array, MemorySegment block, DeviceInterchange interchange) {
        if (interchange == null) {
            throw new BufferException(array + " is on " + array.traits().device() + ", but its handler's traits carry"
                    + " no DeviceInterchange to copy it to the host");
        }
        DataMemHandler current = DataMem.current();
        if (!current.traits().hostAccessible()) {
            throw new BufferException("a host copy of " + array + " is needed, but the current handler '"
                    + current.name() + "' allocates memory the host cannot access; bind a host handler");
        }
        NDArray out = NDArray.empty(array.dtype(), array.shape());
        try {
            if (array.size() == 0) {
                return out;
            }
            if (array.isCContiguous()) {
                interchange.copyToHost(block, array.byteOffset(), out.segment(), array.byteSize());
                return out;
            }
            long[] shape = array.shape();
            long[] strides = array.strides();
            long lo = Strides.lowestByte(shape, strides);
            long span = Strides.highestByte(shape, strides) - lo + array.dtype().itemSize();
            try (Arena staging = current.openArena()) {
                MemorySegment stage;
                try {
                    stage = staging.allocate(span, Math.max(8, array.dtype().alignment()));
                } catch (OutOfMemoryError e) {
                    // An arena reports exhaustion as the JDK's do; this method reports it as arrays do.
                    if (e.getCause() instanceof AllocationException cause) {
                        throw cause;
                    }
                    throw e;
                }
                interchange.copyToHost(block, array.byteOffset() + lo, stage, span);
                out.copyFrom(NDArray.wrap(stage, array.dtype(), shape, strides, -lo));
            }
            return out;
        } catch (RuntimeException | Error e) {
            out.close();
            throw e;
        }
    }

    /**
     * {@code __dlpack_device__}: where an array's memory is, as DLPack names devices.
     *
     * @param array the array
     * @return the device its memory's backend reports for it, else its traits' device
     *         ({@code (CPU, 0)} for host memory)
     * @throws NullPointerException  if {@code array} is null
     * @throws IllegalStateException if the array is closed
     */
    public static Device dlpackDevice(NDArray array) {
        Objects.requireNonNull(array, "array");
        return device(array.traits(), array.address() - array.byteOffset());
    }

    /** The device of the memory at {@code block} with these traits, as {@link #dlpackDevice} says. */
    private static Device device(MemoryTraits traits, long block) {
        DeviceInterchange interchange = traits.interchange();
        return interchange == null ? traits.device() : interchange.dlpackDevice(MemorySegment.ofAddress(block), traits);
    }

    /**
     * The producer side of DLPack's C exchange API: a {@code DLPackManagedTensorAllocator} native
     * code calls to get {@code DLManagedTensorVersioned}s shaped like a prototype, allocated by
     * {@code handler} and freed through it by their deleters (see {@link DLPackTensorAllocator}).
     *
     * @param handler the handler that allocates the tensors' memory
     * @return the allocator; close it once native code will not call it any more
     * @throws NullPointerException if {@code handler} is null
     */
    public static DLPackTensorAllocator managedTensorAllocator(DataMemHandler handler) {
        return new DLPackTensorAllocator(handler);
    }

    /**
     * The number of tensors exported whose deleter has not been called yet.
     *
     * @return live exports, across the JVM
     */
    public static long outstandingExports() {
        return DLPackExports.outstanding();
    }

    // ---------------------------------------------------------------------------------------------
    // Import

    /**
     * {@code from_dlpack}: takes ownership of a producer's tensor as an owning array, without
     * copying. Every field is validated before ownership is taken; on any exception the tensor
     * stays the caller's, who must then call its deleter (for example with
     * {@link #release(MemorySegment, boolean)}; DLPack asks consumers to do so for a tensor of an
     * unsupported major version).
     *
     * <p>The array's handler is named {@value #HANDLER_NAME}; closing the array, or its collection
     * when unreachable, calls the producer's deleter exactly once (a NULL deleter is never called).
     * A tensor flagged {@link #FLAG_READ_ONLY} becomes a read-only array. The array's traits
     * follow the tensor's device: host memory for {@code kDLCPU}, host-pinned for
     * {@code kDLCUDAHost}/{@code kDLROCMHost}, managed for {@code kDLCUDAManaged}, and device
     * memory the host does not touch for every other device type. For devices a provider's
     * backend manages, the traits carry that backend's {@link DeviceInterchange}
     * ({@link io.datamem.spi.DataMemProvider#interchangeFor}), so the array exports and copies as
     * the backend's own memory does; for {@code kDLOneAPI}, whose tensors do not tell their USM
     * kind, the backend is asked ({@link UsmHook#usmKind}): USM host memory imports as
     * host-pinned and USM shared memory as managed memory, both host-accessible, and anything else
     * (device, or a pointer the backend does not know) as device memory; should that query fail,
     * its exception propagates and the tensor stays the caller's. Strides of NULL mean C order.
     *
     * @param managed   a {@code DLManagedTensorVersioned*} or {@code DLManagedTensor*}
     * @param versioned which of the two it is
     * @return the owning array
     * @throws NullPointerException     if {@code managed} is null
     * @throws IllegalArgumentException if {@code managed} is NULL or not a native segment
     * @throws BufferException          if the tensor is rejected (ownership stays with the caller):
     *                                  a major version other than {@value #MAJOR_VERSION}, unknown
     *                                  flag bits, an unknown device type or negative device id,
     *                                  ndim outside 0..{@value NDArray#MAX_NDIM}, a NULL shape for
     *                                  ndim &gt; 0, a negative dimension, an unknown dtype, a float6
     *                                  or float4 tensor that is packed (not flagged
     *                                  {@link #FLAG_IS_SUBBYTE_TYPE_PADDED}) or has other bits or
     *                                  lanes than 6 or 4 and 1, NULL data
     *                                  with elements, strides, a byte offset or a size whose
     *                                  elements would reach outside the address space
     */
    public static NDArray fromDLPack(MemorySegment managed, boolean versioned) {
        Objects.requireNonNull(managed, "managed");
        if (!managed.isNative() || managed.address() == 0) {
            throw new IllegalArgumentException("managed: " + (managed.isNative() ? "NULL" : "a heap segment")
                    + " (expected: a native DLManagedTensor" + (versioned ? "Versioned" : "") + " pointer)");
        }
        MemorySegment m = managed.reinterpret(versioned ? DL_MANAGED_TENSOR_VERSIONED.byteSize()
                : DL_MANAGED_TENSOR.byteSize());
        long t = 0;
        long flags = 0;
        MemorySegment deleter;
        if (versioned) {
            int major = m.get(JAVA_INT, 0);
            int minor = m.get(JAVA_INT, 4);
            if (major != MAJOR_VERSION) {
                throw reject("DLPack version " + Integer.toUnsignedString(major) + "." + Integer.toUnsignedString(minor)
                        + ": major version " + Integer.toUnsignedString(major) + " is not supported (expected: "
                        + MAJOR_VERSION + "; only its deleter may be used: call it)");
            }
            flags = m.get(JAVA_LONG, 24);
            if ((flags & ~KNOWN_FLAGS) != 0) {
                throw reject("flags 0x" + Long.toHexString(flags) + " has unknown bits 0x"
                        + Long.toHexString(flags & ~KNOWN_FLAGS) + " (DLPack " + DLPackVersion.CURRENT + " defines"
                        + " READ_ONLY 0x1, IS_COPIED 0x2, IS_SUBBYTE_TYPE_PADDED 0x4)");
            }
            deleter = m.get(ADDRESS, 16);
            t = VERSIONED_TENSOR_OFFSET;
        } else {
            deleter = m.get(ADDRESS, 56);
        }
        long data = m.get(JAVA_LONG, t);
        int deviceType = m.get(JAVA_INT, t + 8);
        int deviceId = m.get(JAVA_INT, t + 12);
        int ndim = m.get(JAVA_INT, t + 16);
        int code = m.get(JAVA_BYTE, t + 20) & 0xFF;
        int bits = m.get(JAVA_BYTE, t + 21) & 0xFF;
        int lanes = m.get(JAVA_SHORT, t + 22) & 0xFFFF;
        long shapePtr = m.get(JAVA_LONG, t + 24);
        long stridesPtr = m.get(JAVA_LONG, t + 32);
        long byteOffset = m.get(JAVA_LONG, t + 40);

        DeviceType type;
        try {
            type = DeviceType.ofCode(deviceType);
        } catch (IllegalArgumentException e) {
            throw reject("device type " + deviceType + " is unknown to DLPack " + DLPackVersion.CURRENT);
        }
        if (deviceId < 0) {
            throw reject("device id " + deviceId + " (expected: >= 0)");
        }
        if (ndim < 0 || ndim > NDArray.MAX_NDIM) {
            throw reject("ndim " + ndim + " (expected: 0.." + NDArray.MAX_NDIM + ")");
        }
        if (shapePtr == 0 && ndim > 0) {
            throw reject("shape is NULL for ndim " + ndim);
        }
        if (code >= 15 && code <= 17 && (bits != (code == 17 ? 4 : 6) || lanes != 1)) {
            throw reject("dtype (code " + code + ", bits " + bits + ", lanes " + lanes + "): DLPack "
                    + DLPackVersion.CURRENT + " defines type code " + code + " only with bits " + (code == 17 ? 4 : 6)
                    + " and lanes 1 (other values are unspecified, and a consumer must stop importing)");
        }
        Optional<DType> found = lookupDtype(code, bits, lanes);
        if (found.isPresent() && isPaddedSubByte(found.get()) && (flags & FLAG_IS_SUBBYTE_TYPE_PADDED) == 0) {
            throw reject("dtype " + found.get() + " (code " + code + ", bits " + bits + ") is packed, "
                    + (versioned ? "the flag IS_SUBBYTE_TYPE_PADDED is not set" : "as every legacy DLManagedTensor"
                    + " of a sub-byte type is") + ": datamem arrays hold whole bytes per element and read " + bits
                    + "-bit types only padded, one element per byte (ask the producer for a padded tensor, or"
                    + " import the bytes as uint8)");
        }
        if (found.isEmpty()) {
            throw reject("dtype (code " + code + ", bits " + bits + ", lanes " + lanes + ") is unknown (datamem"
                    + " imports bool, int8-64, uint8-64, float16/32/64, bfloat16, complex64/128 and the registered"
                    + " custom dtypes " + CustomDTypes.registered() + ")");
        }
        DType dtype = found.get();
        long item = dtype.itemSize();
        long[] shape = readLongs(shapePtr, ndim);
        long[] elementStrides = stridesPtr == 0 || ndim == 0 ? null : readLongs(stridesPtr, ndim);
        long count = 1;
        for (int i = 0; i < ndim; i++) {
            if (shape[i] < 0) {
                throw reject("shape[" + i + "] " + shape[i] + " (expected: >= 0) in shape " + Arrays.toString(shape));
            }
            count = shape[i] == 0 || count == 0 ? 0 : mulOrReject(count, shape[i], "shape ", shape, null);
        }
        if (count > 0) {
            mulOrReject(count, item, "shape ", shape, dtype);
        }
        long[] byteStrides = new long[ndim];
        if (elementStrides == null) {
            long acc = item;
            for (int i = ndim - 1; i >= 0; i--) {
                byteStrides[i] = acc;
                acc = shape[i] == 0 ? acc : mulOrReject(acc, Math.max(shape[i], 1), "shape ", shape, null);
            }
        } else {
            for (int i = 0; i < ndim; i++) {
                byteStrides[i] = mulOrReject(elementStrides[i], item, "strides ", elementStrides, null);
            }
        }
        if (byteOffset < 0) {
            throw reject("byte_offset " + Long.toUnsignedString(byteOffset) + " reaches outside the address space");
        }
        if (count > 0 && data == 0) {
            throw reject("data is NULL for " + count + " element(s)");
        }
        long lo = 0;
        long hi = 0;
        if (count > 0) {
            try {
                lo = Strides.lowestByte(shape, byteStrides);
                hi = Strides.highestByte(shape, byteStrides);
            } catch (ArithmeticException e) {
                throw reject("strides " + Arrays.toString(byteStrides) + " with shape " + Arrays.toString(shape)
                        + " overflows a 64-bit byte count");
            }
        }
        long limit = DataMemAllocator.MAX_BYTE_SIZE;
        long base = data + byteOffset;
        boolean inside = data >= 0 && data + byteOffset >= data // no wrap
                && (count == 0 || (base + lo >= 0 && hi <= Long.MAX_VALUE - item - base && base + hi + item <= limit
                && hi - lo + item <= limit));
        if (!inside) {
            throw reject("data 0x" + Long.toHexString(data) + " + byte_offset " + Long.toUnsignedString(byteOffset)
                    + " with strides " + Arrays.toString(elementStrides) + " (elements) and shape "
                    + Arrays.toString(shape) + " reaches bytes [" + lo + ", " + (hi + item) + ") around it, outside"
                    + " the address space");
        }
        boolean readOnly = (flags & FLAG_READ_ONLY) != 0;
        MemoryTraits traits = importTraits(type, deviceId, count == 0 ? data : base + lo);
        DLPackImport.Deleter call = new DLPackImport.Deleter(deleter, managed.address());
        ReleasingAllocator allocator = ReleasingAllocator.of(HANDLER_NAME, call, traits, call);
        DataMemHandler handler = new DataMemHandler(HANDLER_NAME, 1, allocator);
        long blockAddress = count == 0 ? data : base + lo;
        long allocated = count == 0 ? 0 : hi - lo + item;
        return NDArray.adopt(handler, MemorySegment.ofAddress(blockAddress), allocated, dtype, shape,
                byteStrides, count == 0 ? 0 : -lo, readOnly);
    }

    /** {@code n} int64 values at {@code address}. */
    private static long[] readLongs(long address, int n) {
        long[] values = new long[n];
        if (n > 0) {
            MemorySegment s = MemorySegment.ofAddress(address).reinterpret(8L * n);
            for (int i = 0; i < n; i++) {
                values[i] = s.getAtIndex(JAVA_LONG, i);
            }
        }
        return values;
    }

    /** The datamem dtype of a DLPack {@code (code, bits, lanes)}, as {@link #fromDLPack} reads it. */
    static Optional<DType> lookupDtype(int code, int bits, int lanes) {
        int key = dtypeKey(code, bits, lanes);
        for (int i = 0; i < BUILTIN_KEYS.length; i++) {
            if (BUILTIN_KEYS[i] == key) {
                return Optional.of(BUILTINS[i]);
            }
        }
        Optional<DType> custom = CustomDTypes.ofDlpack(code, bits, lanes);
        if (custom.isPresent() && !isPaddedSubByte(custom.get())
                && (long) bits * lanes != custom.get().itemSize() * 8L) {
            return Optional.empty();
        }
        return custom;
    }

    /**
     * The traits datamem gives memory another runtime made, by the device it says the memory is on:
     * what DLPack import attaches to an imported tensor, and what any other import protocol (Arrow's
     * C Device Data Interface, a third party's) should attach so that the array exports, synchronises
     * and copies as the backend's own memory does. Host memory for {@code kDLCPU}, host-pinned for
     * {@code kDLCUDAHost}/{@code kDLROCMHost}, managed for {@code kDLCUDAManaged}, device memory the
     * host does not touch otherwise; the first provider whose
     * {@link io.datamem.spi.DataMemProvider#interchangeFor(Device, MemorySegment)} answers for the
     * block gives its hook, and for {@code kDLOneAPI} its {@link UsmHook} refines the kind (USM host
     * memory is host-pinned, USM shared memory managed, both host-accessible). The alignment is the
     * block address's.
     *
     * @param device the device the producer names
     * @param block  the memory's lowest address; 0 for memory without elements
     * @return the traits
     * @throws NullPointerException if {@code device} is null
     * @throws RuntimeException     what a backend's {@code usmKind} query throws, unchanged
     */
    public static MemoryTraits importTraits(Device device, long block) {
        Objects.requireNonNull(device, "device");
        return importTraits(device.type(), device.id(), block);
    }

    private static MemoryTraits importTraits(DeviceType type, int deviceId, long block) {
        if (type == DeviceType.CPU && deviceId == 0) {
            // Host memory: the traits differ only by alignment, made once for each (immutable, so
            // a racy first publication is safe).
            long alignment = Checks.alignmentOf(block);
            int k = Long.numberOfTrailingZeros(alignment);
            MemoryTraits cached = CPU_TRAITS[k];
            if (cached == null) {
                cached = new MemoryTraits(MemoryKind.HOST, Device.CPU, true, alignment, Libc.pageSize());
                CPU_TRAITS[k] = cached;
            }
            return cached;
        }
        Device device = new Device(type, deviceId);
        MemoryKind kind = switch (type) {
            case CPU -> MemoryKind.HOST;
            case CUDA_HOST, ROCM_HOST -> MemoryKind.HOST_PINNED;
            case CUDA_MANAGED -> MemoryKind.MANAGED;
            default -> MemoryKind.DEVICE;
        };
        MemoryTraits traits = new MemoryTraits(kind, device, kind.hostAccessible(), Checks.alignmentOf(block),
                Libc.pageSize());
        if (type == DeviceType.CPU) {
            return traits;
        }
        for (io.datamem.spi.DataMemProvider p : io.datamem.spi.DataMemProvider.installed()) {
            Optional<DeviceInterchange> hook = p.interchangeFor(device, MemorySegment.ofAddress(block));
            if (hook.isPresent()) {
                MemoryTraits hooked = traits.withInterchange(hook.get());
                if (type == DeviceType.ONE_API && block != 0) {   // the backend knows the USM kind
                    MemoryTraits asked = hooked;
                    UsmKind usm = asked.hook(UsmHook.class).map(u -> u.usmKind(MemorySegment.ofAddress(block), asked))
                            .orElse(UsmKind.of(asked.kind()));
                    if (usm == UsmKind.HOST || usm == UsmKind.SHARED) {
                        hooked = hooked.withPlacement(usm == UsmKind.HOST ? MemoryKind.HOST_PINNED
                                : MemoryKind.MANAGED, device, true);
                    }
                }
                return hooked;
            }
        }
        return traits;
    }

    /** {@code a * b}, or a rejection naming {@code what} and {@code values} (built only then). */
    private static long mulOrReject(long a, long b, String what, long[] values, DType of) {
        try {
            return Math.multiplyExact(a, b);
        } catch (ArithmeticException e) {
            throw reject(what + Arrays.toString(values) + (of == null ? "" : " of " + of)
                    + " overflows a 64-bit byte count");
        }
    }

    private static BufferException reject(String why) {
        return new BufferException("DLPack tensor rejected, ownership stays with the caller: " + why);
    }

    /**
     * Calls a tensor's deleter: what a consumer does with a tensor it will not use (one
     * {@link #fromDLPack} rejected, say). Reads only the fields DLPack keeps stable across major
     * versions. A NULL deleter is not called.
     *
     * @param managed   a {@code DLManagedTensorVersioned*} or {@code DLManagedTensor*}
     * @param versioned which of the two it is
     * @throws NullPointerException     if {@code managed} is null
     * @throws IllegalArgumentException if {@code managed} is NULL or not a native segment
     */
    public static void release(MemorySegment managed, boolean versioned) {
        Objects.requireNonNull(managed, "managed");
        if (!managed.isNative() || managed.address() == 0) {
            throw new IllegalArgumentException("managed: " + (managed.isNative() ? "NULL" : "a heap segment")
                    + " (expected: a native DLManagedTensor" + (versioned ? "Versioned" : "") + " pointer)");
        }
        MemorySegment m = managed.reinterpret(versioned ? 24 : DL_MANAGED_TENSOR.byteSize());
        MemorySegment deleter = m.get(ADDRESS, versioned ? 16 : 56);
        DLPackImport.callDeleter(deleter, MemorySegment.ofAddress(managed.address()));
    }
}
