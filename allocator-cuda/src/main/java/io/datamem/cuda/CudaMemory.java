package io.datamem.cuda;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.DeviceType;
import io.datamem.MemoryTraits;
import io.datamem.array.NDArray;
import io.datamem.buffer.BufferFlags;
import io.datamem.buffer.BufferView;
import io.datamem.cuda.internal.CudaRuntime;
import io.datamem.cuda.internal.StreamRecords;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Objects;

/**
 * Copies between host memory and CUDA memory (device, pinned, managed, registered), synchronous
 * and on a {@link CudaStream}: how arrays on device memory, which have no host view, are filled and
 * read.
 *
 * <pre>{@code
 * NDArray host = NDArray.zeros(DType.FLOAT32, 1024, 1024);
 * NDArray dev = CudaMemory.copyTo(host, DataMem.handler("cuda:device=0"));   // host -> device
 * NDArray back = CudaMemory.toHost(dev);                                      // device -> host
 * try (CudaStream s = CudaStream.create(0)) {
 *     CudaMemory.copyAsync(host, dev, s);   // both arrays held until s.synchronize() or s.close()
 * }
 * }</pre>
 *
 * <p>Array copies need two open, C-contiguous arrays of the same dtype and shape, the target
 * writable; each side is host memory or CUDA memory (traits on {@code CPU}, {@code CUDA},
 * {@code CUDA_HOST} or {@code CUDA_MANAGED}). Copies use {@code cuMemcpy(Async)}, which infers
 * the direction from the addresses; whether a synchronous copy must also wait for the stream
 * follows from the arrays' traits (raw copies ask {@code cuPointerGetAttributes}). Synchronous
 * copies return when the data is in place. Asynchronous copies are ordered after earlier datamem work on the same
 * arrays (on any stream), are recorded for DLPack exports (which then order consumers after them),
 * and hold both arrays until the stream is synchronised; from pageable host memory they run at
 * pageable speed and return after staging. Caller mistakes are {@link IllegalArgumentException}s
 * thrown before any CUDA call. Thread-safe.
 */
public final class CudaMemory {

    private CudaMemory() {
    }

    // ---------------------------------------------------------------------------------------------
    // Arrays

    /**
     * Copies an array's elements into another array and waits until they are there.
     *
     * @param source the array read
     * @param target the array written
     * @throws NullPointerException          if an argument is null
     * @throws IllegalStateException         if an array is closed, or CUDA is unavailable here
     * @throws IllegalArgumentException      if the dtypes or shapes differ, an array is not
     *                                       C-contiguous, or its memory is neither host nor CUDA memory
     * @throws UnsupportedOperationException if {@code target} is read-only
     * @throws io.datamem.BackendException   if the runtime fails
     */
    public static void copy(NDArray source, NDArray target) {
        checkPair(source, target);
        CudaRuntime.require();
        BufferView s = source.getBuffer(BufferFlags.STRIDES | BufferFlags.DEVICE);
        try (s; BufferView t = target.getBuffer(BufferFlags.STRIDED | BufferFlags.DEVICE)) {
            long bytes = source.byteSize();
            awaitRecorded(source);
            awaitRecorded(target);
            CudaRuntime.copy(deviceFor(source.traits(), target.traits()), s.address(), side(source.traits()),
                    t.address(), side(target.traits()), bytes);
        }
    }

    /**
     * Enqueues a copy of an array's elements into another array on a stream. The copy starts after
     * earlier datamem work on either array; both arrays stay held (they cannot be closed or
     * resized) until {@link CudaStream#synchronize()} or {@link CudaStream#close()}.
     *
     * @param source the array read
     * @param target the array written
     * @param stream the stream
     * @throws NullPointerException          if an argument is null
     * @throws IllegalStateException         if an array or the stream is closed, or CUDA is unavailable
     * @throws IllegalArgumentException      if the dtypes or shapes differ, an array is not
     *                                       C-contiguous, or its memory is neither host nor CUDA memory
     * @throws UnsupportedOperationException if {@code target} is read-only
     * @throws io.datamem.BackendException   if the runtime fails
     */
    public static void copyAsync(NDArray source, NDArray target, CudaStream stream) {
        Objects.requireNonNull(stream, "stream");
        checkPair(source, target);
        stream.ensureOpen();
        CudaRuntime.require();
        BufferView s = source.getBuffer(BufferFlags.STRIDES | BufferFlags.DEVICE);
        BufferView t;
        try {
            t = target.getBuffer(BufferFlags.STRIDED | BufferFlags.DEVICE);
        } catch (RuntimeException | Error e) {
            s.release();
            throw e;
        }
        try {
            int device = stream.device();
            long h = stream.handle();
            orderBefore(source, device, h);
            orderBefore(target, device, h);
            CudaRuntime.copyAsync(device, s.address(), side(source.traits()), t.address(), side(target.traits()),
                    source.byteSize(), h);
            recordAfter(source, device, h);
            recordAfter(target, device, h);
            stream.hold(s);
            stream.hold(t);
        } catch (RuntimeException | Error e) {
            s.release();
            t.release();
            throw e;
        }
    }

