package io.datamem.cuda.internal;

import io.datamem.spi.Availability;
import jcuda.CudaException;
import jcuda.JCudaVersion;
import jcuda.runtime.JCuda;
import jcuda.runtime.cudaEvent_t;
import jcuda.runtime.cudaStream_t;

/**
 * The CUDA runtime calls datamem makes, through JCuda, with the device selection and error
 * translation every caller needs. Internal.
 *
 * <p>Nothing here touches JCuda (whose static initialiser loads its JNI library) before
 * {@link #availability()} found a working driver through {@link CudaDriver}. Every operation on a
 * device makes that device current on the calling thread for the duration of the call and
 * restores the thread's previous device afterwards, so allocations and frees are correct on any
 * thread, whatever device the thread last used. Calls return the runtime's code, or throw a
 * {@link io.datamem.BackendException} naming it ({@code cudaErrorMemoryAllocation} excepted where a
 * caller turns it into NULL). JCuda's optional exceptions (an application may switch them on
 * globally) are translated back to codes.
 */
public final class CudaRuntime {

    /** {@code cudaEventDisableTiming}. */
    static final int EVENT_DISABLE_TIMING = 2;
    /** {@code cudaStreamNonBlocking}. */
    static final int STREAM_NON_BLOCKING = 1;
    /** {@code cudaStreamLegacy}. */
    public static final long STREAM_LEGACY = 1;
    /** {@code cudaStreamPerThread}. */
    public static final long STREAM_PER_THREAD = 2;

    private static volatile Availability availability;
    private static volatile String nativesNote = "";

    private CudaRuntime() {
    }

    /** A runtime call returning its {@code cudaError_t}. */
    @FunctionalInterface
    private interface Call {
        int call();
    }

