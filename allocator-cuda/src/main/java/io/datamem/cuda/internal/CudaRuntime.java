package io.datamem.cuda.internal;

import io.datamem.spi.Availability;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLongArray;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The CUDA calls datamem makes, through the driver API ({@link DriverCalls}, FFM downcalls to
 * {@code libcuda.so.1}), with the context handling and error translation every caller needs.
 * Internal.
 *
 * <p>Nothing here binds the driver's functions before {@link #availability()} found a working
 * driver through {@link CudaDriver#probe()}. Every operation on a device runs in that device's
 * <em>primary context</em> (the one the CUDA runtime, PyTorch and CuPy use, so that memory, streams
 * and events are shared with them): the context is pushed on the calling thread's context stack for
 * the duration of the call and popped afterwards, so allocations and frees are correct on any
 * thread, whatever context the thread has current, and that context is current again afterwards.
 * Datamem retains each primary context once, at its first use, and keeps it for the life of the
 * process, as the runtime does. Calls return the driver's {@code CUresult}, or throw a
 * {@link io.datamem.BackendException} naming it ({@code CUDA_ERROR_OUT_OF_MEMORY} excepted where a
 * caller turns it into NULL).
 */
public final class CudaRuntime {

    /** {@code CU_EVENT_DISABLE_TIMING}. */
    static final int EVENT_DISABLE_TIMING = 2;
    /** {@code CU_STREAM_NON_BLOCKING}. */
    static final int STREAM_NON_BLOCKING = 1;
    /** {@code CU_STREAM_LEGACY}, the legacy default stream ({@code cudaStreamLegacy} has the same value). */
    public static final long STREAM_LEGACY = 1;
    /** {@code CU_STREAM_PER_THREAD}, the calling thread's default stream ({@code cudaStreamPerThread}). */
    public static final long STREAM_PER_THREAD = 2;

    /** {@code CU_POINTER_ATTRIBUTE_MEMORY_TYPE}. */
    private static final int ATTRIBUTE_MEMORY_TYPE = 2;
    /** {@code CU_POINTER_ATTRIBUTE_IS_MANAGED}. */
    private static final int ATTRIBUTE_IS_MANAGED = 8;
    /** {@code CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL}. */
    private static final int ATTRIBUTE_DEVICE_ORDINAL = 9;
    /** {@code CU_MEMORYTYPE_HOST}. */
    private static final int MEMORYTYPE_HOST = 1;

    private static volatile Availability availability;
    /** The retained primary context of each device ordinal, 0 until first used. */
    private static volatile AtomicLongArray contexts;

    private CudaRuntime() {
    }

    // ---------------------------------------------------------------------------------------------
    // Availability

    /**
     * Whether CUDA works here: the driver probe ({@link CudaDriver#probe()}: the library, its
     * version, {@code cuInit} and the devices), then every driver function datamem calls, looked up
     * in the library. Decided once per JVM.
     *
     * @return the availability, with a reason a user can act on
     */
    public static Availability availability() {
        Availability a = availability;
        if (a == null) {
            synchronized (CudaRuntime.class) {
                a = availability;
                if (a == null) {
                    a = computeAvailability();
                    availability = a;
                }
            }
        }
        return a;
    }

    private static Availability computeAvailability() {
        CudaDriver.Probe probe = CudaDriver.probe();
        if (!probe.availability().available()) {
            return probe.availability();
        }
        try {
            Optional<String> unusable = DriverCalls.unusable();
            if (unusable.isPresent()) {
                return Availability.unavailable(unusable.get() + " [driver "
                        + CudaDriver.versionString(probe.driverVersion()) + "]");
            }
            contexts = new AtomicLongArray(probe.devices().size());
            return Availability.AVAILABLE;
        } catch (RuntimeException | LinkageError e) {
            return Availability.unavailable("binding the CUDA driver's functions failed: " + e);
        }
    }

    /**
     * Fails unless CUDA is available.
     *
     * @throws IllegalStateException with the reason, if CUDA is unavailable here
     */
    public static void require() {
        Availability a = availability();
        if (!a.available()) {
            throw new IllegalStateException("CUDA is unavailable: " + a.reason());
        }
    }

    /**
     * Checks a device ordinal: not negative (before anything native), then below the device count.
     *
     * @param device the ordinal
     * @return the ordinal
     * @throws IllegalArgumentException if it is negative or no such device exists
     * @throws IllegalStateException    if CUDA is unavailable
     */
    public static int checkDevice(int device) {
        if (device < 0) {
            throw new IllegalArgumentException("device: " + device + " (expected: a CUDA device ordinal >= 0)");
        }
        require();
        int count = CudaDriver.probe().devices().size();
        if (device >= count) {
            throw new IllegalArgumentException("device: " + device + " (expected: 0 to " + (count - 1) + "; this"
                    + " machine has " + count + " CUDA device" + (count == 1 ? "" : "s") + ": "
                    + CudaDriver.probe().devices() + ")");
        }
        return device;
    }


    // ---------------------------------------------------------------------------------------------
    // Contexts

    /**
     * The primary context of a device, retained at its first use and kept for the life of the
     * process ({@code cuDeviceGet}, then {@code cuDevicePrimaryCtxRetain}): the context the CUDA
     * runtime makes current for that device, so that what datamem allocates and enqueues is shared
     * with the runtime's users.
     *
     * @param device the ordinal
     * @return the {@code CUcontext}
     * @throws IllegalStateException    if CUDA is unavailable
     * @throws IllegalArgumentException if no such device exists
     */
    public static long primaryContext(int device) {
        require();
        AtomicLongArray c = contexts;
        if (device < 0 || device >= c.length()) {
            checkDevice(device);   // throws, naming the devices
        }
        long ctx = c.get(device);
        if (ctx != 0) {
            return ctx;
        }
        synchronized (c) {
            ctx = c.get(device);
            if (ctx == 0) {
                ctx = retainPrimaryContext(device);
                c.set(device, ctx);
            }
        }
        return ctx;
    }

    private static long retainPrimaryContext(int ordinal) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment dev = arena.allocate(JAVA_INT);
            check(DriverCalls.deviceGet(dev, ordinal), "cuDeviceGet", null, 0);
            MemorySegment ctx = arena.allocate(ADDRESS);
            check(DriverCalls.devicePrimaryCtxRetain(ctx, dev.get(JAVA_INT, 0)), "cuDevicePrimaryCtxRetain", null, 0);
            long value = ctx.get(JAVA_LONG, 0);
            if (value == 0) {
                throw new IllegalStateException("cuDevicePrimaryCtxRetain returned no context for device " + ordinal);
            }
            return value;
        }
    }

    /**
     * The calling thread's current context ({@code cuCtxGetCurrent}).
     *
     * @return the {@code CUcontext}, 0 if none is current
     * @throws IllegalStateException if CUDA is unavailable
     */
    public static long currentContext() {
        require();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            check(DriverCalls.ctxGetCurrent(out), "cuCtxGetCurrent", null, 0);
            return out.get(JAVA_LONG, 0);
        }
    }

    /**
     * Makes a device's primary context the calling thread's current context
     * ({@code cuCtxSetCurrent}), as {@code cudaSetDevice} does. Datamem's own calls do not need this
     * (each pushes the context it needs); it is for code that mixes datamem with its own driver calls.
     *
     * @param device the ordinal
     * @throws IllegalStateException    if CUDA is unavailable
     * @throws IllegalArgumentException if no such device exists
     */
    public static void makeCurrent(int device) {
        check(DriverCalls.ctxSetCurrent(primaryContext(device)), "cuCtxSetCurrent", null, 0);
    }

    /**
     * A device's primary context pushed on the calling thread's context stack for the length of a
     * call, with a confined arena for the call's out-parameters. Closing pops the context (what was
     * current before is current again) and frees the arena.
     */
    private static final class Scope implements AutoCloseable {

        final Arena arena;

        Scope(int device) {
            long ctx = primaryContext(device);
            int rc = DriverCalls.ctxPushCurrent(ctx);
            check(rc, "cuCtxPushCurrent", null, 0);
            arena = Arena.ofConfined();
        }

        /**
         * Room for one pointer-sized out-parameter, zeroed.
         *
         * @return 8 bytes
         */
        MemorySegment out() {
            return arena.allocate(JAVA_LONG);
        }

        @Override
        public void close() {
            try {
                // cannot fail after a successful push on this thread; not checked, so that it never
                // hides the exception of the call it closes
                DriverCalls.ctxPopCurrent(arena.allocate(ADDRESS));
            } finally {
                arena.close();
            }
        }
    }

    private static Scope enter(int device) {
        return new Scope(device);
    }

    /**
     * Throws for a code other than {@code CUDA_SUCCESS}.
     *
     * @param rc          the code
     * @param operation   the call
     * @param handlerName the handler, or null
     * @param byteSize    the size involved, or 0
     * @throws io.datamem.BackendException naming the code, unless it is {@code CUDA_SUCCESS}
     */
    public static void check(int rc, String operation, String handlerName, long byteSize) {
        if (rc != CudaErrors.SUCCESS) {
            throw failure(rc, operation, handlerName, byteSize);
        }
    }

    private static io.datamem.BackendException failure(int rc, String operation, String handlerName, long byteSize) {
        boolean bound = CudaDriver.bindingsInitialised();   // else: named from the table, nothing loaded
        String name = CudaErrors.name(rc);
        String detail = null;
        if (bound) {
            if (!CudaErrors.known(rc)) {
                String driverName = DriverCalls.errorName(rc);
                name = driverName == null ? name : driverName;
            }
            detail = DriverCalls.errorString(rc);
        }
        return CudaErrors.exception(handlerName, byteSize, operation, rc, name, detail);
    }

    // ---------------------------------------------------------------------------------------------
    // Allocation. Each returns the address, 0 when the driver reports CUDA_ERROR_OUT_OF_MEMORY, and
    // throws for any other error.

    /** Which allocation call. */
    public enum Alloc {
        /** {@code cuMemHostAlloc}, freed by {@code cuMemFreeHost}. */
        HOST("cuMemHostAlloc"),
        /** {@code cuMemAlloc}, freed by {@code cuMemFree}. */
        DEVICE("cuMemAlloc"),
        /** {@code cuMemAllocManaged}, freed by {@code cuMemFree}. */
        MANAGED("cuMemAllocManaged");

        final String function;

        Alloc(String function) {
            this.function = function;
        }
    }

    /**
     * Allocates.
     *
     * @param what        the call
     * @param device      the device whose primary context allocates
     * @param byteSize    bytes, at least 1
     * @param flags       the call's flags: {@code CU_MEMHOSTALLOC_*} for {@code cuMemHostAlloc},
     *                    {@code CU_MEM_ATTACH_*} for {@code cuMemAllocManaged}, ignored by
     *                    {@code cuMemAlloc}
     * @param handlerName for messages
     * @return the address, or 0 on exhaustion
     */
    public static long allocate(Alloc what, int device, long byteSize, int flags, String handlerName) {
        try (Scope s = enter(device)) {
            MemorySegment out = s.out();
            int rc = switch (what) {
                case HOST -> DriverCalls.memHostAlloc(out, byteSize, flags);
                case DEVICE -> DriverCalls.memAlloc(out, byteSize);
                case MANAGED -> DriverCalls.memAllocManaged(out, byteSize, flags);
            };
            if (CudaErrors.isExhaustion(rc)) {
                return 0;
            }
            check(rc, what.function, handlerName, byteSize);
            return out.get(JAVA_LONG, 0);
        }
    }

    /**
     * Frees what {@link #allocate} returned.
     *
     * @param what        the call that allocated it
     * @param device      its device
     * @param address     the block
     * @param handlerName for messages
     * @param byteSize    for messages
     */
    public static void free(Alloc what, int device, long address, String handlerName, long byteSize) {
        try (Scope _ = enter(device)) {
            int rc = what == Alloc.HOST ? DriverCalls.memFreeHost(address) : DriverCalls.memFree(address);
            check(rc, what == Alloc.HOST ? "cuMemFreeHost" : "cuMemFree", handlerName, byteSize);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // IPC

    /** {@code CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS}. */
    public static final int IPC_LAZY_ENABLE_PEER_ACCESS = 1;

    /**
     * The allocation an address lies in ({@code cuMemGetAddressRange}).
     *
     * @param device  the device whose context owns it
     * @param address an address inside a CUDA allocation
     * @return {base, size}
     * @throws io.datamem.BackendException if the driver does not know the address
     */
    public static long[] addressRange(int device, long address) {
        try (Scope s = enter(device)) {
            MemorySegment base = s.out();
            MemorySegment size = s.out();
            check(DriverCalls.memGetAddressRange(base, size, address), "cuMemGetAddressRange", null, 0);
            return new long[] {base.get(JAVA_LONG, 0), size.get(JAVA_LONG, 0)};
        }
    }

    /**
     * The IPC handle of a {@code cuMemAlloc} allocation ({@code cuIpcGetMemHandle}).
     *
     * @param device the device
     * @param base   the allocation's base
     * @return the handle's 64 bytes
     * @throws io.datamem.BackendException if the driver refuses (not device memory, say)
     */
    public static byte[] ipcGetMemHandle(int device, long base) {
        try (Scope s = enter(device)) {
            MemorySegment handle = s.arena.allocate(DriverSymbols.IPC_MEM_HANDLE);
            check(DriverCalls.ipcGetMemHandle(handle, base), "cuIpcGetMemHandle", null, 0);
            return handle.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
        }
    }

    /**
     * Maps another process's allocation ({@code cuIpcOpenMemHandle}, with lazy peer access).
     *
     * @param device the device to map it on
     * @param handle the handle's 64 bytes
     * @return the mapped base here
     * @throws io.datamem.BackendException if the driver refuses (a handle of this process, of a
     *                                     freed allocation, or forged)
     */
    public static long ipcOpenMemHandle(int device, byte[] handle) {
        try (Scope s = enter(device)) {
            MemorySegment h = s.arena.allocate(DriverSymbols.IPC_MEM_HANDLE);
            MemorySegment.copy(handle, 0, h, java.lang.foreign.ValueLayout.JAVA_BYTE, 0, handle.length);
            MemorySegment out = s.out();
            check(DriverCalls.ipcOpenMemHandle(out, h, IPC_LAZY_ENABLE_PEER_ACCESS), "cuIpcOpenMemHandle", null, 0);
            return out.get(JAVA_LONG, 0);
        }
    }

    /**
     * Unmaps what {@link #ipcOpenMemHandle} mapped ({@code cuIpcCloseMemHandle}).
     *
     * @param device  its device
     * @param address the mapped base
     */
    public static void ipcCloseMemHandle(int device, long address) {
        try (Scope _ = enter(device)) {
            check(DriverCalls.ipcCloseMemHandle(address), "cuIpcCloseMemHandle", null, 0);
        }
    }

    /**
     * Page-locks host memory ({@code cuMemHostRegister}).
     *
     * @param device   the device whose primary context registers it
     * @param address  the start
     * @param byteSize the length
     * @param flags    {@code CU_MEMHOSTREGISTER_*} flags
     * @return the driver's code (the caller decides what exhaustion means)
     */
    public static int register(int device, long address, long byteSize, int flags) {
        try (Scope _ = enter(device)) {
            return DriverCalls.memHostRegister(address, byteSize, flags);
        }
    }

    /**
     * Undoes {@link #register} ({@code cuMemHostUnregister}).
     *
     * @param device      the device
     * @param address     the start
     * @param handlerName for messages
     * @param byteSize    for messages
     */
    public static void unregister(int device, long address, String handlerName, long byteSize) {
        try (Scope _ = enter(device)) {
            check(DriverCalls.memHostUnregister(address), "cuMemHostUnregister", handlerName, byteSize);
        }
    }

    /**
     * Zeroes device or managed memory and waits until it is done ({@code cuMemsetD8} on the legacy
     * default stream, then synchronising it: the memset may return before it has run).
     *
     * @param device      the device
     * @param address     the start
     * @param byteSize    the length
     * @param handlerName for messages
     */
    public static void zero(int device, long address, long byteSize, String handlerName) {
        try (Scope _ = enter(device)) {
            check(DriverCalls.memsetD8(address, (byte) 0, byteSize), "cuMemsetD8", handlerName, byteSize);
            check(DriverCalls.streamSynchronize(STREAM_LEGACY), "cuStreamSynchronize", handlerName, byteSize);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Copies

    /**
     * Where the bytes of a copy are, as far as its synchronisation cares. {@code cuMemcpy} infers
     * the direction from the addresses (unified addressing); whether a synchronous copy must also
     * wait for the stream depends on where its ends are.
     */
    public enum Side {
        /** Ordinary (pageable) host memory: copies to the device are staged by the driver. */
        PAGEABLE,
        /** Page-locked host memory ({@code cuMemHostAlloc}, {@code cuMemHostRegister}). */
        PINNED,
        /** Device or managed memory. */
        DEVICE;

        /**
         * Whether the bytes are host memory to CUDA's copy functions.
         *
         * @return true for pageable and pinned memory
         */
        public boolean host() {
            return this != DEVICE;
        }
    }

    /**
     * Whether a {@code cuMemcpy} may return before its data has arrived, so that a synchronous copy
     * must also wait for the legacy default stream: from pageable memory to the device (the call
     * returns once the data is staged), and from device to device (no host synchronisation).
     *
     * @param source where the source is
     * @param target where the target is
     * @return true if the caller must synchronise
     */
    public static boolean returnsEarly(Side source, Side target) {
        return (source == Side.PAGEABLE && target == Side.DEVICE) || (source == Side.DEVICE && target == Side.DEVICE);
    }

    /**
     * What the driver knows about an address ({@code cuPointerGetAttributes}).
     *
     * @param memoryType    {@code CU_POINTER_ATTRIBUTE_MEMORY_TYPE}: 0 for memory CUDA does not
     *                      know, 1 host ({@code CU_MEMORYTYPE_HOST}), 2 device, 3 array, 4 unified
     * @param managed       {@code CU_POINTER_ATTRIBUTE_IS_MANAGED}
     * @param deviceOrdinal {@code CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL}: the device it was allocated
     *                      or registered on (meaningless for memory CUDA does not know)
     */
    public record PointerInfo(int memoryType, boolean managed, int deviceOrdinal) {
    }

    /**
     * Asks the driver about an address ({@code cuPointerGetAttributes}, which, unlike
     * {@code cuPointerGetAttribute}, succeeds for memory CUDA does not know).
     *
     * @param device  the device whose context is current for the query
     * @param address the address
     * @return what the driver says
     */
    public static PointerInfo pointerInfo(int device, long address) {
        try (Scope s = enter(device)) {
            MemorySegment attributes = s.arena.allocate(JAVA_INT, 3);
            attributes.setAtIndex(JAVA_INT, 0, ATTRIBUTE_MEMORY_TYPE);
            attributes.setAtIndex(JAVA_INT, 1, ATTRIBUTE_IS_MANAGED);
            attributes.setAtIndex(JAVA_INT, 2, ATTRIBUTE_DEVICE_ORDINAL);
            // one zeroed 8-byte slot per value: each value (unsigned int, bool or int) fits, and
            // reading 4 bytes of a zeroed slot is right whichever of these the driver writes
            MemorySegment values = s.arena.allocate(JAVA_LONG, 3);
            MemorySegment data = s.arena.allocate(ADDRESS, 3);
            for (int i = 0; i < 3; i++) {
                data.setAtIndex(ADDRESS, i, values.asSlice(i * 8L, 8));
            }
            check(DriverCalls.pointerGetAttributes(3, attributes, data, address), "cuPointerGetAttributes", null, 0);
            return new PointerInfo(values.get(JAVA_INT, 0), values.get(JAVA_INT, 8) != 0, values.get(JAVA_INT, 16));
        }
    }

    /**
     * Where an address is, asking the driver: for raw copies whose memory kinds nobody described.
     *
     * @param device  the device current for the query
     * @param address the address
     * @return the side
     */
    public static Side sideOf(int device, long address) {
        PointerInfo p = pointerInfo(device, address);
        if (p.managed()) {
            return Side.DEVICE;
        }
        return switch (p.memoryType()) {
            case 0 -> Side.PAGEABLE;               // not known to CUDA
            case MEMORYTYPE_HOST -> Side.PINNED;   // cuMemHostAlloc, cuMemHostRegister
            default -> Side.DEVICE;                // device, array, unified
        };
    }

    /**
     * Copies bytes and waits until they have arrived ({@code cuMemcpy}, which infers the direction
     * from the addresses, then the legacy default stream where the copy returns early).
     *
     * @param device     the device to run on
     * @param source     the source address
     * @param sourceSide where it is
     * @param target     the target address
     * @param targetSide where it is
     * @param byteSize   the length
     */
    public static void copy(int device, long source, Side sourceSide, long target, Side targetSide, long byteSize) {
        if (byteSize == 0) {
            return;
        }
        try (Scope _ = enter(device)) {
            check(DriverCalls.memcpy(target, source, byteSize), "cuMemcpy", null, byteSize);
            if (returnsEarly(sourceSide, targetSide)) {
                check(DriverCalls.streamSynchronize(STREAM_LEGACY), "cuStreamSynchronize", null, byteSize);
            }
        }
    }

    /**
     * Enqueues a copy on a stream ({@code cuMemcpyAsync}).
     *
     * @param device     the stream's device
     * @param source     the source address
     * @param sourceSide where it is
     * @param target     the target address
     * @param targetSide where it is
     * @param byteSize   the length
     * @param stream     the stream value
     */
    public static void copyAsync(int device, long source, Side sourceSide, long target, Side targetSide, long byteSize,
                                 long stream) {
        if (byteSize == 0) {
            return;
        }
        try (Scope _ = enter(device)) {
            check(DriverCalls.memcpyAsync(target, source, byteSize, stream), "cuMemcpyAsync", null, byteSize);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Streams and events

    /**
     * Creates a stream in a device's primary context ({@code cuStreamCreate}).
     *
     * @param device      its device
     * @param nonBlocking whether it skips the implicit synchronisation with the legacy default stream
     * @return the stream value
     */
    public static long createStream(int device, boolean nonBlocking) {
        try (Scope s = enter(device)) {
            MemorySegment out = s.out();
            check(DriverCalls.streamCreate(out, nonBlocking ? STREAM_NON_BLOCKING : 0), "cuStreamCreate", null, 0);
            return out.get(JAVA_LONG, 0);
        }
    }

    /**
     * Destroys a stream made by {@link #createStream} ({@code cuStreamDestroy}).
     *
     * @param device its device
     * @param stream the stream value
     */
    public static void destroyStream(int device, long stream) {
        try (Scope _ = enter(device)) {
            check(DriverCalls.streamDestroy(stream), "cuStreamDestroy", null, 0);
        }
    }

    /**
     * Waits until a stream has done all its work ({@code cuStreamSynchronize}).
     *
     * @param device the device whose legacy or per-thread stream 1 and 2 mean
     * @param stream the stream value
     */
    public static void synchronizeStream(int device, long stream) {
        try (Scope _ = enter(device)) {
            check(DriverCalls.streamSynchronize(stream), "cuStreamSynchronize", null, 0);
        }
    }

    /**
     * Whether a stream has done all its work ({@code cuStreamQuery}).
     *
     * @param device the device
     * @param stream the stream value
     * @return true if idle
     */
    public static boolean streamIdle(int device, long stream) {
        try (Scope _ = enter(device)) {
            int rc = DriverCalls.streamQuery(stream);
            if (rc == CudaErrors.NOT_READY) {
                return false;
            }
            check(rc, "cuStreamQuery", null, 0);
            return true;
        }
    }

    /**
     * Creates an event without timing (the cheap kind used for ordering; {@code cuEventCreate} with
     * {@code CU_EVENT_DISABLE_TIMING}).
     *
     * @param device the device whose primary context it belongs to
     * @return the event value
     */
    public static long createEvent(int device) {
        try (Scope s = enter(device)) {
            MemorySegment out = s.out();
            check(DriverCalls.eventCreate(out, EVENT_DISABLE_TIMING), "cuEventCreate", null, 0);
            return out.get(JAVA_LONG, 0);
        }
    }

    /**
     * Records an event on a stream of the event's device ({@code cuEventRecord}).
     *
     * @param device the device of both
     * @param event  the event value
     * @param stream the stream value
     */
    public static void recordEvent(int device, long event, long stream) {
        try (Scope _ = enter(device)) {
            check(DriverCalls.eventRecord(event, stream), "cuEventRecord", null, 0);
        }
    }

    /**
     * Makes a stream wait for an event, without blocking the host ({@code cuStreamWaitEvent}).
     *
     * @param device the device current for the call (the one stream values 1 and 2 refer to)
     * @param stream the waiting stream
     * @param event  the event
     */
    public static void waitEvent(int device, long stream, long event) {
        try (Scope _ = enter(device)) {
            check(DriverCalls.streamWaitEvent(stream, event, 0), "cuStreamWaitEvent", null, 0);
        }
    }

    /**
     * Blocks until an event has completed ({@code cuEventSynchronize}).
     *
     * @param device the event's device
     * @param event  the event
     */
    public static void synchronizeEvent(int device, long event) {
        try (Scope _ = enter(device)) {
            check(DriverCalls.eventSynchronize(event), "cuEventSynchronize", null, 0);
        }
    }

    /**
     * Destroys an event; its resources go once it has completed ({@code cuEventDestroy}).
     *
     * @param device the event's device
     * @param event  the event
     */
    public static void destroyEvent(int device, long event) {
        try (Scope _ = enter(device)) {
            check(DriverCalls.eventDestroy(event), "cuEventDestroy", null, 0);
        }
    }
}
