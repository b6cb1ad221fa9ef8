package io.datamem.sycl;

import io.datamem.Device;
import io.datamem.DeviceInterchange;
import io.datamem.array.NDArray;
import io.datamem.internal.Checks;
import io.datamem.spi.Availability;
import io.datamem.sycl.internal.ClError;
import io.datamem.sycl.internal.OpenCl;
import io.datamem.sycl.internal.UsmFunctions;
import io.datamem.usm.UsmKind;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A SYCL device with its context and an in-order command queue, over OpenCL: the {@code cl_context},
 * {@code cl_device_id} and {@code cl_command_queue} a SYCL program adopts through its OpenCL backend
 * interop ({@code sycl::make_context}, {@code sycl::make_queue}), and the memory operations of SYCL's
 * queue on USM pointers (copy, fill, prefetch, migrate, advise) and its pointer queries.
 *
 * <p>Queues come from a selector ({@link #of(String)}: one shared queue per device for the life of
 * the process, as dpctl uses one default context per root device, so every datamem allocation on a
 * device lives in the same context and may be copied to any other), or from handles a caller
 * already has ({@link #adopt}: the queue retains them and releases them on {@link #close()}).
 *
 * <p>Every memory operation returns when it has completed. Pointers are {@link MemorySegment}s used
 * as addresses; a segment with a non-zero size is also bounds-checked against the byte count. All
 * methods are thread-safe.
 */
public final class SyclQueue implements AutoCloseable {

    /** How {@link #migrate} moves a range: {@code cl_mem_migration_flags}. */
    public enum Migration {
        /** {@code CL_MIGRATE_MEM_OBJECT_HOST}: to the host rather than to the queue's device. */
        TO_HOST(1),
        /** {@code CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED}: the contents need not be preserved. */
        CONTENT_UNDEFINED(2);

        private final long flag;

        Migration(long flag) {
            this.flag = flag;
        }

        /**
         * The OpenCL flag.
         *
         * @return the bit
         */
        public long flag() {
            return flag;
        }
    }

    private static final Map<Integer, SyclQueue> SHARED = new ConcurrentHashMap<>();

    private final SyclDevice device;
    private final UsmFunctions usm;
    private final MemorySegment context;
    private final MemorySegment queue;
    private final boolean adopted;
    private final SyclInterchange interchange;
    private volatile boolean closed;

    private SyclQueue(SyclDevice device, UsmFunctions usm, MemorySegment context, MemorySegment queue,
                      boolean adopted) {
        this.device = device;
        this.usm = usm;
        this.context = context;
        this.queue = queue;
        this.adopted = adopted;
        this.interchange = new SyclInterchange(this);   // reads the handles set above
    }

    // ---------------------------------------------------------------------------------------------
    // Discovery

    /**
     * Every OpenCL device of the process, in enumeration order (with and without USM).
     *
     * @return the devices; empty when there is no OpenCL runtime
     */
    public static List<SyclDevice> devices() {
        return ClRuntime.get().devices();
    }

    /**
     * Whether a selector picks a device that can allocate a kind of USM memory here, and if not, why
     * (no {@code libOpenCL.so.1}, no platform, no matching device, no
     * {@code cl_intel_unified_shared_memory}, or no capability for the kind).
     *
     * @param selector the selector
     * @param kind     host, shared or device; {@link UsmKind#UNKNOWN} asks only for the extension
     * @return the availability
     * @throws NullPointerException if an argument is null
     */
    public static Availability availability(SyclSelector selector, UsmKind kind) {
        Objects.requireNonNull(selector, "selector");
        Objects.requireNonNull(kind, "kind");
        return ClRuntime.get().availability(selector, kind);
    }

    /**
     * The shared queue of the device a filter selector picks.
     *
     * @param filterSelector for example {@code opencl:gpu:0}, {@code opencl:cpu} or {@code default}
     * @return the queue, the same for every selector that picks the same device
     * @throws NullPointerException     if {@code filterSelector} is null
     * @throws IllegalArgumentException if the selector is malformed
     * @throws IllegalStateException    if no device with {@code cl_intel_unified_shared_memory}
     *                                  matches, with the reason
     * @throws io.datamem.BackendException if OpenCL cannot create the context or queue
     */
    public static SyclQueue of(String filterSelector) {
        return of(SyclSelector.parse(filterSelector));
    }

    /**
     * The shared queue of the device a selector picks.
     *
     * @param selector the selector
     * @return the queue, the same for every selector that picks the same device
     * @throws NullPointerException     if {@code selector} is null
     * @throws IllegalStateException    if no device with {@code cl_intel_unified_shared_memory}
     *                                  matches, with the reason
     * @throws io.datamem.BackendException if OpenCL cannot create the context or queue
     */
    public static SyclQueue of(SyclSelector selector) {
        Availability a = availability(selector, UsmKind.UNKNOWN);
        if (!a.available()) {
            throw new IllegalStateException("no SYCL queue for the filter selector '" + selector + "': " + a.reason());
        }
        SyclDevice d = selector.select(devices()).orElseThrow();
        SyclQueue q = SHARED.get(d.ordinal());
        if (q != null) {
            return q;
        }
        synchronized (SHARED) {
            return SHARED.computeIfAbsent(d.ordinal(), k -> create(d));
        }
    }

    /**
     * The shared queue of the default device.
     *
     * @return the queue
     * @throws IllegalStateException       if no device has {@code cl_intel_unified_shared_memory}
     * @throws io.datamem.BackendException if OpenCL cannot create the context or queue
     */
    public static SyclQueue defaultQueue() {
        return of(SyclSelector.defaultSelector());
    }

    private static SyclQueue create(SyclDevice d) {
        UsmFunctions usm = ClRuntime.get().functions(d);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment properties = arena.allocateFrom(JAVA_LONG, OpenCl.CONTEXT_PLATFORM,
                    d.platformHandle().address(), 0L);
            MemorySegment devices = arena.allocateFrom(ADDRESS, d.handle());
            MemorySegment status = arena.allocate(JAVA_INT);
            MemorySegment context = OpenCl.createContext(properties, 1, devices, status);
            if (context.address() == 0) {
                throw ClError.exception(null, 0, "clCreateContext", status.get(JAVA_INT, 0), "device " + d);
            }
            MemorySegment queue = OpenCl.createQueue(context, d.handle(), status);
            if (queue.address() == 0) {
                int code = status.get(JAVA_INT, 0);
                OpenCl.releaseContext(context);
                throw ClError.exception(null, 0, "clCreateCommandQueueWithProperties", code, "device " + d);
            }
            return new SyclQueue(d, usm, context, queue, false);
        }
    }

    /**
     * A queue over handles the caller already has (from its own OpenCL code, or from a SYCL program
     * through {@code sycl::get_native<sycl::backend::opencl>}). The queue retains the context and
     * the command queue and releases them on {@link #close()}; without a command queue it creates one
     * in the context.
     *
     * @param contextHandle a {@code cl_context}
     * @param deviceHandle  a {@code cl_device_id} of the context: a root device this process
     *                      enumerates, with {@code cl_intel_unified_shared_memory}
     * @param queueHandle   a {@code cl_command_queue} of that context and device, or
     *                      {@link MemorySegment#NULL} to create one
     * @return the queue
     * @throws NullPointerException        if an argument is null
     * @throws IllegalArgumentException    if a handle is NULL where one is required, the device is
     *                                     not an enumerated root device, or the device or queue do
     *                                     not belong to the context
     * @throws IllegalStateException       if there is no OpenCL runtime or the device has no usable
     *                                     USM
     * @throws io.datamem.BackendException if an OpenCL query, retain or queue creation fails
     */
    public static SyclQueue adopt(MemorySegment contextHandle, MemorySegment deviceHandle, MemorySegment queueHandle) {
        Objects.requireNonNull(contextHandle, "contextHandle");
        Objects.requireNonNull(deviceHandle, "deviceHandle");
        Objects.requireNonNull(queueHandle, "queueHandle");
        if (contextHandle.address() == 0) {
            throw new IllegalArgumentException("contextHandle: NULL (expected: a cl_context)");
        }
        if (deviceHandle.address() == 0) {
            throw new IllegalArgumentException("deviceHandle: NULL (expected: a cl_device_id)");
        }
        ClRuntime rt = ClRuntime.get();
        if (rt.failure() != null) {
            throw new IllegalStateException("cannot adopt OpenCL handles: " + rt.failure());
        }
        SyclDevice d = rt.device(deviceHandle.address()).orElseThrow(() -> new IllegalArgumentException(
                "deviceHandle: 0x" + Long.toHexString(deviceHandle.address()) + " (expected: a root OpenCL device of"
                        + " this process: " + rt.describeDevices() + ")"));
        UsmFunctions usm = rt.functions(d);
        MemorySegment context = MemorySegment.ofAddress(contextHandle.address());
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment size = arena.allocate(JAVA_LONG);
            int status = OpenCl.getContextInfo(context, OpenCl.CONTEXT_DEVICES, 0, MemorySegment.NULL, size);
            checkHandle(status, "contextHandle", contextHandle, "clGetContextInfo");
            MemorySegment list = arena.allocate(Math.max(8, size.get(JAVA_LONG, 0)));
            status = OpenCl.getContextInfo(context, OpenCl.CONTEXT_DEVICES, list.byteSize(), list, MemorySegment.NULL);
            checkHandle(status, "contextHandle", contextHandle, "clGetContextInfo");
            boolean member = false;
            for (long i = 0; i < size.get(JAVA_LONG, 0) / ADDRESS.byteSize(); i++) {
                member |= list.getAtIndex(ADDRESS, i).address() == d.handle().address();
            }
            if (!member) {
                throw new IllegalArgumentException("deviceHandle: " + d + " (expected: a device of the context 0x"
                        + Long.toHexString(context.address()) + ")");
            }
            MemorySegment queue;
            if (queueHandle.address() == 0) {
                MemorySegment st = arena.allocate(JAVA_INT);
                queue = OpenCl.createQueue(context, d.handle(), st);
                if (queue.address() == 0) {
                    throw ClError.exception(null, 0, "clCreateCommandQueueWithProperties", st.get(JAVA_INT, 0),
                            "device " + d);
                }
            } else {
                queue = MemorySegment.ofAddress(queueHandle.address());
                MemorySegment value = arena.allocate(ADDRESS);
                checkHandle(OpenCl.getQueueInfo(queue, OpenCl.QUEUE_CONTEXT, 8, value, MemorySegment.NULL),
                        "queueHandle", queueHandle, "clGetCommandQueueInfo");
                if (value.get(ADDRESS, 0).address() != context.address()) {
                    throw new IllegalArgumentException("queueHandle: 0x" + Long.toHexString(queue.address())
                            + " (expected: a queue of the context 0x" + Long.toHexString(context.address()) + ")");
                }
                checkHandle(OpenCl.getQueueInfo(queue, OpenCl.QUEUE_DEVICE, 8, value, MemorySegment.NULL),
                        "queueHandle", queueHandle, "clGetCommandQueueInfo");
                if (value.get(ADDRESS, 0).address() != d.handle().address()) {
                    throw new IllegalArgumentException("queueHandle: 0x" + Long.toHexString(queue.address())
                            + " (expected: a queue of the device " + d + ")");
                }
                status = OpenCl.retainQueue(queue);
                if (status != ClError.SUCCESS) {
                    throw ClError.exception(null, 0, "clRetainCommandQueue", status, null);
                }
            }
            status = OpenCl.retainContext(context);
            if (status != ClError.SUCCESS) {
                OpenCl.releaseQueue(queue);
                throw ClError.exception(null, 0, "clRetainContext", status, null);
            }
            return new SyclQueue(d, usm, context, queue, true);
        }
    }

    private static void checkHandle(int status, String name, MemorySegment handle, String operation) {
        if (status == ClError.SUCCESS) {
            return;
        }
        if (status == -34 || status == -36) { // CL_INVALID_CONTEXT, CL_INVALID_COMMAND_QUEUE
            throw new IllegalArgumentException(name + ": 0x" + Long.toHexString(handle.address()) + " (expected: a valid "
                    + (status == -34 ? "cl_context" : "cl_command_queue") + "; " + operation + " returned "
                    + ClError.name(status) + ")");
        }
        throw ClError.exception(null, 0, operation, status, name + " 0x" + Long.toHexString(handle.address()));
    }

    // ---------------------------------------------------------------------------------------------
    // Handles

    /**
     * The device.
     *
     * @return the device
     */
    public SyclDevice device() {
        return device;
    }

    /**
     * The DLPack device of USM memory of this queue: {@code (kDLOneAPI, device ordinal)}.
     *
     * @return the device
     */
    public Device dlpackDevice() {
        return device.dlpackDevice();
    }

    /**
     * The {@code cl_context} (what {@code sycl::make_context<sycl::backend::opencl>} takes).
     *
     * @return the handle, valid while the queue is open
     */
    public MemorySegment contextHandle() {
        return context;
    }

    /**
     * The {@code cl_device_id} (what {@code sycl::make_device<sycl::backend::opencl>} takes).
     *
     * @return the handle
     */
    public MemorySegment deviceHandle() {
        return device.handle();
    }

    /**
     * The {@code cl_command_queue} (what {@code sycl::make_queue<sycl::backend::opencl>} takes), an
     * in-order queue.
     *
     * @return the handle, valid while the queue is open
     */
    public MemorySegment queueHandle() {
        return queue;
    }

    /**
     * The {@code cl_platform_id} of the device.
     *
     * @return the handle
     */
    public MemorySegment platformHandle() {
        return device.platformHandle();
    }

    /**
     * Whether the queue was made over the caller's handles by {@link #adopt} (and releases them on
     * {@link #close()}), rather than being a shared queue of {@link #of}.
     *
     * @return true for adopted queues
     */
    public boolean isAdopted() {
        return adopted;
    }

    /**
     * Whether {@link #close()} has released an adopted queue.
     *
     * @return true once closed
     */
    public boolean isClosed() {
        return closed;
    }

    /**
     * What datamem's exports (DLPack, buffers, the USM array interface, Arrow) use for USM memory
     * of this queue's context: its device and {@code device_info}, its USM kind as the runtime
     * reports it, its {@code syclobj}, ordering before a consumer's queue, and copies on this
     * queue. Every allocator on the queue puts it in its memory's traits; an allocator of one's own
     * over this queue (a {@link io.datamem.spi.DataMemProvider}'s) does the same, so that its
     * memory exports as datamem's does.
     *
     * @return the same instance for the life of the queue
     */
    public DeviceInterchange interchange() {
        return interchange;
    }

    UsmFunctions usm() {
        return usm;
    }

    void checkOpen() {
        if (closed) {
            throw new IllegalStateException(this + " is closed");
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Pointer queries

    /**
     * What the context knows about a pointer: the kind, base, size and device of the USM allocation
     * containing it (interior pointers included), or {@link UsmPointerInfo#UNKNOWN}.
     *
     * @param ptr any address ({@link MemorySegment#NULL} is unknown)
     * @return the information
     * @throws NullPointerException        if {@code ptr} is null
     * @throws IllegalStateException       if the queue is closed
     * @throws io.datamem.BackendException if {@code clGetMemAllocInfoINTEL} fails
     */
    public UsmPointerInfo pointerInfo(MemorySegment ptr) {
        Objects.requireNonNull(ptr, "ptr");
        checkOpen();
        if (ptr.address() == 0) {
            return UsmPointerInfo.UNKNOWN;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment value = arena.allocate(JAVA_LONG);
            MemorySegment p = MemorySegment.ofAddress(ptr.address());
            UsmKind kind = UsmFunctions.usmKind((int) query(p, UsmFunctions.MEM_ALLOC_TYPE, JAVA_INT.byteSize(),
                    value));
            if (kind == UsmKind.UNKNOWN) {
                return UsmPointerInfo.UNKNOWN;
            }
            long base = query(p, UsmFunctions.MEM_ALLOC_BASE_PTR, 8, value);
            long size = query(p, UsmFunctions.MEM_ALLOC_SIZE, 8, value);
            long deviceHandle = query(p, UsmFunctions.MEM_ALLOC_DEVICE, 8, value);
            SyclDevice owner = deviceHandle == 0 ? null : ClRuntime.get().device(deviceHandle).orElse(null);
            return new UsmPointerInfo(kind, base, size, owner);
        }
    }

    /**
     * The USM kind of a pointer in this queue's context ({@code sycl::get_pointer_type}).
     *
     * @param ptr any address
     * @return host, shared, device, or unknown for memory that is not USM memory of the context
     * @throws NullPointerException        if {@code ptr} is null
     * @throws IllegalStateException       if the queue is closed
     * @throws io.datamem.BackendException if {@code clGetMemAllocInfoINTEL} fails
     */
    public UsmKind kindOf(MemorySegment ptr) {
        Objects.requireNonNull(ptr, "ptr");
        checkOpen();
        if (ptr.address() == 0) {
            return UsmKind.UNKNOWN;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment value = arena.allocate(JAVA_LONG);
            return UsmFunctions.usmKind((int) query(MemorySegment.ofAddress(ptr.address()),
                    UsmFunctions.MEM_ALLOC_TYPE, JAVA_INT.byteSize(), value));
        }
    }

    private long query(MemorySegment ptr, int param, long size, MemorySegment value) {
        value.set(JAVA_LONG, 0, 0);
        int status = usm.allocInfo(context, ptr, param, size, value, MemorySegment.NULL);
        if (status != ClError.SUCCESS) {
            throw ClError.exception(null, 0, "clGetMemAllocInfoINTEL", status, "pointer 0x"
                    + Long.toHexString(ptr.address()) + ", query 0x" + Integer.toHexString(param));
        }
        return size == 4 ? Integer.toUnsignedLong(value.get(JAVA_INT, 0)) : value.get(JAVA_LONG, 0);
    }

    // ---------------------------------------------------------------------------------------------
    // Memory operations

    /**
     * Copies bytes between any two of host memory, USM host, shared and device memory of this
     * context ({@code sycl::queue::memcpy}, {@code clEnqueueMemcpyINTEL}), and returns when done.
     * Heap segments are staged through native memory.
     *
     * @param destination where to copy to
     * @param source      where to copy from
     * @param byteSize    bytes to copy
     * @throws NullPointerException        if a segment is null
     * @throws IllegalArgumentException    if {@code byteSize} is negative or above a non-empty
     *                                     segment's size, or a pointer is NULL while
     *                                     {@code byteSize > 0}, or the ranges overlap
     * @throws IllegalStateException       if the queue is closed
     * @throws io.datamem.BackendException if OpenCL reports another error
     */
    public void copy(MemorySegment destination, MemorySegment source, long byteSize) {
        Objects.requireNonNull(destination, "destination");
        Objects.requireNonNull(source, "source");
        checkRange("destination", destination, byteSize);
        checkRange("source", source, byteSize);
        checkOpen();
        if (byteSize == 0) {
            return;
        }
        if (!destination.isNative() || !source.isNative()) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment src = source;
                if (!source.isNative()) {
                    src = arena.allocate(byteSize);
                    MemorySegment.copy(source, 0, src, 0, byteSize);
                }
                MemorySegment dst = destination.isNative() ? destination : arena.allocate(byteSize);
                copy(dst, src, byteSize);
                if (!destination.isNative()) {
                    MemorySegment.copy(dst, 0, destination, 0, byteSize);
                }
            }
            return;
        }
        long d = destination.address();
        long s = source.address();
        if (Long.compareUnsigned(d - s, byteSize) < 0 || Long.compareUnsigned(s - d, byteSize) < 0) {
            throw new IllegalArgumentException("copy of " + byteSize + " bytes from 0x" + Long.toHexString(s)
                    + " to 0x" + Long.toHexString(d) + ": the ranges overlap (expected: disjoint ranges)");
        }
        int status = usm.memcpy(queue, true, MemorySegment.ofAddress(d), MemorySegment.ofAddress(s), byteSize,
                MemorySegment.NULL);
        if (status != ClError.SUCCESS) {
            throw ClError.exception(null, byteSize, "clEnqueueMemcpyINTEL", status, "from 0x" + Long.toHexString(s)
                    + " to 0x" + Long.toHexString(d) + " on " + device.filterString());
        }
    }

    /**
     * Copies the elements of one array into another of the same dtype and shape, both C-contiguous,
     * wherever each lives (host, USM host, shared or device memory of this context). This is how
     * data reaches and leaves arrays on {@code sycl:device} memory, which have no host view.
     *
     * @param destination the array to write
     * @param source      the array to read
     * @throws NullPointerException        if an array is null
     * @throws IllegalArgumentException    if the dtypes or shapes differ, an array is not
     *                                     C-contiguous, or the two share memory
     * @throws IllegalStateException       if an array or the queue is closed
     * @throws io.datamem.BackendException if OpenCL reports an error
     */
    public void copy(NDArray destination, NDArray source) {
        Objects.requireNonNull(destination, "destination");
        Objects.requireNonNull(source, "source");
        if (!destination.dtype().equals(source.dtype())) {
            throw new IllegalArgumentException("dtype " + source.dtype() + " of the source (expected: "
                    + destination.dtype() + ", the destination's)");
        }
        if (!Arrays.equals(destination.shape(), source.shape())) {
            throw new IllegalArgumentException("shape " + Arrays.toString(source.shape()) + " of the source (expected: "
                    + Arrays.toString(destination.shape()) + ", the destination's)");
        }
        if (!destination.isCContiguous() || !source.isCContiguous()) {
            throw new IllegalArgumentException("copy between arrays needs C-contiguous arrays (destination: "
                    + destination.isCContiguous() + ", source: " + source.isCContiguous()
                    + "); copy a strided view through NDArray.copy() on host memory first");
        }
        copy(MemorySegment.ofAddress(destination.address()), MemorySegment.ofAddress(source.address()),
                source.byteSize());
    }

    /**
     * Sets bytes to a value ({@code sycl::queue::memset}, {@code clEnqueueMemFillINTEL}) and returns
     * when done.
     *
     * @param destination the first byte, USM memory of this context
     * @param value       the byte
     * @param byteSize    bytes to set
     * @throws NullPointerException        if {@code destination} is null
     * @throws IllegalArgumentException    if {@code byteSize} is negative or above a non-empty
     *                                     segment's size, or the pointer is NULL
     * @throws IllegalStateException       if the queue is closed
     * @throws io.datamem.BackendException if OpenCL reports an error
     */
    public void fill(MemorySegment destination, byte value, long byteSize) {
        Objects.requireNonNull(destination, "destination");
        try (Arena arena = Arena.ofConfined()) {
            fill(destination, arena.allocateFrom(ValueLayout.JAVA_BYTE, value), byteSize);
        }
    }

    /**
     * Repeats a pattern over a range ({@code sycl::queue::fill}, {@code clEnqueueMemFillINTEL}) and
     * returns when done.
     *
     * @param destination the first byte, USM memory of this context, aligned to the pattern size
     * @param pattern     the pattern: 1 to 128 bytes, a power of two
     * @param byteSize    bytes to fill, a multiple of the pattern size
     * @throws NullPointerException        if an argument is null
     * @throws IllegalArgumentException    if the pattern size is not a power of two up to 128, the
     *                                     byte count is negative, above a non-empty segment's size or
     *                                     not a multiple of the pattern size, or the destination is
     *                                     NULL or misaligned
     * @throws IllegalStateException       if the queue is closed
     * @throws io.datamem.BackendException if OpenCL reports an error
     */
    public void fill(MemorySegment destination, MemorySegment pattern, long byteSize) {
        Objects.requireNonNull(destination, "destination");
        Objects.requireNonNull(pattern, "pattern");
        long n = pattern.byteSize();
        if (n < 1 || n > 128 || Long.bitCount(n) != 1) {
            throw new IllegalArgumentException("pattern byteSize: " + n + " (expected: a power of two from 1 to 128)");
        }
        checkRange("destination", destination, byteSize);
        if (byteSize % n != 0) {
            throw new IllegalArgumentException("byteSize: " + byteSize + " (expected: a multiple of the pattern size "
                    + n + ")");
        }
        if (destination.address() % n != 0) {
            throw new IllegalArgumentException("destination: 0x" + Long.toHexString(destination.address())
                    + " (expected: aligned to the pattern size " + n + ")");
        }
        checkOpen();
        if (byteSize == 0) {
            return;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocate(n, n);
            MemorySegment.copy(pattern, 0, p, 0, n);
            MemorySegment event = arena.allocate(ADDRESS);
            int status = usm.memFill(queue, MemorySegment.ofAddress(destination.address()), p, n, byteSize, event);
            complete(status, event, "clEnqueueMemFillINTEL", byteSize, destination);
        }
    }

    /**
     * Moves a range of shared memory to the queue's device ahead of use ({@code sycl::queue::prefetch})
     * and returns when done.
     *
     * @param ptr      the first byte
     * @param byteSize bytes
     * @throws NullPointerException        if {@code ptr} is null
     * @throws IllegalArgumentException    if {@code byteSize} is negative or above a non-empty
     *                                     segment's size, or the pointer is NULL
     * @throws IllegalStateException       if the queue is closed
     * @throws io.datamem.BackendException if OpenCL reports an error
     */
    public void prefetch(MemorySegment ptr, long byteSize) {
        migrate(ptr, byteSize);
    }

    /**
     * Migrates a range of USM memory ({@code clEnqueueMigrateMemINTEL}) to the queue's device, or to
     * the host with {@link Migration#TO_HOST}, and returns when done.
     *
     * @param ptr       the first byte
     * @param byteSize  bytes
     * @param migration flags
     * @throws NullPointerException        if an argument is null
     * @throws IllegalArgumentException    if {@code byteSize} is negative or above a non-empty
     *                                     segment's size, or the pointer is NULL
     * @throws IllegalStateException       if the queue is closed
     * @throws io.datamem.BackendException if OpenCL reports an error
     */
    public void migrate(MemorySegment ptr, long byteSize, Migration... migration) {
        Objects.requireNonNull(ptr, "ptr");
        long flags = 0;
        for (Migration m : migration) {
            flags |= Objects.requireNonNull(m, "migration").flag();
        }
        checkRange("ptr", ptr, byteSize);
        checkOpen();
        if (byteSize == 0) {
            return;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment event = arena.allocate(ADDRESS);
            int status = usm.migrate(queue, MemorySegment.ofAddress(ptr.address()), byteSize, flags, event);
            complete(status, event, "clEnqueueMigrateMemINTEL", byteSize, ptr);
        }
    }

    /**
     * Gives the runtime a device-specific hint about a range ({@code sycl::queue::mem_advise},
     * {@code clEnqueueMemAdviseINTEL}) and returns when it is applied.
     *
     * @param ptr      the first byte
     * @param byteSize bytes
     * @param advice   a {@code cl_mem_advice_intel} value the device understands (0 is no advice)
     * @throws NullPointerException        if {@code ptr} is null
     * @throws IllegalArgumentException    if {@code byteSize} is negative or above a non-empty
     *                                     segment's size, or the pointer is NULL
     * @throws IllegalStateException       if the queue is closed
     * @throws io.datamem.BackendException if OpenCL reports an error (an advice the device does not
     *                                     know is {@code CL_INVALID_VALUE})
     */
    public void advise(MemorySegment ptr, long byteSize, int advice) {
        Objects.requireNonNull(ptr, "ptr");
        checkRange("ptr", ptr, byteSize);
        checkOpen();
        if (byteSize == 0) {
            return;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment event = arena.allocate(ADDRESS);
            int status = usm.advise(queue, MemorySegment.ofAddress(ptr.address()), byteSize, advice, event);
            complete(status, event, "clEnqueueMemAdviseINTEL", byteSize, ptr);
        }
    }

    private void complete(int status, MemorySegment event, String operation, long byteSize, MemorySegment ptr) {
        if (status != ClError.SUCCESS) {
            throw ClError.exception(null, byteSize, operation, status, "at 0x" + Long.toHexString(ptr.address())
                    + " on " + device.filterString());
        }
        MemorySegment e = event.get(ADDRESS, 0);
        if (e.address() != 0) {
            status = OpenCl.waitAndRelease(e);
        } else {
            status = OpenCl.finish(queue);
        }
        if (status != ClError.SUCCESS) {
            throw ClError.exception(null, byteSize, operation + " (waiting for it)", status, "at 0x"
                    + Long.toHexString(ptr.address()) + " on " + device.filterString());
        }
    }

    /**
     * Waits for every command enqueued on the queue ({@code clFinish}).
     *
     * @throws IllegalStateException       if the queue is closed
     * @throws io.datamem.BackendException if OpenCL reports an error
     */
    public void finish() {
        checkOpen();
        int status = OpenCl.finish(queue);
        if (status != ClError.SUCCESS) {
            throw ClError.exception(null, 0, "clFinish", status, device.filterString());
        }
    }

    /**
     * Passes a USM pointer to a kernel argument ({@code clSetKernelArgMemPointerINTEL}), for OpenCL
     * kernels that read or write datamem memory.
     *
     * @param kernelHandle a {@code cl_kernel} of this context
     * @param argIndex     the argument's index
     * @param ptr          a USM pointer of this context (interior pointers allowed)
     * @throws NullPointerException        if an argument is null
     * @throws IllegalArgumentException    if the kernel handle is NULL, or OpenCL reports
     *                                     {@code CL_INVALID_KERNEL} or {@code CL_INVALID_ARG_INDEX}
     * @throws IllegalStateException       if the queue is closed
     * @throws io.datamem.BackendException if OpenCL reports another error
     */
    public void setKernelArgPointer(MemorySegment kernelHandle, int argIndex, MemorySegment ptr) {
        Objects.requireNonNull(kernelHandle, "kernelHandle");
        Objects.requireNonNull(ptr, "ptr");
        if (kernelHandle.address() == 0) {
            throw new IllegalArgumentException("kernelHandle: NULL (expected: a cl_kernel)");
        }
        checkOpen();
        int status = usm.setKernelArgMemPointer(MemorySegment.ofAddress(kernelHandle.address()), argIndex,
                MemorySegment.ofAddress(ptr.address()));
        if (status == -48 || status == -49) { // CL_INVALID_KERNEL, CL_INVALID_ARG_INDEX
            throw new IllegalArgumentException((status == -48 ? "kernelHandle: 0x"
                    + Long.toHexString(kernelHandle.address()) : "argIndex: " + argIndex) + " (clSetKernelArgMemPointerINTEL"
                    + " returned " + ClError.name(status) + ")");
        }
        if (status != ClError.SUCCESS) {
            throw ClError.exception(null, 0, "clSetKernelArgMemPointerINTEL", status, "argument " + argIndex);
        }
    }

    private static void checkRange(String name, MemorySegment segment, long byteSize) {
        Checks.byteSize("byteSize", byteSize);
        if (segment.byteSize() != 0 && byteSize > segment.byteSize()) {
            throw new IllegalArgumentException("byteSize: " + byteSize + " (expected: <= " + segment.byteSize()
                    + ", the size of the " + name + " segment)");
        }
        if (byteSize > 0 && segment.isNative() && segment.address() == 0) {
            throw new IllegalArgumentException(name + ": NULL (expected: a pointer, since byteSize is " + byteSize + ")");
        }
    }

    // ---------------------------------------------------------------------------------------------

    /**
     * Releases the command queue and context of an adopted queue (after waiting for its commands).
     * Shared queues ({@link #of}) live as long as the process: closing one does nothing. Idempotent.
     *
     * @throws io.datamem.BackendException if OpenCL fails to release a handle
     */
    @Override
    public void close() {
        if (!adopted) {
            return;
        }
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        OpenCl.finish(queue);
        int q = OpenCl.releaseQueue(queue);
        int c = OpenCl.releaseContext(context);
        if (q != ClError.SUCCESS) {
            throw ClError.exception(null, 0, "clReleaseCommandQueue", q, null);
        }
        if (c != ClError.SUCCESS) {
            throw ClError.exception(null, 0, "clReleaseContext", c, null);
        }
    }

    @Override
    public String toString() {
        return "SyclQueue[" + device.filterString() + " '" + device.name() + "', " + (adopted ? "adopted" : "shared")
                + (closed ? ", closed" : "") + "]";
    }
}
