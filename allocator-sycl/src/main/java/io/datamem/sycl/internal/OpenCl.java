package io.datamem.sycl.internal;

import io.datamem.internal.Libc;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The OpenCL core functions datamem calls, as FFM downcalls into the ICD loader
 * {@code libOpenCL.so.1}. The loader is opened on first use; when it is missing,
 * {@link #loadFailure()} says why and every binding is absent.
 *
 * <p>Handles ({@code cl_platform_id}, {@code cl_context}, ...) are zero-length segments used as
 * addresses. Status codes are returned as they are; callers turn them into exceptions.
 */
public final class OpenCl {

    /** The ICD loader's soname. */
    public static final String LIBRARY = "libOpenCL.so.1";

    // cl_platform_info
    /** {@code CL_PLATFORM_VERSION}. */
    public static final int PLATFORM_VERSION = 0x0901;
    /** {@code CL_PLATFORM_NAME}. */
    public static final int PLATFORM_NAME = 0x0902;
    /** {@code CL_PLATFORM_VENDOR}. */
    public static final int PLATFORM_VENDOR = 0x0903;
    /** {@code CL_PLATFORM_EXTENSIONS}. */
    public static final int PLATFORM_EXTENSIONS = 0x0904;

    // cl_device_type
    /** {@code CL_DEVICE_TYPE_CPU}. */
    public static final long DEVICE_TYPE_CPU = 1 << 1;
    /** {@code CL_DEVICE_TYPE_GPU}. */
    public static final long DEVICE_TYPE_GPU = 1 << 2;
    /** {@code CL_DEVICE_TYPE_ACCELERATOR}. */
    public static final long DEVICE_TYPE_ACCELERATOR = 1 << 3;
    /** {@code CL_DEVICE_TYPE_ALL}. */
    public static final long DEVICE_TYPE_ALL = 0xFFFFFFFFL;

    // cl_device_info
    /** {@code CL_DEVICE_TYPE}. */
    public static final int DEVICE_TYPE = 0x1000;
    /** {@code CL_DEVICE_MAX_MEM_ALLOC_SIZE}. */
    public static final int DEVICE_MAX_MEM_ALLOC_SIZE = 0x1010;
    /** {@code CL_DEVICE_MEM_BASE_ADDR_ALIGN} (bits). */
    public static final int DEVICE_MEM_BASE_ADDR_ALIGN = 0x1019;
    /** {@code CL_DEVICE_GLOBAL_MEM_SIZE}. */
    public static final int DEVICE_GLOBAL_MEM_SIZE = 0x101F;
    /** {@code CL_DEVICE_NAME}. */
    public static final int DEVICE_NAME = 0x102B;
    /** {@code CL_DEVICE_VENDOR}. */
    public static final int DEVICE_VENDOR = 0x102C;
    /** {@code CL_DRIVER_VERSION}. */
    public static final int DRIVER_VERSION = 0x102D;
    /** {@code CL_DEVICE_VERSION}. */
    public static final int DEVICE_VERSION = 0x102F;
    /** {@code CL_DEVICE_EXTENSIONS}. */
    public static final int DEVICE_EXTENSIONS = 0x1030;
    /** {@code CL_DEVICE_PLATFORM}. */
    public static final int DEVICE_PLATFORM = 0x1031;
    /** {@code CL_DEVICE_HOST_MEM_CAPABILITIES_INTEL}. */
    public static final int DEVICE_HOST_MEM_CAPABILITIES_INTEL = 0x4190;
    /** {@code CL_DEVICE_DEVICE_MEM_CAPABILITIES_INTEL}. */
    public static final int DEVICE_DEVICE_MEM_CAPABILITIES_INTEL = 0x4191;
    /** {@code CL_DEVICE_SINGLE_DEVICE_SHARED_MEM_CAPABILITIES_INTEL}. */
    public static final int DEVICE_SINGLE_DEVICE_SHARED_MEM_CAPABILITIES_INTEL = 0x4192;

    // contexts and queues
    /** {@code CL_CONTEXT_PLATFORM}. */
    public static final long CONTEXT_PLATFORM = 0x1084;
    /** {@code CL_CONTEXT_DEVICES}. */
    public static final int CONTEXT_DEVICES = 0x1081;
    /** {@code CL_QUEUE_CONTEXT}. */
    public static final int QUEUE_CONTEXT = 0x1090;
    /** {@code CL_QUEUE_DEVICE}. */
    public static final int QUEUE_DEVICE = 0x1091;

    /** The USM extension's name. */
    public static final String USM_EXTENSION = "cl_intel_unified_shared_memory";

    private static final Linker LINKER = Linker.nativeLinker();
    private static final AddressLayout PTR = ADDRESS;
    private static final String FAILURE;
    private static final SymbolLookup LOOKUP;

    static {
        SymbolLookup lookup = null;
        String failure = null;
        try {
            lookup = SymbolLookup.libraryLookup(LIBRARY, Arena.global());
        } catch (IllegalArgumentException | IllegalCallerException e) {
            failure = "no OpenCL ICD loader: " + LIBRARY + " could not be loaded (" + e.getMessage()
                    + "); install an OpenCL ICD loader (Debian: ocl-icd-libopencl1) and an OpenCL driver with "
                    + USM_EXTENSION + ", for example PoCL 6 or newer (CPU devices) or Intel's compute runtime (GPUs)"
                    + " or Intel's CPU runtime";
        }
        LOOKUP = lookup;
        FAILURE = failure;
    }

    private static MethodHandle bind(String name, FunctionDescriptor descriptor) {
        if (LOOKUP == null) {
            return null;
        }
        return LOOKUP.find(name).map(a -> LINKER.downcallHandle(a, descriptor)).orElse(null);
    }

    private static final MethodHandle GET_PLATFORM_IDS =
            bind("clGetPlatformIDs", FunctionDescriptor.of(JAVA_INT, JAVA_INT, PTR, PTR));
    private static final MethodHandle GET_PLATFORM_INFO =
            bind("clGetPlatformInfo", FunctionDescriptor.of(JAVA_INT, PTR, JAVA_INT, JAVA_LONG, PTR, PTR));
    private static final MethodHandle GET_DEVICE_IDS =
            bind("clGetDeviceIDs", FunctionDescriptor.of(JAVA_INT, PTR, JAVA_LONG, JAVA_INT, PTR, PTR));
    private static final MethodHandle GET_DEVICE_INFO =
            bind("clGetDeviceInfo", FunctionDescriptor.of(JAVA_INT, PTR, JAVA_INT, JAVA_LONG, PTR, PTR));
    private static final MethodHandle CREATE_CONTEXT =
            bind("clCreateContext", FunctionDescriptor.of(PTR, PTR, JAVA_INT, PTR, PTR, PTR, PTR));
    private static final MethodHandle GET_CONTEXT_INFO =
            bind("clGetContextInfo", FunctionDescriptor.of(JAVA_INT, PTR, JAVA_INT, JAVA_LONG, PTR, PTR));
    private static final MethodHandle RETAIN_CONTEXT = bind("clRetainContext", FunctionDescriptor.of(JAVA_INT, PTR));
    private static final MethodHandle RELEASE_CONTEXT = bind("clReleaseContext", FunctionDescriptor.of(JAVA_INT, PTR));
    private static final MethodHandle CREATE_QUEUE_WITH_PROPERTIES = bind("clCreateCommandQueueWithProperties",
            FunctionDescriptor.of(PTR, PTR, PTR, PTR, PTR));
    private static final MethodHandle CREATE_QUEUE =
            bind("clCreateCommandQueue", FunctionDescriptor.of(PTR, PTR, PTR, JAVA_LONG, PTR));
    private static final MethodHandle GET_QUEUE_INFO =
            bind("clGetCommandQueueInfo", FunctionDescriptor.of(JAVA_INT, PTR, JAVA_INT, JAVA_LONG, PTR, PTR));
    private static final MethodHandle RETAIN_QUEUE = bind("clRetainCommandQueue", FunctionDescriptor.of(JAVA_INT, PTR));
    private static final MethodHandle RELEASE_QUEUE =
            bind("clReleaseCommandQueue", FunctionDescriptor.of(JAVA_INT, PTR));
    private static final MethodHandle FINISH = bind("clFinish", FunctionDescriptor.of(JAVA_INT, PTR));
    private static final MethodHandle WAIT_FOR_EVENTS =
            bind("clWaitForEvents", FunctionDescriptor.of(JAVA_INT, JAVA_INT, PTR));
    private static final MethodHandle RELEASE_EVENT = bind("clReleaseEvent", FunctionDescriptor.of(JAVA_INT, PTR));
    private static final MethodHandle GET_EXTENSION_FUNCTION = bind("clGetExtensionFunctionAddressForPlatform",
            FunctionDescriptor.of(PTR, PTR, PTR));

    private OpenCl() {
    }

    /**
     * Why the ICD loader could not be used, or null when it was loaded.
     *
     * @return the reason, or null
     */
    public static String loadFailure() {
        if (FAILURE != null) {
            return FAILURE;
        }
        if (GET_PLATFORM_IDS == null || GET_EXTENSION_FUNCTION == null) {
            return "the OpenCL ICD loader " + LIBRARY + " lacks clGetPlatformIDs or "
                    + "clGetExtensionFunctionAddressForPlatform (an OpenCL 1.2 loader is needed)";
        }
        return null;
    }

    /**
     * {@code clGetPlatformIDs}.
     *
     * @param count     entries in {@code platforms}
     * @param platforms output array, or NULL
     * @param found     output {@code cl_uint}, or NULL
     * @return the status
     */
    public static int getPlatformIds(int count, MemorySegment platforms, MemorySegment found) {
        try {
            return (int) GET_PLATFORM_IDS.invokeExact(count, platforms, found);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code clGetPlatformInfo}.
     *
     * @param platform  the platform
     * @param param     the query
     * @param size      bytes of {@code value}
     * @param value     output, or NULL
     * @param sizeRet   output {@code size_t}, or NULL
     * @return the status
     */
    public static int getPlatformInfo(MemorySegment platform, int param, long size, MemorySegment value,
                                      MemorySegment sizeRet) {
        try {
            return (int) GET_PLATFORM_INFO.invokeExact(platform, param, size, value, sizeRet);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code clGetDeviceIDs}.
     *
     * @param platform the platform
     * @param type     a {@code cl_device_type} mask
     * @param count    entries in {@code devices}
     * @param devices  output array, or NULL
     * @param found    output {@code cl_uint}, or NULL
     * @return the status
     */
    public static int getDeviceIds(MemorySegment platform, long type, int count, MemorySegment devices,
                                   MemorySegment found) {
        try {
            return (int) GET_DEVICE_IDS.invokeExact(platform, type, count, devices, found);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code clGetDeviceInfo}.
     *
     * @param device  the device
     * @param param   the query
     * @param size    bytes of {@code value}
     * @param value   output, or NULL
     * @param sizeRet output {@code size_t}, or NULL
     * @return the status
     */
    public static int getDeviceInfo(MemorySegment device, int param, long size, MemorySegment value,
                                    MemorySegment sizeRet) {
        try {
            return (int) GET_DEVICE_INFO.invokeExact(device, param, size, value, sizeRet);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code clCreateContext} without a notification callback.
     *
     * @param properties a zero-terminated {@code cl_context_properties} list, or NULL
     * @param count      devices in {@code devices}
     * @param devices    the devices
     * @param status     output {@code cl_int}
     * @return the context, or NULL
     */
    public static MemorySegment createContext(MemorySegment properties, int count, MemorySegment devices,
                                              MemorySegment status) {
        try {
            return (MemorySegment) CREATE_CONTEXT.invokeExact(properties, count, devices, MemorySegment.NULL,
                    MemorySegment.NULL, status);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code clGetContextInfo}.
     *
     * @param context the context
     * @param param   the query
     * @param size    bytes of {@code value}
     * @param value   output, or NULL
     * @param sizeRet output {@code size_t}, or NULL
     * @return the status
     */
    public static int getContextInfo(MemorySegment context, int param, long size, MemorySegment value,
                                     MemorySegment sizeRet) {
        try {
            return (int) GET_CONTEXT_INFO.invokeExact(context, param, size, value, sizeRet);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code clRetainContext}.
     *
     * @param context the context
     * @return the status
     */
    public static int retainContext(MemorySegment context) {
        try {
            return (int) RETAIN_CONTEXT.invokeExact(context);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code clReleaseContext}.
     *
     * @param context the context
     * @return the status
     */
    public static int releaseContext(MemorySegment context) {
        try {
            return (int) RELEASE_CONTEXT.invokeExact(context);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * Creates an in-order command queue: {@code clCreateCommandQueueWithProperties} (OpenCL 2.0+),
     * else {@code clCreateCommandQueue}.
     *
     * @param context the context
     * @param device  a device of the context
     * @param status  output {@code cl_int}
     * @return the queue, or NULL
     */
    public static MemorySegment createQueue(MemorySegment context, MemorySegment device, MemorySegment status) {
        try {
            if (CREATE_QUEUE_WITH_PROPERTIES != null) {
                MemorySegment q = (MemorySegment) CREATE_QUEUE_WITH_PROPERTIES.invokeExact(context, device,
                        MemorySegment.NULL, status);
                if (q.address() != 0 || CREATE_QUEUE == null) {
                    return q;
                }
            }
            return (MemorySegment) CREATE_QUEUE.invokeExact(context, device, 0L, status);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code clGetCommandQueueInfo}.
     *
     * @param queue   the queue
     * @param param   the query
     * @param size    bytes of {@code value}
     * @param value   output, or NULL
     * @param sizeRet output {@code size_t}, or NULL
     * @return the status
     */
    public static int getQueueInfo(MemorySegment queue, int param, long size, MemorySegment value,
                                   MemorySegment sizeRet) {
        try {
            return (int) GET_QUEUE_INFO.invokeExact(queue, param, size, value, sizeRet);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code clRetainCommandQueue}.
     *
     * @param queue the queue
     * @return the status
     */
    public static int retainQueue(MemorySegment queue) {
        try {
            return (int) RETAIN_QUEUE.invokeExact(queue);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code clReleaseCommandQueue}.
     *
     * @param queue the queue
     * @return the status
     */
    public static int releaseQueue(MemorySegment queue) {
        try {
            return (int) RELEASE_QUEUE.invokeExact(queue);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code clFinish}.
     *
     * @param queue the queue
     * @return the status
     */
    public static int finish(MemorySegment queue) {
        try {
            return (int) FINISH.invokeExact(queue);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * Waits for one event and releases it.
     *
     * @param event the event
     * @return the status of {@code clWaitForEvents}
     */
    public static int waitAndRelease(MemorySegment event) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment list = arena.allocateFrom(ADDRESS, event);
            int status = (int) WAIT_FOR_EVENTS.invokeExact(1, list);
            int released = (int) RELEASE_EVENT.invokeExact(event);
            return status != ClError.SUCCESS ? status : released;
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code clGetExtensionFunctionAddressForPlatform}.
     *
     * @param platform the platform
     * @param name     the function's name
     * @return its address, or NULL if the platform does not provide it
     */
    public static MemorySegment extensionFunction(MemorySegment platform, String name) {
        try (Arena arena = Arena.ofConfined()) {
            return (MemorySegment) GET_EXTENSION_FUNCTION.invokeExact(platform, arena.allocateFrom(name));
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * Downcall handle for a function address.
     *
     * @param address    the function
     * @param descriptor its signature
     * @return the handle
     */
    public static MethodHandle downcall(MemorySegment address, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(address, descriptor);
    }

    /**
     * A string-valued platform query.
     *
     * @param platform the platform
     * @param param    the query
     * @return the value, or a text naming the error
     */
    public static String platformString(MemorySegment platform, int param) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment size = arena.allocate(JAVA_LONG);
            int status = getPlatformInfo(platform, param, 0, MemorySegment.NULL, size);
            if (status != ClError.SUCCESS) {
                return "<" + ClError.name(status) + ">";
            }
            MemorySegment value = arena.allocate(Math.max(1, size.get(JAVA_LONG, 0)));
            status = getPlatformInfo(platform, param, value.byteSize(), value, MemorySegment.NULL);
            return status != ClError.SUCCESS ? "<" + ClError.name(status) + ">" : cString(value);
        }
    }

    /**
     * A string-valued device query.
     *
     * @param device the device
     * @param param  the query
     * @return the value, or a text naming the error
     */
    public static String deviceString(MemorySegment device, int param) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment size = arena.allocate(JAVA_LONG);
            int status = getDeviceInfo(device, param, 0, MemorySegment.NULL, size);
            if (status != ClError.SUCCESS) {
                return "<" + ClError.name(status) + ">";
            }
            MemorySegment value = arena.allocate(Math.max(1, size.get(JAVA_LONG, 0)));
            status = getDeviceInfo(device, param, value.byteSize(), value, MemorySegment.NULL);
            return status != ClError.SUCCESS ? "<" + ClError.name(status) + ">" : cString(value);
        }
    }

    /**
     * A 64-bit device query ({@code cl_ulong}, {@code cl_bitfield}, {@code size_t}).
     *
     * @param device the device
     * @param param  the query
     * @return the value, or -1 if the query failed
     */
    public static long deviceLong(MemorySegment device, int param) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment value = arena.allocate(JAVA_LONG);
            return getDeviceInfo(device, param, 8, value, MemorySegment.NULL) == ClError.SUCCESS
                    ? value.get(JAVA_LONG, 0) : -1;
        }
    }

    /**
     * A 32-bit device query ({@code cl_uint}).
     *
     * @param device the device
     * @param param  the query
     * @return the value, or -1 if the query failed
     */
    public static long deviceInt(MemorySegment device, int param) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment value = arena.allocate(JAVA_INT);
            return getDeviceInfo(device, param, 4, value, MemorySegment.NULL) == ClError.SUCCESS
                    ? Integer.toUnsignedLong(value.get(JAVA_INT, 0)) : -1;
        }
    }

    private static String cString(MemorySegment value) {
        byte[] bytes = value.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
        int n = 0;
        while (n < bytes.length && bytes[n] != 0) {
            n++;
        }
        return new String(bytes, 0, n, StandardCharsets.UTF_8).strip();
    }
}