    /**
     * Runs a runtime call, turning a {@link CudaException} (JCuda's exceptions switched on) back into
     * its code.
     */
    private static int run(Call call) {
        try {
            return call.call();
        } catch (CudaException e) {
            String message = String.valueOf(e.getMessage()).strip();
            int space = message.indexOf(' ');
            int code = CudaErrors.code(space < 0 ? message : message.substring(0, space));
            return code < 0 ? 999 : code;   // cudaErrorUnknown
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Availability

    /**
     * Whether CUDA works here: the driver probe ({@link CudaDriver#probe()}, without JCuda), then
     * JCuda's runtime library loading and counting the same devices. Decided once per JVM.
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
        nativesNote = JCudaNatives.prepare();
        try {
            int[] count = new int[1];
            int rc = run(() -> JCuda.cudaGetDeviceCount(count));
            if (rc != CudaErrors.SUCCESS) {
                JCuda.cudaGetLastError();
                return Availability.unavailable("the CUDA runtime in JCuda " + JCudaVersion.get()
                        + " cannot use the driver (CUDA " + CudaDriver.versionString(probe.driverVersion())
                        + "): cudaGetDeviceCount failed with " + CudaErrors.name(rc) + " (" + rc + ")");
            }
            if (count[0] != probe.devices().size()) {
                return Availability.unavailable("the CUDA runtime counts " + count[0] + " devices, the driver "
                        + probe.devices().size());
            }
            return Availability.AVAILABLE;
        } catch (LinkageError e) {
            return Availability.unavailable("JCuda's native library could not be loaded (" + nativesNote + "): "
                    + e.getMessage());
        }
    }

    /**
     * How JCuda's JNI library was found, for diagnostics.
     *
     * @return a line, empty before CUDA was probed with a driver present
     */
    public static String nativesNote() {
        return nativesNote;
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
    // Devices

    /**
     * Makes a device current on this thread.
     *
     * @param device the ordinal
     * @return the device that was current before
     */
    public static int enter(int device) {
        int[] current = new int[1];
        int rc = run(() -> JCuda.cudaGetDevice(current));
        check(rc, "cudaGetDevice", null, 0);
        if (current[0] != device) {
            rc = run(() -> JCuda.cudaSetDevice(device));
            check(rc, "cudaSetDevice(" + device + ")", null, 0);
        }
        return current[0];
    }

    /**
     * Makes a device current on this thread and its primary context the thread's current context,
     * for calls to the driver API ({@code cudaGetDevice} answers 0 on a thread that never used CUDA,
     * without any context being current).
     *
     * @param device the ordinal
     * @return the device that was current before
     */
    static int enterWithContext(int device) {
        int[] current = new int[1];
        check(run(() -> JCuda.cudaGetDevice(current)), "cudaGetDevice", null, 0);
        check(run(() -> JCuda.cudaSetDevice(device)), "cudaSetDevice(" + device + ")", null, 0);
        return current[0];
    }

    /**
     * Restores the device {@link #enter} replaced.
     *
     * @param previous what {@code enter} returned
     * @param device   the device entered
     */
    public static void leave(int previous, int device) {
        if (previous != device) {
            run(() -> JCuda.cudaSetDevice(previous));
        }
    }

    /**
     * Throws for a code other than {@code cudaSuccess}, after clearing the thread's last error.
     *
     * @param rc          the code
     * @param operation   the call
     * @param handlerName the handler, or null
     * @param byteSize    the size involved, or 0
     */
    public static void check(int rc, String operation, String handlerName, long byteSize) {
        if (rc != CudaErrors.SUCCESS) {
            throw failure(rc, operation, handlerName, byteSize);
        }
    }

    private static io.datamem.BackendException failure(int rc, String operation, String handlerName, long byteSize) {
        clearLastError();
        String detail;
        try {
            detail = JCuda.cudaGetErrorString(rc);
        } catch (RuntimeException | LinkageError e) {
            detail = null;
        }
        return CudaErrors.exception(handlerName, byteSize, operation, rc, detail);
    }

    private static void clearLastError() {
        run(JCuda::cudaGetLastError);
    }

    // ---------------------------------------------------------------------------------------------
    // Allocation. Each returns the address, 0 when the runtime reports cudaErrorMemoryAllocation, and
    // throws for any other error.

    /** Which allocation call. */
    public enum Alloc {
        /** {@code cudaHostAlloc}. */
        HOST("cudaHostAlloc"),
        /** {@code cudaMalloc}. */
        DEVICE("cudaMalloc"),
        /** {@code cudaMallocManaged}. */
        MANAGED("cudaMallocManaged");

        final String function;

        Alloc(String function) {
            this.function = function;
        }
    }

    /**
     * Allocates.
     *
     * @param what        the call
     * @param device      the device to allocate on (current during the call)
     * @param byteSize    bytes, at least 1
     * @param flags       the call's flags (ignored by {@code cudaMalloc})
     * @param handlerName for messages
     * @return the address, or 0 on exhaustion
     */
    public static long allocate(Alloc what, int device, long byteSize, int flags, String handlerName) {
        if (viaDriver(what, byteSize, flags)) {
            int previous = enterWithContext(device);
            try {
                CudaDriver driver = CudaDriver.open();
                return what == Alloc.HOST ? driver.memHostAlloc(byteSize, flags, handlerName)
                        : driver.memAllocManaged(byteSize, flags, handlerName);
            } finally {
                leave(previous, device);
            }
        }
        RawPointer p = new RawPointer();
        int previous = enter(device);
        try {
            int rc = switch (what) {
                case HOST -> run(() -> JCuda.cudaHostAlloc(p, byteSize, flags));
                case DEVICE -> run(() -> JCuda.cudaMalloc(p, byteSize));
                case MANAGED -> run(() -> JCuda.cudaMallocManaged(p, byteSize, flags));
            };
            if (CudaErrors.isExhaustion(rc)) {
                clearLastError();
                return 0;
            }
            check(rc, what.function, handlerName, byteSize);
            return p.address();
        } finally {
            leave(previous, device);
        }
    }

    /**
     * Whether an allocation goes to the driver API through FFM instead of JCuda: JCuda wraps
     * page-locked and host-attached managed blocks in a {@code java.nio.ByteBuffer}, which cannot
     * exceed {@code Integer.MAX_VALUE} bytes, so larger blocks would fail after being allocated.
     *
     * @param what     the call
     * @param byteSize the size
     * @param flags    its flags
     * @return true for {@code cudaHostAlloc} and host-attached {@code cudaMallocManaged} above 2 GiB - 1
     */
    public static boolean viaDriver(Alloc what, long byteSize, int flags) {
        return byteSize > Integer.MAX_VALUE && (what == Alloc.HOST || (what == Alloc.MANAGED && flags == 2));
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
        if (what == Alloc.HOST && viaDriver(what, byteSize, 0)) {
            int previous = enterWithContext(device);
            try {
                CudaDriver.open().memFreeHost(address, handlerName, byteSize);
                return;
            } finally {
                leave(previous, device);
            }
        }
        RawPointer p = new RawPointer(address);
        int previous = enter(device);
        try {
            int rc = what == Alloc.HOST ? run(() -> JCuda.cudaFreeHost(p)) : run(() -> JCuda.cudaFree(p));
            check(rc, what == Alloc.HOST ? "cudaFreeHost" : "cudaFree", handlerName, byteSize);
        } finally {
            leave(previous, device);
        }
    }

    /**
     * Page-locks host memory ({@code cudaHostRegister}).
     *
     * @param device   the device whose context registers it
     * @param address  the start
     * @param byteSize the length
     * @param flags    {@code cudaHostRegister*} flags
     * @return the runtime's code (the caller decides what exhaustion means)
     */
    public static int register(int device, long address, long byteSize, int flags) {
        RawPointer p = new RawPointer(address);
        int previous = enter(device);
        try {
            int rc = run(() -> JCuda.cudaHostRegister(p, byteSize, flags));
            if (rc != CudaErrors.SUCCESS) {
                clearLastError();
            }
            return rc;
        } finally {
            leave(previous, device);
        }
    }

    /**
     * Undoes {@link #register}.
     *
     * @param device      the device
     * @param address     the start
     * @param handlerName for messages
     * @param byteSize    for messages
     */
    public static void unregister(int device, long address, String handlerName, long byteSize) {
        RawPointer p = new RawPointer(address);
        int previous = enter(device);
        try {
            check(run(() -> JCuda.cudaHostUnregister(p)), "cudaHostUnregister", handlerName, byteSize);
        } finally {
            leave(previous, device);
        }
    }

    /**
     * Zeroes device or managed memory and waits until it is done ({@code cudaMemset} on the legacy
     * default stream, then synchronising it).
     *
     * @param device      the device
     * @param address     the start
     * @param byteSize    the length
     * @param handlerName for messages
     */
    public static void zero(int device, long address, long byteSize, String handlerName) {
        RawPointer p = new RawPointer(address);
        int previous = enter(device);
        try {
            check(run(() -> JCuda.cudaMemset(p, 0, byteSize)), "cudaMemset", handlerName, byteSize);
            check(run(() -> JCuda.cudaStreamSynchronize(JCuda.cudaStreamLegacy)), "cudaStreamSynchronize",
                    handlerName, byteSize);
        } finally {
            leave(previous, device);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Copies

    /**
     * Where the bytes of a copy are, as far as the copy direction and its synchronisation care.
     * JCuda's {@code cudaMemcpy} takes only the four explicit directions (not
     * {@code cudaMemcpyDefault}), so every copy says where its ends are.
     */
    public enum Side {
        /** Ordinary (pageable) host memory: copies to the device are staged by the driver. */
        PAGEABLE,
        /** Page-locked host memory ({@code cudaHostAlloc}, {@code cudaHostRegister}). */
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
     * The {@code cudaMemcpyKind} of a copy.
     *
     * @param source where the source is
     * @param target where the target is
     * @return {@code cudaMemcpyHostToHost} (0), {@code HostToDevice} (1), {@code DeviceToHost} (2)
     *         or {@code DeviceToDevice} (3)
     */
    public static int memcpyKind(Side source, Side target) {
        return (source.host() ? 0 : 2) + (target.host() ? 0 : 1);
    }

    /**
     * Whether a {@code cudaMemcpy} may return before its data has arrived, so that a synchronous
     * copy must also wait for the legacy default stream: from pageable memory to the device (the
     * call returns once the data is staged), and from device to device (no host synchronisation).
     *
     * @param source where the source is
     * @param target where the target is
     * @return true if the caller must synchronise
     */
    public static boolean returnsEarly(Side source, Side target) {
        return (source == Side.PAGEABLE && target == Side.DEVICE) || (source == Side.DEVICE && target == Side.DEVICE);
    }

    /**
     * Where an address is, asking the runtime ({@code cudaPointerGetAttributes}): for raw copies
     * whose memory kinds nobody described.
     *
     * @param device  the device current for the query
     * @param address the address
     * @return the side
     */
    public static Side sideOf(int device, long address) {
        jcuda.runtime.cudaPointerAttributes attributes = new jcuda.runtime.cudaPointerAttributes();
        RawPointer p = new RawPointer(address);
        int previous = enter(device);
        try {
            check(run(() -> JCuda.cudaPointerGetAttributes(attributes, p)), "cudaPointerGetAttributes", null, 0);
        } finally {
            leave(previous, device);
        }
        return switch (attributes.type) {   // JCuda 12 fills 'type' (memoryType is the deprecated pre-12 field)
            case 1 -> Side.PINNED;              // cudaMemoryTypeHost
            case 2, 3 -> Side.DEVICE;           // cudaMemoryTypeDevice, cudaMemoryTypeManaged
            default -> Side.PAGEABLE;           // cudaMemoryTypeUnregistered
        };
    }

    /**
     * Copies bytes and waits until they have arrived.
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
        RawPointer s = new RawPointer(source);
        RawPointer t = new RawPointer(target);
        int kind = memcpyKind(sourceSide, targetSide);
        int previous = enter(device);
        try {
            check(run(() -> JCuda.cudaMemcpy(t, s, byteSize, kind)), "cudaMemcpy", null, byteSize);
            if (returnsEarly(sourceSide, targetSide)) {
                check(run(() -> JCuda.cudaStreamSynchronize(JCuda.cudaStreamLegacy)), "cudaStreamSynchronize", null,
                        byteSize);
            }
        } finally {
            leave(previous, device);
        }
    }

    /**
     * Enqueues a copy on a stream ({@code cudaMemcpyAsync}).
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
        RawPointer s = new RawPointer(source);
        RawPointer t = new RawPointer(target);
        int kind = memcpyKind(sourceSide, targetSide);
        cudaStream_t st = Handles.stream(stream);
        int previous = enter(device);
        try {
            check(run(() -> JCuda.cudaMemcpyAsync(t, s, byteSize, kind, st)), "cudaMemcpyAsync", null, byteSize);
        } finally {
            leave(previous, device);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Streams and events

    /**
     * Creates a stream.
     *
     * @param device      its device
     * @param nonBlocking whether it skips the implicit synchronisation with the legacy default stream
     * @return the stream value
     */
    public static long createStream(int device, boolean nonBlocking) {
        cudaStream_t s = new cudaStream_t();
        int previous = enter(device);
        try {
            check(run(() -> JCuda.cudaStreamCreateWithFlags(s, nonBlocking ? STREAM_NON_BLOCKING : 0)),
                    "cudaStreamCreateWithFlags", null, 0);
            return Handles.value(s);
        } finally {
            leave(previous, device);
        }
    }

    /**
     * Destroys a stream made by {@link #createStream}.
     *
     * @param device its device
     * @param stream the stream value
     */
    public static void destroyStream(int device, long stream) {
        int previous = enter(device);
        try {
            check(run(() -> JCuda.cudaStreamDestroy(Handles.stream(stream))), "cudaStreamDestroy", null, 0);
        } finally {
            leave(previous, device);
        }
    }

    /**
     * Waits until a stream has done all its work.
     *
     * @param device the device whose legacy or per-thread stream 1 and 2 mean
     * @param stream the stream value
     */
    public static void synchronizeStream(int device, long stream) {
        int previous = enter(device);
        try {
            check(run(() -> JCuda.cudaStreamSynchronize(Handles.stream(stream))), "cudaStreamSynchronize", null, 0);
        } finally {
            leave(previous, device);
        }
    }

    /**
     * Whether a stream has done all its work ({@code cudaStreamQuery}).
     *
     * @param device the device
     * @param stream the stream value
     * @return true if idle
     */
    public static boolean streamIdle(int device, long stream) {
        int previous = enter(device);
        try {
            int rc = run(() -> JCuda.cudaStreamQuery(Handles.stream(stream)));
            if (rc == CudaErrors.NOT_READY) {
                clearLastError();
                return false;
            }
            check(rc, "cudaStreamQuery", null, 0);
            return true;
        } finally {
            leave(previous, device);
        }
    }

    /**
     * Creates an event without timing (the cheap kind used for ordering).
     *
     * @param device the device whose context it belongs to
     * @return the event value
     */
    public static long createEvent(int device) {
        cudaEvent_t e = new cudaEvent_t();
        int previous = enter(device);
        try {
            check(run(() -> JCuda.cudaEventCreateWithFlags(e, EVENT_DISABLE_TIMING)), "cudaEventCreateWithFlags",
                    null, 0);
            return Handles.value(e);
        } finally {
            leave(previous, device);
        }
    }

    /**
     * Records an event on a stream of the event's device.
     *
     * @param device the device of both
     * @param event  the event value
     * @param stream the stream value
     */
    public static void recordEvent(int device, long event, long stream) {
        int previous = enter(device);
        try {
            check(run(() -> JCuda.cudaEventRecord(Handles.event(event), Handles.stream(stream))), "cudaEventRecord",
                    null, 0);
        } finally {
            leave(previous, device);
        }
    }

    /**
     * Makes a stream wait for an event (without blocking the host).
     *
     * @param device the device current for the call (the one stream values 1 and 2 refer to)
     * @param stream the waiting stream
     * @param event  the event
     */
    public static void waitEvent(int device, long stream, long event) {
        int previous = enter(device);
        try {
            check(run(() -> JCuda.cudaStreamWaitEvent(Handles.stream(stream), Handles.event(event), 0)),
                    "cudaStreamWaitEvent", null, 0);
        } finally {
            leave(previous, device);
        }
    }

    /**
     * Blocks until an event has completed.
     *
     * @param device the event's device
     * @param event  the event
     */
    public static void synchronizeEvent(int device, long event) {
        int previous = enter(device);
        try {
            check(run(() -> JCuda.cudaEventSynchronize(Handles.event(event))), "cudaEventSynchronize", null, 0);
        } finally {
            leave(previous, device);
        }
    }

    /**
     * Destroys an event (its resources go once it has completed).
     *
     * @param device the event's device
     * @param event  the event
     */
    public static void destroyEvent(int device, long event) {
        int previous = enter(device);
        try {
            check(run(() -> JCuda.cudaEventDestroy(Handles.event(event))), "cudaEventDestroy", null, 0);
        } finally {
            leave(previous, device);
        }
    }

    /**
     * The primary context of a device ({@code cuCtxGetCurrent} while the runtime has it current).
     *
     * @param device the ordinal
     * @return the {@code CUcontext}, or 0 if the driver does not say
     */
    public static long primaryContext(int device) {
        int previous = enterWithContext(device);
        try {
            return CudaDriver.open().currentContext();
        } finally {
            leave(previous, device);
        }
    }
}
