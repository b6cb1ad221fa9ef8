package io.datamem.cuda.internal;

import io.datamem.internal.Libc;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Downcalls to the CUDA driver API ({@code libcuda.so.1}) through FFM: one method per function,
 * returning its {@code CUresult} unchanged. The signatures are in {@link DriverSymbols}. Handle
 * values ({@code CUcontext}, {@code CUstream}, {@code CUevent}) travel as {@code long}s, device
 * pointers ({@code CUdeviceptr}) and host pointers as {@code long} addresses; out-parameters are
 * segments the caller allocates. Internal.
 *
 * <p>The class opens the library when it is initialised, which {@link CudaRuntime} lets happen only
 * once {@link CudaDriver#probe()} found a working driver: without one, nothing here runs.
 */
final class DriverCalls {

    private static final List<String> MISSING = new ArrayList<>();
    private static final boolean LOADED;
    private static final SymbolLookup LOOKUP;

    static {
        CudaDriver.bindingsInitialised = true;
        Optional<SymbolLookup> lookup;
        try {
            lookup = Optional.of(SymbolLookup.libraryLookup(CudaDriver.LIBRARY, Arena.global()));
        } catch (IllegalArgumentException e) {
            lookup = Optional.empty();
        }
        LOADED = lookup.isPresent();
        LOOKUP = lookup.orElse(name -> Optional.empty());
    }

    private static final MethodHandle CU_CTX_GET_CURRENT = bind("cuCtxGetCurrent");
    private static final MethodHandle CU_CTX_SET_CURRENT = bind("cuCtxSetCurrent");
    private static final MethodHandle CU_CTX_PUSH_CURRENT = bind("cuCtxPushCurrent_v2");
    private static final MethodHandle CU_CTX_POP_CURRENT = bind("cuCtxPopCurrent_v2");
    private static final MethodHandle CU_DEVICE_GET = bind("cuDeviceGet");
    private static final MethodHandle CU_DEVICE_PRIMARY_CTX_RETAIN = bind("cuDevicePrimaryCtxRetain");
    private static final MethodHandle CU_MEM_HOST_ALLOC = bind("cuMemHostAlloc");
    private static final MethodHandle CU_MEM_FREE_HOST = bind("cuMemFreeHost");
    private static final MethodHandle CU_MEM_ALLOC = bind("cuMemAlloc_v2");
    private static final MethodHandle CU_MEM_ALLOC_MANAGED = bind("cuMemAllocManaged");
    private static final MethodHandle CU_MEM_FREE = bind("cuMemFree_v2");
    private static final MethodHandle CU_MEM_HOST_REGISTER = bind("cuMemHostRegister_v2");
    private static final MethodHandle CU_MEM_HOST_UNREGISTER = bind("cuMemHostUnregister");
    private static final MethodHandle CU_MEMSET_D8 = bind("cuMemsetD8_v2");
    private static final MethodHandle CU_MEMCPY = bind("cuMemcpy");
    private static final MethodHandle CU_MEMCPY_ASYNC = bind("cuMemcpyAsync");
    private static final MethodHandle CU_POINTER_GET_ATTRIBUTES = bind("cuPointerGetAttributes");
    private static final MethodHandle CU_MEM_GET_ADDRESS_RANGE = bind("cuMemGetAddressRange_v2");
    private static final MethodHandle CU_IPC_GET_MEM_HANDLE = bind("cuIpcGetMemHandle");
    private static final MethodHandle CU_IPC_OPEN_MEM_HANDLE = bind("cuIpcOpenMemHandle_v2");
    private static final MethodHandle CU_IPC_CLOSE_MEM_HANDLE = bind("cuIpcCloseMemHandle");
    private static final MethodHandle CU_STREAM_CREATE = bind("cuStreamCreate");
    private static final MethodHandle CU_STREAM_DESTROY = bind("cuStreamDestroy_v2");
    private static final MethodHandle CU_STREAM_QUERY = bind("cuStreamQuery");
    private static final MethodHandle CU_STREAM_SYNCHRONIZE = bind("cuStreamSynchronize");
    private static final MethodHandle CU_STREAM_WAIT_EVENT = bind("cuStreamWaitEvent");
    private static final MethodHandle CU_EVENT_CREATE = bind("cuEventCreate");
    private static final MethodHandle CU_EVENT_RECORD = bind("cuEventRecord");
    private static final MethodHandle CU_EVENT_SYNCHRONIZE = bind("cuEventSynchronize");
    private static final MethodHandle CU_EVENT_DESTROY = bind("cuEventDestroy_v2");
    private static final MethodHandle CU_GET_ERROR_NAME = bind("cuGetErrorName");
    private static final MethodHandle CU_GET_ERROR_STRING = bind("cuGetErrorString");

    private DriverCalls() {
    }

    private static MethodHandle bind(String name) {
        return DriverSymbols.bind(LOOKUP, name, MISSING);
    }

    /**
     * Why the bindings cannot be used, or empty if every function was found.
     *
     * @return the reason
     */
    static Optional<String> unusable() {
        if (!LOADED) {
            return Optional.of(CudaDriver.LIBRARY + " cannot be opened");
        }
        return MISSING.isEmpty() ? Optional.empty() : Optional.of(DriverSymbols.message(List.copyOf(MISSING)));
    }

    private static MemorySegment ptr(long address) {
        return MemorySegment.ofAddress(address);
    }

    /**
     * {@code cuCtxGetCurrent(CUcontext *pctx)}.
     *
     * @param pctx out: the context (8 bytes)
     * @return the CUresult
     */
    static int ctxGetCurrent(MemorySegment pctx) {
        try {
            return (int) CU_CTX_GET_CURRENT.invokeExact(pctx);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code cuCtxSetCurrent(CUcontext ctx)}.
     *
     * @param ctx the context, 0 for none
     * @return the CUresult
     */
    static int ctxSetCurrent(long ctx) {
        try {
            return (int) CU_CTX_SET_CURRENT.invokeExact(ptr(ctx));
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code cuCtxPushCurrent_v2(CUcontext ctx)}.
     *
     * @param ctx the context
     * @return the CUresult
     */
    static int ctxPushCurrent(long ctx) {
        try {
            return (int) CU_CTX_PUSH_CURRENT.invokeExact(ptr(ctx));
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code cuCtxPopCurrent_v2(CUcontext *pctx)}.
     *
     * @param pctx out: the context popped (8 bytes)
     * @return the CUresult
     */
    static int ctxPopCurrent(MemorySegment pctx) {
        try {
            return (int) CU_CTX_POP_CURRENT.invokeExact(pctx);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code cuDeviceGet(CUdevice *device, int ordinal)}.
     *
     * @param device  out: the device (4 bytes)
     * @param ordinal the ordinal
     * @return the CUresult
     */
    static int deviceGet(MemorySegment device, int ordinal) {
        try {
            return (int) CU_DEVICE_GET.invokeExact(device, ordinal);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)}.
     *
     * @param pctx   out: the context (8 bytes)
     * @param device the {@code CUdevice}
     * @return the CUresult
     */
    static int devicePrimaryCtxRetain(MemorySegment pctx, int device) {
        try {
            return (int) CU_DEVICE_PRIMARY_CTX_RETAIN.invokeExact(pctx, device);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)}.
     *
     * @param pp       out: the address (8 bytes)
     * @param byteSize the size
     * @param flags    {@code CU_MEMHOSTALLOC_*}
     * @return the CUresult
     */
    static int memHostAlloc(MemorySegment pp, long byteSize, int flags) {
        try {
            return (int) CU_MEM_HOST_ALLOC.invokeExact(pp, byteSize, flags);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code cuMemFreeHost(void *p)}.
     *
     * @param address the block
     * @return the CUresult
     */
    static int memFreeHost(long address) {
        try {
            return (int) CU_MEM_FREE_HOST.invokeExact(ptr(address));
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)}.
     *
     * @param dptr     out: the device pointer (8 bytes)
     * @param byteSize the size
     * @return the CUresult
     */
    static int memAlloc(MemorySegment dptr, long byteSize) {
        try {
            return (int) CU_MEM_ALLOC.invokeExact(dptr, byteSize);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)}.
     *
     * @param dptr     out: the pointer (8 bytes)
     * @param byteSize the size
     * @param flags    {@code CU_MEM_ATTACH_GLOBAL} or {@code CU_MEM_ATTACH_HOST}
     * @return the CUresult
     */
    static int memAllocManaged(MemorySegment dptr, long byteSize, int flags) {
        try {
            return (int) CU_MEM_ALLOC_MANAGED.invokeExact(dptr, byteSize, flags);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code cuMemFree_v2(CUdeviceptr dptr)}: device and managed memory.
     *
     * @param dptr the block
     * @return the CUresult
     */
    static int memFree(long dptr) {
        try {
            return (int) CU_MEM_FREE.invokeExact(dptr);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)}.
     *
     * @param address  the start
     * @param byteSize the length
     * @param flags    {@code CU_MEMHOSTREGISTER_*}
     * @return the CUresult
     */
    static int memHostRegister(long address, long byteSize, int flags) {
        try {
            return (int) CU_MEM_HOST_REGISTER.invokeExact(ptr(address), byteSize, flags);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code cuMemHostUnregister(void *p)}.
     *
     * @param address the start
     * @return the CUresult
     */
    static int memHostUnregister(long address) {
        try {
            return (int) CU_MEM_HOST_UNREGISTER.invokeExact(ptr(address));
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)}.
     *
     * @param pbase out: the allocation's base (8 bytes)
     * @param psize out: its size (8 bytes)
     * @param dptr  any address inside it
     * @return the CUresult
     */
    static int memGetAddressRange(MemorySegment pbase, MemorySegment psize, long dptr) {
        try {
            return (int) CU_MEM_GET_ADDRESS_RANGE.invokeExact(pbase, psize, dptr);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr)}.
     *
     * @param handle out: the handle (64 bytes)
     * @param dptr   the base of a {@code cuMemAlloc} allocation
     * @return the CUresult
     */
    static int ipcGetMemHandle(MemorySegment handle, long dptr) {
        try {
            return (int) CU_IPC_GET_MEM_HANDLE.invokeExact(handle, dptr);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags)}.
     *
     * @param pdptr  out: the mapped pointer (8 bytes)
     * @param handle the handle's 64 bytes, passed by value
     * @param flags  {@code CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS} or 0
     * @return the CUresult
     */
    static int ipcOpenMemHandle(MemorySegment pdptr, MemorySegment handle, int flags) {
        try {
            return (int) CU_IPC_OPEN_MEM_HANDLE.invokeExact(pdptr, handle, flags);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code cuIpcCloseMemHandle(CUdeviceptr dptr)}.
     *
     * @param dptr what {@link #ipcOpenMemHandle} returned
     * @return the CUresult
     */
    static int ipcCloseMemHandle(long dptr) {
        try {
            return (int) CU_IPC_CLOSE_MEM_HANDLE.invokeExact(dptr);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N)}, on the legacy
     * default stream.
     *
     * @param dptr     the start
     * @param value    the byte
     * @param byteSize the length
     * @return the CUresult
     */
    static int memsetD8(long dptr, byte value, long byteSize) {
        try {
            return (int) CU_MEMSET_D8.invokeExact(dptr, value, byteSize);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)}: any two addresses
     * under unified addressing, on the legacy default stream.
     *
     * @param dst      the target
     * @param src      the source
     * @param byteSize the length
     * @return the CUresult
     */
    static int memcpy(long dst, long src, long byteSize) {
        try {
            return (int) CU_MEMCPY.invokeExact(dst, src, byteSize);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)}.
     *
     * @param dst      the target
     * @param src      the source
     * @param byteSize the length
     * @param stream   the stream
     * @return the CUresult
     */
    static int memcpyAsync(long dst, long src, long byteSize, long stream) {
        try {
            return (int) CU_MEMCPY_ASYNC.invokeExact(dst, src, byteSize, ptr(stream));
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute *attributes,
     * void **data, CUdeviceptr ptr)}: unlike {@code cuPointerGetAttribute}, succeeds for memory
     * CUDA does not know, leaving the values zero.
     *
     * @param count      the number of attributes
     * @param attributes {@code count} {@code CUpointer_attribute}s (4 bytes each)
     * @param data       {@code count} pointers to where each value goes
     * @param address    the pointer asked about
     * @return the CUresult
     */
    static int pointerGetAttributes(int count, MemorySegment attributes, MemorySegment data, long address) {
        try {
            return (int) CU_POINTER_GET_ATTRIBUTES.invokeExact(count, attributes, data, address);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code cuStreamCreate(CUstream *phStream, unsigned int Flags)}.
     *
     * @param stream out: the stream (8 bytes)
     * @param flags  {@code CU_STREAM_DEFAULT} or {@code CU_STREAM_NON_BLOCKING}
     * @return the CUresult
     */
    static int streamCreate(MemorySegment stream, int flags) {
        try {
            return (int) CU_STREAM_CREATE.invokeExact(stream, flags);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code cuStreamDestroy_v2(CUstream hStream)}.
     *
     * @param stream the stream
     * @return the CUresult
     */
    static int streamDestroy(long stream) {
        try {
            return (int) CU_STREAM_DESTROY.invokeExact(ptr(stream));
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code cuStreamQuery(CUstream hStream)}.
     *
     * @param stream the stream
     * @return the CUresult ({@code CUDA_ERROR_NOT_READY} while work is pending)
     */
    static int streamQuery(long stream) {
        try {
            return (int) CU_STREAM_QUERY.invokeExact(ptr(stream));
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code cuStreamSynchronize(CUstream hStream)}.
     *
     * @param stream the stream
     * @return the CUresult
     */
    static int streamSynchronize(long stream) {
        try {
            return (int) CU_STREAM_SYNCHRONIZE.invokeExact(ptr(stream));
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)}.
     *
     * @param stream the waiting stream
     * @param event  the event
     * @param flags  0
     * @return the CUresult
     */
    static int streamWaitEvent(long stream, long event, int flags) {
        try {
            return (int) CU_STREAM_WAIT_EVENT.invokeExact(ptr(stream), ptr(event), flags);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code cuEventCreate(CUevent *phEvent, unsigned int Flags)}.
     *
     * @param event out: the event (8 bytes)
     * @param flags {@code CU_EVENT_*}
     * @return the CUresult
     */
    static int eventCreate(MemorySegment event, int flags) {
        try {
            return (int) CU_EVENT_CREATE.invokeExact(event, flags);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code cuEventRecord(CUevent hEvent, CUstream hStream)}.
     *
     * @param event  the event
     * @param stream the stream
     * @return the CUresult
     */
    static int eventRecord(long event, long stream) {
        try {
            return (int) CU_EVENT_RECORD.invokeExact(ptr(event), ptr(stream));
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code cuEventSynchronize(CUevent hEvent)}.
     *
     * @param event the event
     * @return the CUresult
     */
    static int eventSynchronize(long event) {
        try {
            return (int) CU_EVENT_SYNCHRONIZE.invokeExact(ptr(event));
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code cuEventDestroy_v2(CUevent hEvent)}.
     *
     * @param event the event
     * @return the CUresult
     */
    static int eventDestroy(long event) {
        try {
            return (int) CU_EVENT_DESTROY.invokeExact(ptr(event));
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * The driver's name of a code ({@code cuGetErrorName}).
     *
     * @param code a CUresult
     * @return for example {@code CUDA_ERROR_INVALID_VALUE}, or null if the driver does not know it
     */
    static String errorName(int code) {
        return errorText(CU_GET_ERROR_NAME, code);
    }

    /**
     * The driver's description of a code ({@code cuGetErrorString}).
     *
     * @param code a CUresult
     * @return the description, or null if the driver does not know the code
     */
    static String errorString(int code) {
        return errorText(CU_GET_ERROR_STRING, code);
    }

    private static String errorText(MethodHandle h, int code) {
        if (!LOADED) {
            return null;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(java.lang.foreign.ValueLayout.ADDRESS);
            int rc = (int) h.invokeExact(code, out);
            MemorySegment s = out.get(java.lang.foreign.ValueLayout.ADDRESS, 0);
            return rc == 0 && s.address() != 0 ? s.reinterpret(Integer.MAX_VALUE).getString(0) : null;
        } catch (IllegalStateException e) {
            return null;   // the driver lacks the function: the caller names the code itself
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }
}
