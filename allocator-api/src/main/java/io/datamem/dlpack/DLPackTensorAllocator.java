package io.datamem.dlpack;

import io.datamem.AllocationException;
import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.Device;
import io.datamem.DeviceType;
import io.datamem.array.DType;
import io.datamem.array.NDArray;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Arrays;
import java.util.Objects;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * The producer side of DLPack's C exchange API: a {@code DLPackManagedTensorAllocator} (DLPack
 * 1.2) that allocates through a datamem handler.
 *
 * <pre>{@code
 * typedef int (*DLPackManagedTensorAllocator)(
 *     DLTensor* prototype, DLManagedTensorVersioned** out, void* error_ctx,
 *     void (*SetError)(void* error_ctx, const char* kind, const char* message));
 * }</pre>
 *
 * <p>Native code calls {@link #function()} with a prototype {@code DLTensor}, of which only
 * {@code dtype}, {@code ndim}, {@code shape} and {@code device} are read, and gets a new
 * C-contiguous {@code DLManagedTensorVersioned} (version {@link DLPackVersion#CURRENT}, strides
 * set) of that dtype and shape, allocated (uninitialised) by the handler; its deleter frees the
 * memory through the handler, from any thread, exactly once. It returns 0 and stores the tensor in
 * {@code *out}; on failure it stores NULL, calls {@code SetError} exactly once and returns -1:
 * {@code ValueError} for a prototype it cannot serve (a device other than the handler's, a dtype
 * datamem does not know, a bad ndim or shape), {@code MemoryError} when the handler refuses the
 * allocation, {@code RuntimeError} for anything else. No Java exception ever reaches the native
 * caller. A float6 or float4 prototype gets a padded tensor (one element per byte), flagged
 * {@link DLPack#FLAG_IS_SUBBYTE_TYPE_PADDED}.
 *
 * <p>The function pointer is an FFM upcall stub that lives as long as the JVM, as datamem's other
 * upcalls do: native code may keep the pointer where Java cannot see it, and a late call must not
 * jump to freed code. {@link #close()} ends service, not validity: a call after it allocates
 * nothing and fails with {@code RuntimeError}. Each allocator costs one stub for the life of the
 * process, so make one per handler, not one per call. Tensors allocated before the close stay
 * valid: their deleter does not depend on this object. Thread-safe.
 */
public final class DLPackTensorAllocator implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger("io.datamem.dlpack.DLPack");
    private static final MethodHandle ALLOCATE;
    private static final MethodHandle SET_ERROR =
            Linker.nativeLinker().downcallHandle(FunctionDescriptor.ofVoid(ADDRESS, ADDRESS, ADDRESS));

    static {
        try {
            ALLOCATE = MethodHandles.lookup().findVirtual(DLPackTensorAllocator.class, "allocate",
                    MethodType.methodType(int.class, MemorySegment.class, MemorySegment.class, MemorySegment.class,
                            MemorySegment.class));
        } catch (NoSuchMethodException | IllegalAccessException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final DataMemHandler handler;
    private final MemorySegment function;
    private volatile boolean closed;

    DLPackTensorAllocator(DataMemHandler handler) {
        this.handler = Objects.requireNonNull(handler, "handler");
        this.function = Linker.nativeLinker().upcallStub(ALLOCATE.bindTo(this),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS), Arena.global());
    }

    /**
     * The {@code DLPackManagedTensorAllocator} function pointer.
     *
     * @return a native function pointer, callable for the life of the JVM
     * @throws IllegalStateException if this allocator is closed
     */
    public MemorySegment function() {
        if (closed) {
            throw new IllegalStateException("DLPackTensorAllocator of handler '" + handler.name() + "' is closed");
        }
        return function;
    }

    /**
     * Ends service: later calls of the function allocate nothing and report {@code RuntimeError}.
     * Tensors it allocated stay valid until their deleters run. Idempotent.
     */
    @Override
    public void close() {
        closed = true;
    }

    /** A refusal with its {@code SetError} kind. */
    private static final class Refusal extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final String kind;

        Refusal(String kind, String message) {
            super(message, null, false, false);
            this.kind = kind;
        }
    }

    /** The upcall. Nothing may escape it: an exception crossing into native code ends the JVM. */
    private int allocate(MemorySegment prototype, MemorySegment out, MemorySegment errorCtx, MemorySegment setError) {
        try {
            if (out.address() == 0) {
                throw new Refusal("ValueError", "out is NULL");
            }
            MemorySegment slot = out.reinterpret(ADDRESS.byteSize());
            slot.set(ADDRESS, 0, MemorySegment.NULL);
            if (closed) {
                throw new Refusal("RuntimeError", "the DLPackManagedTensorAllocator of datamem handler '"
                        + handler.name() + "' is closed");
            }
            MemorySegment tensor = allocate(prototype);
            slot.set(ADDRESS, 0, tensor);
            return 0;
        } catch (Refusal r) {
            return fail(errorCtx, setError, r.kind, r.getMessage());
        } catch (AllocationException | OutOfMemoryError e) {
            return fail(errorCtx, setError, "MemoryError", "datamem handler '" + handler.name() + "': " + e.getMessage());
        } catch (Throwable t) {
            return fail(errorCtx, setError, "RuntimeError", "datamem handler '" + handler.name() + "': " + t);
        }
    }

    private MemorySegment allocate(MemorySegment prototype) {
        if (prototype.address() == 0) {
            throw new Refusal("ValueError", "prototype is NULL");
        }
        MemorySegment p = prototype.reinterpret(DLPack.DL_TENSOR.byteSize());
        int deviceType = p.get(JAVA_INT, 8);
        int deviceId = p.get(JAVA_INT, 12);
        int ndim = p.get(JAVA_INT, 16);
        int code = p.get(JAVA_BYTE, 20) & 0xFF;
        int bits = p.get(JAVA_BYTE, 21) & 0xFF;
        int lanes = p.get(JAVA_SHORT, 22) & 0xFFFF;
        long shapePtr = p.get(JAVA_LONG, 24);
        Device device;
        try {
            device = new Device(DeviceType.ofCode(deviceType), deviceId);
        } catch (IllegalArgumentException e) {
            throw new Refusal("ValueError", "prototype device (" + deviceType + ", " + deviceId + ") is not a DLPack "
                    + DLPackVersion.CURRENT + " device");
        }
        Device served = handler.traits().device();
        if (!device.equals(served)) {
            throw new Refusal("ValueError", "prototype device " + device + ": datamem handler '" + handler.name()
                    + "' allocates on " + served);
        }
        if (ndim < 0 || ndim > NDArray.MAX_NDIM) {
            throw new Refusal("ValueError", "prototype ndim " + ndim + " (expected: 0.." + NDArray.MAX_NDIM + ")");
        }
        if (shapePtr == 0 && ndim > 0) {
            throw new Refusal("ValueError", "prototype shape is NULL for ndim " + ndim);
        }
        long[] shape = ndim == 0 ? new long[0]
                : MemorySegment.ofAddress(shapePtr).reinterpret(8L * ndim).toArray(JAVA_LONG);
        for (long d : shape) {
            if (d < 0) {
                throw new Refusal("ValueError", "prototype shape " + Arrays.toString(shape) + " has a negative"
                        + " dimension");
            }
        }
        DType dtype = DLPack.lookupDtype(code, bits, lanes).orElseThrow(() -> new Refusal("ValueError",
                "prototype dtype (code " + code + ", bits " + bits + ", lanes " + lanes + ") is not a datamem dtype"));
        NDArray array;
        try {
            array = DataMem.callWith(handler, () -> NDArray.empty(dtype, shape));
        } catch (IllegalArgumentException e) {
            throw new Refusal("ValueError", "prototype shape " + Arrays.toString(shape) + " of " + dtype + ": "
                    + e.getMessage());
        }
        try {
            io.datamem.internal.ArrayInternals.nativeOnly(array);   // a close from any thread frees at once
            Device exported = DLPack.dlpackDevice(array);
            long flags = DLPack.isPaddedSubByte(dtype) ? DLPack.FLAG_IS_SUBBYTE_TYPE_PADDED : 0;
            return DLPackTensorWriter.write(array, array.address(), exported, DLPackVersion.CURRENT, true, flags, null, array,
                    array.shape(), array.strides());
        } catch (RuntimeException | Error e) {
            array.close();
            throw e;
        }
    }

    private int fail(MemorySegment errorCtx, MemorySegment setError, String kind, String message) {
        try {
            if (setError.address() == 0) {
                LOG.log(System.Logger.Level.WARNING, "datamem: DLPackManagedTensorAllocator failed, and SetError is"
                        + " NULL: " + kind + ": " + message);
                return -1;
            }
            try (Arena strings = Arena.ofConfined()) {
                SET_ERROR.invokeExact(setError, errorCtx, strings.allocateFrom(kind), strings.allocateFrom(message));
            }
        } catch (Throwable t) {
            try {
                LOG.log(System.Logger.Level.ERROR, "datamem: DLPackManagedTensorAllocator could not report "
                        + kind + ": " + message, t);
            } catch (Throwable ignored) {
                // Nothing can be done: never let anything reach the native caller.
            }
        }
        return -1;
    }
}
