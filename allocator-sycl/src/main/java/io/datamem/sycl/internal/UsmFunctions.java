package io.datamem.sycl.internal;

import io.datamem.internal.Libc;
import io.datamem.usm.UsmKind;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The functions of {@code cl_intel_unified_shared_memory} of one platform, reached through
 * {@code clGetExtensionFunctionAddressForPlatform}.
 */
public final class UsmFunctions {

    /** {@code CL_MEM_ALLOC_TYPE_INTEL}. */
    public static final int MEM_ALLOC_TYPE = 0x419A;
    /** {@code CL_MEM_ALLOC_BASE_PTR_INTEL}. */
    public static final int MEM_ALLOC_BASE_PTR = 0x419B;
    /** {@code CL_MEM_ALLOC_SIZE_INTEL}. */
    public static final int MEM_ALLOC_SIZE = 0x419C;
    /** {@code CL_MEM_ALLOC_DEVICE_INTEL}. */
    public static final int MEM_ALLOC_DEVICE = 0x419D;

    /** {@code CL_MEM_TYPE_UNKNOWN_INTEL}. */
    public static final int MEM_TYPE_UNKNOWN = 0x4196;
    /** {@code CL_MEM_TYPE_HOST_INTEL}. */
    public static final int MEM_TYPE_HOST = 0x4197;
    /** {@code CL_MEM_TYPE_DEVICE_INTEL}. */
    public static final int MEM_TYPE_DEVICE = 0x4198;
    /** {@code CL_MEM_TYPE_SHARED_INTEL}. */
    public static final int MEM_TYPE_SHARED = 0x4199;

    /** The names of every function datamem needs. */
    public static final List<String> NAMES = List.of("clHostMemAllocINTEL", "clSharedMemAllocINTEL",
            "clDeviceMemAllocINTEL", "clMemBlockingFreeINTEL", "clGetMemAllocInfoINTEL", "clEnqueueMemcpyINTEL",
            "clEnqueueMemFillINTEL", "clEnqueueMigrateMemINTEL", "clEnqueueMemAdviseINTEL",
            "clSetKernelArgMemPointerINTEL", "clMemFreeINTEL");

    private final MethodHandle hostAlloc;
    private final MethodHandle sharedAlloc;
    private final MethodHandle deviceAlloc;
    private final MethodHandle blockingFree;
    private final MethodHandle allocInfo;
    private final MethodHandle memcpy;
    private final MethodHandle memFill;
    private final MethodHandle migrate;
    private final MethodHandle advise;
    private final MethodHandle setKernelArg;
    private final MethodHandle free;
    private final boolean blockingFreeIsSafe;

