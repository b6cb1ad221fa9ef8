package io.datamem.cuda;

import io.datamem.buffer.BufferView;
import io.datamem.cuda.internal.CudaRuntime;
import io.datamem.cuda.internal.StreamRecords;

import java.util.ArrayList;
import java.util.List;

/**
 * A CUDA stream: a queue of device work that runs in order, asynchronously to the host.
 *
 * <p>{@link #create} and {@link #createNonBlocking} make a stream this object owns
 * ({@link #close()} destroys it); {@link #legacy}, {@link #perThread} and {@link #wrap} name streams
 * it does not own (the legacy default stream, the per-thread default stream, a stream another
 * library made). Handles are the values C code and DLPack exchange: 1 is
 * {@code cudaStreamLegacy}, 2 {@code cudaStreamPerThread}, anything else a {@code cudaStream_t}.
 *
 * <p>Arrays given to {@link CudaMemory#copyAsync(io.datamem.array.NDArray, io.datamem.array.NDArray, CudaStream)}
 * are held by the stream (they cannot be closed or resized) until {@link #synchronize()} or
 * {@link #close()} has waited for the work: closing an array a copy still reads is an
 * {@link IllegalStateException}, never a use of freed memory. Thread-safe.
 */
public final class CudaStream implements AutoCloseable {

    /** The value of {@code cudaStreamLegacy}, the legacy default stream. */
    public static final long LEGACY = CudaRuntime.STREAM_LEGACY;
    /** The value of {@code cudaStreamPerThread}, the calling thread's default stream. */
    public static final long PER_THREAD = CudaRuntime.STREAM_PER_THREAD;

    private final int device;
    private final long handle;
    private final boolean owned;
    private final List<BufferView> held = new ArrayList<>();   // guarded by this
    private boolean closed;                                     // guarded by this

    private CudaStream(int device, long handle, boolean owned) {
        this.device = device;
        this.handle = handle;
        this.owned = owned;
    }

    private static int checkOrdinal(int device) {
        if (device < 0) {
            throw new IllegalArgumentException("device: " + device + " (expected: a CUDA device ordinal >= 0)");
        }
        return device;
    }

    /**
     * Creates a stream on a device that synchronises with the legacy default stream
     * ({@code cuStreamCreate(CU_STREAM_DEFAULT)}).
     *
     * @param device the device ordinal
     * @return the stream, owned: close it
     * @throws IllegalArgumentException      if {@code device} is negative or no such device exists
     * @throws IllegalStateException         if CUDA is unavailable here (the message says why)
     * @throws io.datamem.BackendException   if the runtime fails
     */
    public static CudaStream create(int device) {
        CudaRuntime.checkDevice(device);
        return new CudaStream(device, CudaRuntime.createStream(device, false), true);
    }

    /**
     * Creates a stream on a device that does not synchronise with the legacy default stream
     * ({@code CU_STREAM_NON_BLOCKING}).
     *
     * @param device the device ordinal
     * @return the stream, owned: close it
     * @throws IllegalArgumentException      if {@code device} is negative or no such device exists
     * @throws IllegalStateException         if CUDA is unavailable here (the message says why)
     * @throws io.datamem.BackendException   if the runtime fails
     */
    public static CudaStream createNonBlocking(int device) {
        CudaRuntime.checkDevice(device);
        return new CudaStream(device, CudaRuntime.createStream(device, true), true);
    }

    /**
     * The legacy default stream of a device (handle 1). Makes no CUDA call.
     *
     * @param device the device ordinal
     * @return the stream, not owned
     * @throws IllegalArgumentException if {@code device} is negative
     */
    public static CudaStream legacy(int device) {
        return new CudaStream(checkOrdinal(device), LEGACY, false);
    }

    /**
     * The per-thread default stream of a device (handle 2): a different stream on every host
     * thread. Makes no CUDA call.
     *
     * @param device the device ordinal
     * @return the stream, not owned
     * @throws IllegalArgumentException if {@code device} is negative
     */
    public static CudaStream perThread(int device) {
        return new CudaStream(checkOrdinal(device), PER_THREAD, false);
    }

