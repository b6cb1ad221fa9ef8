package io.datamem.cuda.internal;

import jcuda.NativePointerObject;
import jcuda.runtime.cudaEvent_t;
import jcuda.runtime.cudaStream_t;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * JCuda's opaque handle objects ({@code cudaStream_t}, {@code cudaEvent_t}) to and from the plain
 * values C code exchanges (DLPack's {@code stream}, {@code device_info}'s stream). JCuda offers no
 * public way to make a {@code cudaStream_t} from a value, so the value is written into its
 * {@code nativePointer} field (JCuda's package is open: the class path's unnamed module, or an
 * automatic module). Internal.
 */
final class Handles {

    private static final VarHandle NATIVE_POINTER = nativePointer();

    private Handles() {
    }

    private static VarHandle nativePointer() {
        try {
            return MethodHandles.privateLookupIn(NativePointerObject.class, MethodHandles.lookup())
                    .findVarHandle(NativePointerObject.class, "nativePointer", long.class);
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException("cannot reach JCuda's NativePointerObject.nativePointer (is the jcuda"
                    + " module open? it is on the class path and as an automatic module): " + e, e);
        }
    }

    /**
     * A stream object for a stream value.
     *
     * @param handle a {@code cudaStream_t} value: 0 (the default stream), 1 ({@code cudaStreamLegacy}),
     *               2 ({@code cudaStreamPerThread}) or a stream's address
     * @return the object
     */
    static cudaStream_t stream(long handle) {
        cudaStream_t s = new cudaStream_t();
        NATIVE_POINTER.set((NativePointerObject) s, handle);
        return s;
    }

    /**
     * The value of a JCuda handle object.
     *
     * @param object a stream or an event
     * @return its native value
     */
    static long value(NativePointerObject object) {
        return (long) NATIVE_POINTER.get(object);
    }

    /**
     * An event object for an event value.
     *
     * @param handle a {@code cudaEvent_t} value
     * @return the object
     */
    static cudaEvent_t event(long handle) {
        cudaEvent_t e = new cudaEvent_t();
        NATIVE_POINTER.set((NativePointerObject) e, handle);
        return e;
    }
}
