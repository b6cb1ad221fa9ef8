package io.datamem.sycl;

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

/** A test's OpenCL program: built from source in a queue's context, one kernel launched at a time. */
final class ClKernel implements AutoCloseable {

    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup CL = SymbolLookup.libraryLookup("libOpenCL.so.1", Arena.global());

    private static MethodHandle fn(String name, FunctionDescriptor d) {
        return LINKER.downcallHandle(CL.find(name).orElseThrow(), d);
    }

    private static final MethodHandle CREATE_PROGRAM = fn("clCreateProgramWithSource",
            FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
    private static final MethodHandle BUILD_PROGRAM = fn("clBuildProgram",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    private static final MethodHandle BUILD_INFO = fn("clGetProgramBuildInfo",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, JAVA_LONG, ADDRESS, ADDRESS));
    private static final MethodHandle CREATE_KERNEL = fn("clCreateKernel",
            FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    private static final MethodHandle SET_ARG = fn("clSetKernelArg",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG, ADDRESS));
    private static final MethodHandle ENQUEUE_ND_RANGE = fn("clEnqueueNDRangeKernel",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT, ADDRESS,
                    ADDRESS));
    private static final MethodHandle FINISH = fn("clFinish", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    private static final MethodHandle RELEASE_KERNEL = fn("clReleaseKernel", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    private static final MethodHandle RELEASE_PROGRAM = fn("clReleaseProgram", FunctionDescriptor.of(JAVA_INT, ADDRESS));

    private static final int CL_PROGRAM_BUILD_LOG = 0x1183;

    private final SyclQueue queue;
    private final MemorySegment program;
    private final MemorySegment kernel;

    ClKernel(SyclQueue queue, String source, String kernelName) throws Throwable {
        this.queue = queue;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment status = arena.allocate(JAVA_INT);
            MemorySegment strings = arena.allocateFrom(ADDRESS, arena.allocateFrom(source));
            program = (MemorySegment) CREATE_PROGRAM.invokeExact(queue.contextHandle(), 1, strings, MemorySegment.NULL,
                    status);
            check(status.get(JAVA_INT, 0), "clCreateProgramWithSource");
            MemorySegment devices = arena.allocateFrom(ADDRESS, queue.deviceHandle());
            int built = (int) BUILD_PROGRAM.invokeExact(program, 1, devices, arena.allocateFrom(""),
                    MemorySegment.NULL, MemorySegment.NULL);
            if (built != 0) {
                MemorySegment log = arena.allocate(65536);
                int st = (int) BUILD_INFO.invokeExact(program, queue.deviceHandle(), CL_PROGRAM_BUILD_LOG,
                        log.byteSize(), log, MemorySegment.NULL);
                throw new AssertionError("clBuildProgram failed with " + built + ": "
                        + (st == 0 ? log.getString(0, StandardCharsets.UTF_8) : "no log"));
            }
            kernel = (MemorySegment) CREATE_KERNEL.invokeExact(program, arena.allocateFrom(kernelName), status);
            check(status.get(JAVA_INT, 0), "clCreateKernel");
        }
    }

    MemorySegment handle() {
        return kernel;
    }

    void setPointer(int index, MemorySegment usmPointer) {
        queue.setKernelArgPointer(kernel, index, usmPointer);
    }

    void setInt(int index, int value) throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            check((int) SET_ARG.invokeExact(kernel, index, 4L, arena.allocateFrom(JAVA_INT, value)), "clSetKernelArg");
        }
    }

    void run(long globalSize) throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment global = arena.allocateFrom(JAVA_LONG, globalSize);
            check((int) ENQUEUE_ND_RANGE.invokeExact(queue.queueHandle(), kernel, 1, MemorySegment.NULL, global,
                    MemorySegment.NULL, 0, MemorySegment.NULL, MemorySegment.NULL), "clEnqueueNDRangeKernel");
            check((int) FINISH.invokeExact(queue.queueHandle()), "clFinish");
        }
    }

    private static void check(int status, String what) {
        if (status != 0) {
            throw new AssertionError(what + " failed with " + status);
        }
    }

    @Override
    public void close() throws Exception {
        try {
            int k = (int) RELEASE_KERNEL.invokeExact(kernel);
            int p = (int) RELEASE_PROGRAM.invokeExact(program);
            check(k, "clReleaseKernel");
            check(p, "clReleaseProgram");
        } catch (Exception | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

}