    /**
     * A copy of an array in host memory, allocated through {@link DataMem#current()}.
     *
     * @param source the array, on any host or CUDA memory
     * @return a new C-contiguous host array with the same dtype, shape and elements
     * @throws NullPointerException        if {@code source} is null
     * @throws IllegalStateException       if the array is closed, or CUDA is unavailable here
     * @throws IllegalArgumentException    if the array is not C-contiguous or not on host or CUDA
     *                                     memory, or the current handler's memory is not
     *                                     host-accessible
     * @throws io.datamem.AllocationException if the copy cannot be allocated
     * @throws io.datamem.BackendException if the runtime fails
     */
    public static NDArray toHost(NDArray source) {
        DataMemHandler current = DataMem.current();
        if (!current.traits().hostAccessible()) {
            throw new IllegalArgumentException("the current handler '" + current.name() + "' allocates "
                    + current.traits().kind() + " memory on " + current.traits().device() + " (expected: a host"
                    + " handler for a host copy; bind one with DataMem.callWith)");
        }
        return copyTo(source, current);
    }

    /**
     * A copy of an array in the memory of a handler: host to device with a CUDA handler
     * ({@code cuda:device=0}), device to host with a host one, device to device.
     *
     * @param source  the array, on any host or CUDA memory
     * @param handler the handler that allocates the copy (and frees it when it is closed)
     * @return a new C-contiguous array with the same dtype, shape and elements
     * @throws NullPointerException        if an argument is null
     * @throws IllegalStateException       if the array is closed, or CUDA is unavailable here
     * @throws IllegalArgumentException    if the array is not C-contiguous, or either memory is
     *                                     neither host nor CUDA memory
     * @throws io.datamem.AllocationException if the copy cannot be allocated
     * @throws io.datamem.BackendException if the runtime fails
     */
    public static NDArray copyTo(NDArray source, DataMemHandler handler) {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(handler, "handler");
        checkContiguous(source, "source");
        checkCudaOrHost(source.traits(), "source");
        checkCudaOrHost(handler.traits(), "handler '" + handler.name() + "'");
        CudaRuntime.require();
        NDArray copy = DataMem.callWith(handler, () -> NDArray.empty(source.dtype(), source.shape()));
        try {
            copy(source, copy);
            return copy;
        } catch (RuntimeException | Error e) {
            copy.close();
            throw e;
        }
    }

    /**
     * Declares that work on an array's data was enqueued on a stream (by a kernel or a library
     * datamem does not see), so that datamem orders its later copies and DLPack consumers after
     * it, and reports the stream in the buffer's {@code device_info}. Records an event on the
     * stream now.
     *
     * @param array  an array on CUDA memory
     * @param stream the stream the work is on
     * @throws NullPointerException        if an argument is null
     * @throws IllegalStateException       if the array or the stream is closed, or CUDA is unavailable
     * @throws IllegalArgumentException    if the array is not on CUDA memory
     * @throws io.datamem.BackendException if the runtime fails
     */
    public static void recordStream(NDArray array, CudaStream stream) {
        Objects.requireNonNull(array, "array");
        Objects.requireNonNull(stream, "stream");
        if (!isCuda(array.traits())) {
            throw new IllegalArgumentException("array: " + array + " is " + array.traits().kind() + " memory on "
                    + array.traits().device() + " (expected: CUDA memory)");
        }
        stream.ensureOpen();
        CudaRuntime.require();
        recordAfter(array, stream.device(), stream.handle());
    }

    // ---------------------------------------------------------------------------------------------
    // Raw memory

    /**
     * Copies bytes between host or CUDA addresses and waits until they are there.
     *
     * @param source   the first byte read (native memory: host, pinned, managed or device)
     * @param target   the first byte written
     * @param byteSize the number of bytes
     * @throws NullPointerException        if an argument is null
     * @throws IllegalArgumentException    if {@code byteSize} is negative, or a segment is a heap
     *                                     segment
     * @throws IllegalStateException       if CUDA is unavailable here
     * @throws io.datamem.BackendException if the runtime fails (for example for an address CUDA
     *                                     does not know that is not host memory either)
     */
    public static void copy(MemorySegment source, MemorySegment target, long byteSize) {
        checkRaw(source, target, byteSize);
        CudaRuntime.require();
        CudaRuntime.copy(0, source.address(), CudaRuntime.sideOf(0, source.address()), target.address(),
                CudaRuntime.sideOf(0, target.address()), byteSize);
    }

    /**
     * Enqueues a copy of bytes between host or CUDA addresses on a stream. Nothing is held: the
     * caller keeps both ranges valid until the stream is synchronised.
     *
     * @param source   the first byte read
     * @param target   the first byte written
     * @param byteSize the number of bytes
     * @param stream   the stream
     * @throws NullPointerException        if an argument is null
     * @throws IllegalArgumentException    if {@code byteSize} is negative, or a segment is a heap
     *                                     segment
     * @throws IllegalStateException       if the stream is closed, or CUDA is unavailable here
     * @throws io.datamem.BackendException if the runtime fails
     */
    public static void copyAsync(MemorySegment source, MemorySegment target, long byteSize, CudaStream stream) {
        Objects.requireNonNull(stream, "stream");
        checkRaw(source, target, byteSize);
        stream.ensureOpen();
        CudaRuntime.require();
        int device = stream.device();
        CudaRuntime.copyAsync(device, source.address(), CudaRuntime.sideOf(device, source.address()),
                target.address(), CudaRuntime.sideOf(device, target.address()), byteSize, stream.handle());
    }

