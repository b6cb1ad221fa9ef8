package io.datamem.sycl;

import io.datamem.sycl.internal.UsmFunctions;
import io.datamem.testing.NativeToolchain;
import io.datamem.usm.UsmKind;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The C consumer {@code native/sycl_export_probe.c}, compiled at test time against the OpenCL and
 * DLPack headers and linked with the ICD loader: it adopts exported handles as a SYCL program's
 * OpenCL interop does and asks {@code clGetMemAllocInfoINTEL} about exported pointers.
 */
final class SyclExportProbe {

    /** The OpenCL extension header (Debian's ocl-icd-opencl-dev installs it with libOpenCL.so). */
    static final Path CL_EXT_HEADER = Path.of("/usr/include/CL/cl_ext.h");

    /** What {@code clGetMemAllocInfoINTEL} says about a pointer. */
    record AllocInfo(int clMemType, long base, long byteSize, long device) {
        UsmKind kind() {
            return UsmFunctions.usmKind(clMemType);
        }
    }

    private final MethodHandle layout;
    private final MethodHandle deviceInfo;
    private final MethodHandle dlTensor;
    private final MethodHandle adoptAndScale;

    private SyclExportProbe(Path library) {
        Linker linker = Linker.nativeLinker();
        SymbolLookup lib = SymbolLookup.libraryLookup(library, Arena.global());
        layout = linker.downcallHandle(lib.find("probe_layout").orElseThrow(),
                FunctionDescriptor.of(JAVA_INT, ADDRESS));
        deviceInfo = linker.downcallHandle(lib.find("probe_device_info").orElseThrow(),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
        dlTensor = linker.downcallHandle(lib.find("probe_dltensor").orElseThrow(),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS));
        adoptAndScale = linker.downcallHandle(lib.find("adopt_and_scale").orElseThrow(),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS, JAVA_INT));
    }

    /** Compiles the probe into {@code dir} (skips, or fails under CI, when gcc or a header is missing). */
    static SyclExportProbe compile(Path dir) {
        NativeToolchain.requireDlpackHeader();
        NativeToolchain.require(Files.isRegularFile(CL_EXT_HEADER), CL_EXT_HEADER.toString(), "ocl-icd-opencl-dev");
        return new SyclExportProbe(NativeToolchain.compileSharedLibrary("native/sycl_export_probe.c", dir,
                List.of("-lOpenCL")));
    }

    /** {@code sizeof} and every {@code offsetof} of {@code datamem_sycl_device_info_v1}, in field order. */
    long[] layout() throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG, 32);
            int n = (int) layout.invokeExact(out);
            return out.asSlice(0, n * 8L).toArray(JAVA_LONG);
        }
    }

    /** Reads a native device_info, adopts its handles and describes {@code ptr}; fails with the C error. */
    AllocInfo describeThroughDeviceInfo(MemorySegment nativeDeviceInfo, long ptr) throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG, 4);
            int status = (int) deviceInfo.invokeExact(nativeDeviceInfo, MemorySegment.ofAddress(ptr), out);
            check(status, "probe_device_info");
            return info(out);
        }
    }

    /** A DLTensor's device (type, id) and what its data pointer is in a context. */
    record TensorInfo(int deviceType, int deviceId, AllocInfo data) {
    }

    TensorInfo describeTensor(MemorySegment dlTensorStruct, long context, long device) throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment dev = arena.allocate(JAVA_INT, 2);
            MemorySegment out = arena.allocate(JAVA_LONG, 4);
            int status = (int) dlTensor.invokeExact(dlTensorStruct, MemorySegment.ofAddress(context),
                    MemorySegment.ofAddress(device), dev, out);
            check(status, "probe_dltensor");
            return new TensorInfo(dev.getAtIndex(JAVA_INT, 0), dev.getAtIndex(JAVA_INT, 1), info(out));
        }
    }

    /** Adopts the handles and runs {@code x[i] = 2 x[i] + 1} over {@code n} floats at {@code ptr} on the queue. */
    void adoptAndScale(long context, long device, long queue, long ptr, int n) throws Throwable {
        int status = (int) adoptAndScale.invokeExact(MemorySegment.ofAddress(context), MemorySegment.ofAddress(device),
                MemorySegment.ofAddress(queue), MemorySegment.ofAddress(ptr), n);
        check(status, "adopt_and_scale");
    }

    private static AllocInfo info(MemorySegment out) {
        return new AllocInfo((int) out.getAtIndex(JAVA_LONG, 0), out.getAtIndex(JAVA_LONG, 1),
                out.getAtIndex(JAVA_LONG, 2), out.getAtIndex(JAVA_LONG, 3));
    }

    private static void check(int status, String what) {
        if (status != 0) {
            throw new AssertionError(what + " failed with " + status + " (OpenCL error, or -100x: the probe's own check)");
        }
    }
}