    /**
     * A stream made elsewhere (another library's {@code cudaStream_t}, a DLPack consumer's
     * stream). Makes no CUDA call; {@link #close()} does not destroy it.
     *
     * @param handle the {@code cudaStream_t} value, or 1 or 2 for the default streams
     * @param device the ordinal of the device it belongs to
     * @return the stream, not owned
     * @throws IllegalArgumentException if {@code handle} is 0 (ambiguous: use {@link #legacy} or
     *                                  {@link #perThread}) or negative, or {@code device} is negative
     */
    public static CudaStream wrap(long handle, int device) {
        if (handle == 0) {
            throw new IllegalArgumentException("handle: 0 (expected: a cudaStream_t, 1 for the legacy default stream"
                    + " or 2 for the per-thread default stream; 0 means either, depending on how code was compiled)");
        }
        if (handle < 0) {
            throw new IllegalArgumentException("handle: " + handle + " (expected: a cudaStream_t value > 0)");
        }
        return new CudaStream(checkOrdinal(device), handle, false);
    }

    /**
     * The stream's value.
     *
     * @return the {@code cudaStream_t}, 1 or 2
     */
    public long handle() {
        return handle;
    }

    /**
     * The device the stream belongs to.
     *
     * @return the ordinal
     */
    public int device() {
        return device;
    }

    /**
     * Whether this object created the stream and {@link #close()} destroys it.
     *
     * @return true for streams from {@link #create} and {@link #createNonBlocking}
     */
    public boolean owned() {
        return owned;
    }

    /**
     * Whether the stream is closed.
     *
     * @return true after {@link #close()}
     */
    public synchronized boolean isClosed() {
        return closed;
    }

    /**
     * Holds a buffer view until the stream's work enqueued so far is done.
     *
     * @param view the view to release after the next synchronisation
     * @throws IllegalStateException if the stream is closed
     */
    synchronized void hold(BufferView view) {
        checkOpen();
        held.add(view);
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException(this + " is closed");
        }
    }

    /**
     * Throws if the stream is closed.
     *
     * @throws IllegalStateException if it is
     */
    synchronized void ensureOpen() {
        checkOpen();
    }

    /**
     * Waits until all work enqueued on the stream is done ({@code cuStreamSynchronize}), then
     * releases the arrays held by copies enqueued before the call.
     *
     * @throws IllegalStateException       if the stream is closed, or CUDA is unavailable
     * @throws io.datamem.BackendException if the runtime fails (the arrays stay held)
     */
    public void synchronize() {
        List<BufferView> release;
        synchronized (this) {
            checkOpen();
            release = List.copyOf(held);
        }
        CudaRuntime.require();
        CudaRuntime.synchronizeStream(device, handle);
        releaseHeld(release);
    }

    private void releaseHeld(List<BufferView> release) {
        synchronized (this) {
            held.removeAll(release);
        }
        for (BufferView v : release) {
            v.release();
        }
    }

    /**
     * Whether all work enqueued on the stream is done ({@code cuStreamQuery}). Releases nothing.
     *
     * @return true if the stream is idle
     * @throws IllegalStateException       if the stream is closed, or CUDA is unavailable
     * @throws io.datamem.BackendException if the runtime fails
     */
    public boolean isIdle() {
        ensureOpen();
        CudaRuntime.require();
        return CudaRuntime.streamIdle(device, handle);
    }

    /**
     * Waits for the stream's work, releases the arrays it held, and destroys the stream if this
     * object owns it. Idempotent.
     *
     * @throws io.datamem.BackendException if the runtime fails
     */
    @Override
    public void close() {
        List<BufferView> release;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            release = List.copyOf(held);
        }
        if (owned || !release.isEmpty()) {
            CudaRuntime.synchronizeStream(device, handle);
        }
        releaseHeld(release);
        if (owned) {
            StreamRecords.global().streamDestroyed(handle);
            CudaRuntime.destroyStream(device, handle);
        }
    }

    @Override
    public String toString() {
        String what = handle == LEGACY ? "legacy default" : handle == PER_THREAD ? "per-thread default"
                : "0x" + Long.toHexString(handle);
        return "CudaStream[" + what + " on cuda:" + device + (owned ? "" : ", not owned") + "]";
    }
}
