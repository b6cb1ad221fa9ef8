package io.datamem.cuda.internal;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The CUDA driver API functions datamem calls, by the names {@code libcuda.so.1} exports, with
 * their C signatures as FFM descriptors, and how a symbol becomes a downcall handle. Pure: it
 * opens nothing itself ({@link DriverCalls} binds the real library). Internal.
 *
 * <p>The exported names are those {@code cuda.h} (CUDA 12) maps the API names to when neither
 * {@code CUDA_API_PER_THREAD_DEFAULT_STREAM} nor an older {@code __CUDA_API_VERSION} is defined:
 * {@code cuMemAlloc} is exported as {@code cuMemAlloc_v2}, {@code cuMemcpy} as itself (its
 * {@code _ptds} variant would use the per-thread default stream). Types on Linux x86-64:
 * {@code CUresult}, {@code CUdevice}, {@code CUpointer_attribute} and {@code unsigned int} flags are
 * 32-bit ({@code JAVA_INT}); {@code size_t} and {@code CUdeviceptr} ({@code unsigned long long}) are
 * 64-bit ({@code JAVA_LONG}); {@code CUcontext}, {@code CUstream}, {@code CUevent}, {@code void*}
 * and every out-parameter are pointers ({@code ADDRESS}); {@code unsigned char} is
 * {@code JAVA_BYTE}.
 */
final class DriverSymbols {

    /** {@code CUipcMemHandle}: {@code struct { char reserved[64]; }}, passed by value to open. */
    static final java.lang.foreign.StructLayout IPC_MEM_HANDLE = java.lang.foreign.MemoryLayout.structLayout(
            java.lang.foreign.MemoryLayout.sequenceLayout(64, JAVA_BYTE).withName("reserved"));

    /** Every function, in the order of {@link DriverCalls}' fields, with its descriptor. */
    static final Map<String, FunctionDescriptor> FUNCTIONS = functions();

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle MISSING;

    static {
        try {
            MISSING = MethodHandles.lookup().findStatic(DriverSymbols.class, "missing",
                    MethodType.methodType(int.class, String.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private DriverSymbols() {
    }

    private static Map<String, FunctionDescriptor> functions() {
        Map<String, FunctionDescriptor> m = new LinkedHashMap<>();
        // CUresult cuCtxGetCurrent(CUcontext *pctx)
        m.put("cuCtxGetCurrent", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        // CUresult cuCtxSetCurrent(CUcontext ctx)
        m.put("cuCtxSetCurrent", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        // CUresult cuCtxPushCurrent(CUcontext ctx)
        m.put("cuCtxPushCurrent_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        // CUresult cuCtxPopCurrent(CUcontext *pctx)
        m.put("cuCtxPopCurrent_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        // CUresult cuDeviceGet(CUdevice *device, int ordinal)
        m.put("cuDeviceGet", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        // CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
        m.put("cuDevicePrimaryCtxRetain", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        // CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
        m.put("cuMemHostAlloc", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
        // CUresult cuMemFreeHost(void *p)
        m.put("cuMemFreeHost", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        // CUresult cuMemAlloc(CUdeviceptr *dptr, size_t bytesize)
        m.put("cuMemAlloc_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
        // CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
        m.put("cuMemAllocManaged", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
        // CUresult cuMemFree(CUdeviceptr dptr)
        m.put("cuMemFree_v2", FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
        // CUresult cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags)
        m.put("cuMemHostRegister_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
        // CUresult cuMemHostUnregister(void *p)
        m.put("cuMemHostUnregister", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        // CUresult cuMemsetD8(CUdeviceptr dstDevice, unsigned char uc, size_t N)
        m.put("cuMemsetD8_v2", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_BYTE, JAVA_LONG));
        // CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
        m.put("cuMemcpy", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG));
        // CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)
        m.put("cuMemcpyAsync", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS));
        // CUresult cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute *attributes,
        //                                 void **data, CUdeviceptr ptr)
        m.put("cuPointerGetAttributes", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG));
        // CUresult cuMemGetAddressRange(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
        m.put("cuMemGetAddressRange_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG));
        // CUresult cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr)
        m.put("cuIpcGetMemHandle", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
        // CUresult cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags):
        // the 64-byte handle by value
        m.put("cuIpcOpenMemHandle_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS, IPC_MEM_HANDLE, JAVA_INT));
        // CUresult cuIpcCloseMemHandle(CUdeviceptr dptr)
        m.put("cuIpcCloseMemHandle", FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
        // CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
        m.put("cuStreamCreate", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        // CUresult cuStreamDestroy(CUstream hStream)
        m.put("cuStreamDestroy_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        // CUresult cuStreamQuery(CUstream hStream)
        m.put("cuStreamQuery", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        // CUresult cuStreamSynchronize(CUstream hStream)
        m.put("cuStreamSynchronize", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        // CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
        m.put("cuStreamWaitEvent", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
        // CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
        m.put("cuEventCreate", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        // CUresult cuEventRecord(CUevent hEvent, CUstream hStream)
        m.put("cuEventRecord", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        // CUresult cuEventSynchronize(CUevent hEvent)
        m.put("cuEventSynchronize", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        // CUresult cuEventDestroy(CUevent hEvent)
        m.put("cuEventDestroy_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        // CUresult cuGetErrorName(CUresult error, const char **pStr)
        m.put("cuGetErrorName", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
        // CUresult cuGetErrorString(CUresult error, const char **pStr)
        m.put("cuGetErrorString", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
        return java.util.Collections.unmodifiableMap(m);
    }

    /**
     * A downcall handle for one of {@link #FUNCTIONS}, or, if the library lacks it, a handle of the
     * same type that throws an {@link IllegalStateException} naming the symbol (the provider reports
     * CUDA unavailable before any such call, naming the same symbols).
     *
     * @param lookup  the library
     * @param name    the exported name
     * @param missing where to add the name if the library lacks it
     * @return the handle
     */
    static MethodHandle bind(SymbolLookup lookup, String name, List<String> missing) {
        FunctionDescriptor descriptor = FUNCTIONS.get(name);
        if (descriptor == null) {
            throw new IllegalArgumentException("not a CUDA driver function datamem binds: " + name);
        }
        Optional<MemorySegment> symbol = lookup.find(name);
        if (symbol.isPresent()) {
            return LINKER.downcallHandle(symbol.get(), descriptor);
        }
        missing.add(name);
        return MethodHandles.dropArguments(MethodHandles.insertArguments(MISSING, 0, name), 0,
                descriptor.toMethodType().parameterList());
    }

    /**
     * What a call to a function the driver lacks throws.
     *
     * @param name the symbol
     * @return never
     */
    private static int missing(String name) {
        throw new IllegalStateException(message(List.of(name)));
    }

    /**
     * Why symbols are missing, for messages and the provider's availability.
     *
     * @param names the missing symbols
     * @return a sentence naming them
     */
    static String message(List<String> names) {
        return "the CUDA driver library " + CudaDriver.LIBRARY + " does not export " + String.join(", ", names)
                + " (datamem's CUDA backend needs a CUDA 12 driver, R525 or newer)";
    }
}