    private UsmFunctions(MemorySegment[] a, boolean blockingFreeIsSafe) {
        this.blockingFreeIsSafe = blockingFreeIsSafe;
        hostAlloc = OpenCl.downcall(a[0], FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT,
                ADDRESS));
        sharedAlloc = OpenCl.downcall(a[1], FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG,
                JAVA_INT, ADDRESS));
        deviceAlloc = OpenCl.downcall(a[2], FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG,
                JAVA_INT, ADDRESS));
        blockingFree = OpenCl.downcall(a[3], FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        allocInfo = OpenCl.downcall(a[4], FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, JAVA_LONG,
                ADDRESS, ADDRESS));
        memcpy = OpenCl.downcall(a[5], FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, ADDRESS,
                JAVA_LONG, JAVA_INT, ADDRESS, ADDRESS));
        memFill = OpenCl.downcall(a[6], FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG,
                JAVA_LONG, JAVA_INT, ADDRESS, ADDRESS));
        migrate = OpenCl.downcall(a[7], FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG,
                JAVA_INT, ADDRESS, ADDRESS));
        advise = OpenCl.downcall(a[8], FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT,
                JAVA_INT, ADDRESS, ADDRESS));
        setKernelArg = OpenCl.downcall(a[9], FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS));
        free = OpenCl.downcall(a[10], FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    }

    /**
     * The OpenCL value of a USM kind: {@code CL_MEM_TYPE_HOST_INTEL}, {@code CL_MEM_TYPE_SHARED_INTEL},
     * {@code CL_MEM_TYPE_DEVICE_INTEL} or {@code CL_MEM_TYPE_UNKNOWN_INTEL}.
     *
     * @param kind the kind
     * @return for example {@code 0x4197} for {@link UsmKind#HOST}
     * @throws NullPointerException if {@code kind} is null
     */
    public static int clMemType(UsmKind kind) {
        return switch (kind) {
            case HOST -> MEM_TYPE_HOST;
            case SHARED -> MEM_TYPE_SHARED;
            case DEVICE -> MEM_TYPE_DEVICE;
            case UNKNOWN -> MEM_TYPE_UNKNOWN;
        };
    }

    /**
     * The USM kind of an OpenCL {@code CL_MEM_TYPE_*_INTEL} value.
     *
     * @param clMemType the value {@code clGetMemAllocInfoINTEL(CL_MEM_ALLOC_TYPE_INTEL)} returned
     * @return the kind; {@link UsmKind#UNKNOWN} for any value the extension does not define
     */
    public static UsmKind usmKind(int clMemType) {
        return switch (clMemType) {
            case MEM_TYPE_HOST -> UsmKind.HOST;
            case MEM_TYPE_SHARED -> UsmKind.SHARED;
            case MEM_TYPE_DEVICE -> UsmKind.DEVICE;
            default -> UsmKind.UNKNOWN;
        };
    }

    /**
     * Looks the functions up on a platform.
     *
     * @param platform     the platform
     * @param platformName its {@code CL_PLATFORM_NAME}
     * @param missing      receives the names the platform does not provide
     * @return the functions, or null when one is missing
     */
    public static UsmFunctions lookup(MemorySegment platform, String platformName, List<String> missing) {
        MemorySegment[] addresses = new MemorySegment[NAMES.size()];
        List<String> absent = new ArrayList<>();
        for (int i = 0; i < addresses.length; i++) {
            addresses[i] = OpenCl.extensionFunction(platform, NAMES.get(i));
            if (addresses[i].address() == 0) {
                absent.add(NAMES.get(i));
            }
        }
        missing.addAll(absent);
        // PoCL 6.0's clMemBlockingFreeINTEL waits on the last event of every queue of the context
        // and reads the event's wait state before the thread enqueuing it has set it up: under
        // concurrent use it crashes (pthread_cond_wait on NULL).
        boolean safe = !platformName.startsWith("Portable Computing Language");
        return absent.isEmpty() ? new UsmFunctions(addresses, safe) : null;
    }

    /**
     * {@code clHostMemAllocINTEL}.
     *
     * @param context       the context
     * @param byteSize      bytes
     * @param byteAlignment alignment, 0 for the default
     * @param status        output {@code cl_int}
     * @return the block or NULL
     */
    public MemorySegment hostAlloc(MemorySegment context, long byteSize, int byteAlignment, MemorySegment status) {
        try {
            return (MemorySegment) hostAlloc.invokeExact(context, MemorySegment.NULL, byteSize, byteAlignment, status);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code clSharedMemAllocINTEL}.
     *
     * @param context       the context
     * @param device        the device
     * @param byteSize      bytes
     * @param byteAlignment alignment, 0 for the default
     * @param status        output {@code cl_int}
     * @return the block or NULL
     */
    public MemorySegment sharedAlloc(MemorySegment context, MemorySegment device, long byteSize, int byteAlignment,
                                     MemorySegment status) {
        try {
            return (MemorySegment) sharedAlloc.invokeExact(context, device, MemorySegment.NULL, byteSize,
                    byteAlignment, status);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code clDeviceMemAllocINTEL}.
     *
     * @param context       the context
     * @param device        the device
     * @param byteSize      bytes
     * @param byteAlignment alignment, 0 for the default
     * @param status        output {@code cl_int}
     * @return the block or NULL
     */
    public MemorySegment deviceAlloc(MemorySegment context, MemorySegment device, long byteSize, int byteAlignment,
                                     MemorySegment status) {
        try {
            return (MemorySegment) deviceAlloc.invokeExact(context, device, MemorySegment.NULL, byteSize,
                    byteAlignment, status);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code clMemBlockingFreeINTEL}.
     *
     * @param context the context
     * @param ptr     the block
     * @return the status
     */
    public int blockingFree(MemorySegment context, MemorySegment ptr) {
        try {
            return (int) blockingFree.invokeExact(context, ptr);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * Frees a block once the commands that may use it are complete: with
     * {@code clMemBlockingFreeINTEL}, or, on platforms whose blocking free is not safe under
     * concurrent use (PoCL), with {@code clFinish} on the allocating queue and
     * {@code clMemFreeINTEL}.
     *
     * @param context the context
     * @param queue   the queue the allocator's commands run on
     * @param ptr     the block
     * @return the status
     */
    public int freeWhenIdle(MemorySegment context, MemorySegment queue, MemorySegment ptr) {
        if (blockingFreeIsSafe) {
            return blockingFree(context, ptr);
        }
        int status = OpenCl.finish(queue);
        return status != ClError.SUCCESS ? status : free(context, ptr);
    }

    /**
     * The function {@link #freeWhenIdle} frees with, for messages.
     *
     * @return {@code clMemBlockingFreeINTEL} or {@code clMemFreeINTEL}
     */
    public String freeFunction() {
        return blockingFreeIsSafe ? "clMemBlockingFreeINTEL" : "clMemFreeINTEL";
    }

    /**
     * {@code clMemFreeINTEL}: frees without waiting for commands that use the block.
     *
     * @param context the context
     * @param ptr     the block
     * @return the status
     */
    public int free(MemorySegment context, MemorySegment ptr) {
        try {
            return (int) free.invokeExact(context, ptr);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code clGetMemAllocInfoINTEL}.
     *
     * @param context the context
     * @param ptr     any pointer
     * @param param   the query
     * @param size    bytes of {@code value}
     * @param value   output
     * @param sizeRet output {@code size_t}, or NULL
     * @return the status
     */
    public int allocInfo(MemorySegment context, MemorySegment ptr, int param, long size, MemorySegment value,
                         MemorySegment sizeRet) {
        try {
            return (int) allocInfo.invokeExact(context, ptr, param, size, value, sizeRet);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code clEnqueueMemcpyINTEL} without a wait list.
     *
     * @param queue    the queue
     * @param blocking whether to wait for the copy
     * @param dst      destination
     * @param src      source
     * @param byteSize bytes
     * @param event    output {@code cl_event}, or NULL
     * @return the status
     */
    public int memcpy(MemorySegment queue, boolean blocking, MemorySegment dst, MemorySegment src, long byteSize,
                      MemorySegment event) {
        try {
            return (int) memcpy.invokeExact(queue, blocking ? 1 : 0, dst, src, byteSize, 0, MemorySegment.NULL,
                    event);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code clEnqueueMemFillINTEL} without a wait list.
     *
     * @param queue       the queue
     * @param dst         destination
     * @param pattern     the pattern
     * @param patternSize bytes of the pattern
     * @param byteSize    bytes to fill, a multiple of {@code patternSize}
     * @param event       output {@code cl_event}, or NULL
     * @return the status
     */
    public int memFill(MemorySegment queue, MemorySegment dst, MemorySegment pattern, long patternSize,
                       long byteSize, MemorySegment event) {
        try {
            return (int) memFill.invokeExact(queue, dst, pattern, patternSize, byteSize, 0, MemorySegment.NULL,
                    event);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code clEnqueueMigrateMemINTEL} without a wait list.
     *
     * @param queue    the queue
     * @param ptr      the range's start
     * @param byteSize the range's size
     * @param flags    {@code cl_mem_migration_flags}
     * @param event    output {@code cl_event}, or NULL
     * @return the status
     */
    public int migrate(MemorySegment queue, MemorySegment ptr, long byteSize, long flags, MemorySegment event) {
        try {
            return (int) migrate.invokeExact(queue, ptr, byteSize, flags, 0, MemorySegment.NULL, event);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code clEnqueueMemAdviseINTEL} without a wait list.
     *
     * @param queue    the queue
     * @param ptr      the range's start
     * @param byteSize the range's size
     * @param advice   a {@code cl_mem_advice_intel} value
     * @param event    output {@code cl_event}, or NULL
     * @return the status
     */
    public int advise(MemorySegment queue, MemorySegment ptr, long byteSize, int advice, MemorySegment event) {
        try {
            return (int) advise.invokeExact(queue, ptr, byteSize, advice, 0, MemorySegment.NULL, event);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code clSetKernelArgMemPointerINTEL}.
     *
     * @param kernel   the kernel
     * @param argIndex the argument
     * @param ptr      a USM pointer
     * @return the status
     */
    public int setKernelArgMemPointer(MemorySegment kernel, int argIndex, MemorySegment ptr) {
        try {
            return (int) setKernelArg.invokeExact(kernel, argIndex, ptr);
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }
}