    // ---------------------------------------------------------------------------------------------

    /**
     * Whether traits describe CUDA memory (device, pinned or registered, managed).
     *
     * @param traits the traits
     * @return true for the device types {@code CUDA}, {@code CUDA_HOST}, {@code CUDA_MANAGED}
     * @throws NullPointerException if {@code traits} is null
     */
    public static boolean isCuda(MemoryTraits traits) {
        DeviceType t = traits.device().type();
        return t == DeviceType.CUDA || t == DeviceType.CUDA_HOST || t == DeviceType.CUDA_MANAGED;
    }

    private static void checkPair(NDArray source, NDArray target) {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(target, "target");
        source.address();   // throws if closed
        target.address();
        if (!source.dtype().equals(target.dtype()) || !Arrays.equals(source.shape(), target.shape())) {
            throw new IllegalArgumentException("copy from " + source + " to " + target + " (expected: the same dtype"
                    + " and shape)");
        }
        checkContiguous(source, "source");
        checkContiguous(target, "target");
        checkCudaOrHost(source.traits(), "source " + source);
        checkCudaOrHost(target.traits(), "target " + target);
        if (target.isReadOnly()) {
            throw new UnsupportedOperationException("target: " + target + " is read-only");
        }
        if (source.traits().hostAccessible() && source.traits().device().type() == DeviceType.CPU
                && !source.segment().isNative()) {
            throw new IllegalArgumentException("source: " + source + " is on the Java heap (expected: native memory)");
        }
        if (target.traits().hostAccessible() && target.traits().device().type() == DeviceType.CPU
                && !target.segment().isNative()) {
            throw new IllegalArgumentException("target: " + target + " is on the Java heap (expected: native memory)");
        }
    }

    private static void checkContiguous(NDArray array, String name) {
        if (!array.isCContiguous()) {
            throw new IllegalArgumentException(name + ": " + array + " is not C-contiguous (shape "
                    + Arrays.toString(array.shape()) + ", strides " + Arrays.toString(array.strides())
                    + "; expected: a C-contiguous array: copy a view on the host first)");
        }
    }

    private static void checkCudaOrHost(MemoryTraits traits, String what) {
        if (traits.device().type() != DeviceType.CPU && !isCuda(traits)) {
            throw new IllegalArgumentException(what + ": " + traits.kind() + " memory on " + traits.device()
                    + " (expected: host memory or CUDA memory)");
        }
    }

    private static void checkRaw(MemorySegment source, MemorySegment target, long byteSize) {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(target, "target");
        if (byteSize < 0) {
            throw new IllegalArgumentException("byteSize: " + byteSize + " (expected: >= 0)");
        }
        if (!source.isNative()) {
            throw new IllegalArgumentException("source: a heap segment (expected: native memory)");
        }
        if (!target.isNative()) {
            throw new IllegalArgumentException("target: a heap segment (expected: native memory)");
        }
    }

    /** The device to run a copy on: the CUDA side's, preferring device and managed memory. */
    private static int deviceFor(MemoryTraits source, MemoryTraits target) {
        for (MemoryTraits t : new MemoryTraits[] {target, source}) {
            if (!t.hostAccessible() || t.device().type() == DeviceType.CUDA_MANAGED) {
                return t.device().id();
            }
        }
        for (MemoryTraits t : new MemoryTraits[] {target, source}) {
            if (isCuda(t)) {
                return t.device().id();
            }
        }
        return 0;
    }

    /** Where an array's memory is for CUDA's copy functions, from its traits. */
    private static CudaRuntime.Side side(MemoryTraits traits) {
        if (!traits.hostAccessible() || traits.device().type() == DeviceType.CUDA_MANAGED) {
            return CudaRuntime.Side.DEVICE;
        }
        return traits.kind() == io.datamem.MemoryKind.HOST_PINNED ? CudaRuntime.Side.PINNED
                : CudaRuntime.Side.PAGEABLE;
    }

    private static long block(NDArray array) {
        return array.address() - array.byteOffset();
    }

    private static void awaitRecorded(NDArray array) {
        if (isCuda(array.traits())) {
            StreamRecords.global().awaitAndClear(block(array));
        }
    }

    private static void orderBefore(NDArray array, int device, long stream) {
        if (isCuda(array.traits())) {
            StreamRecords.global().orderBefore(block(array), device, stream);
        }
    }

    private static void recordAfter(NDArray array, int device, long stream) {
        if (isCuda(array.traits())) {
            StreamRecords.global().recordAfter(block(array), device, stream);
        }
    }
}
