package io.datamem.numpy;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.testing.NativeToolchain;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@link PyDataMem#HANDLER_LAYOUT} against NumPy's own declaration: a probe compiled at test time
 * against {@code numpy/ndarraytypes.h} (Debian's python3-numpy and python3-dev) reports
 * {@code sizeof} and {@code offsetof} of every field, and reads an exported struct through NumPy's
 * type.
 */
class HandlerLayoutTest {

    @TempDir
    static Path dir;

    private static MethodHandle probeLayout;
    private static MethodHandle probeVersion;
    private static MethodHandle probeName;

    @BeforeAll
    static void compile() {
        Path python = NativeToolchain.python3();
        NativeToolchain.Result r = NativeToolchain.run(List.of(python.toString(), "-c",
                "import numpy; print(numpy.get_include())"), null);
        NativeToolchain.require(r.exitCode() == 0, "NumPy for " + python + " (" + r.output().trim() + ")",
                "python3-numpy");
        Path include = Path.of(r.output().trim());
        NativeToolchain.require(Files.isRegularFile(include.resolve("numpy/ndarraytypes.h")),
                include + "/numpy/ndarraytypes.h (NumPy's C headers)", "python3-numpy");
        List<String> flags = new ArrayList<>(NativeToolchain.pythonIncludes());
        flags.add("-I" + include);
        Path so = NativeToolchain.compileSharedLibrary("native/nep49_layout_probe.c", dir, flags);
        SymbolLookup lookup = SymbolLookup.libraryLookup(so, Arena.global());
        Linker linker = Linker.nativeLinker();
        probeLayout = linker.downcallHandle(lookup.findOrThrow("probe_layout"), FunctionDescriptor.of(JAVA_LONG,
                JAVA_INT));
        probeVersion = linker.downcallHandle(lookup.findOrThrow("probe_version"), FunctionDescriptor.of(JAVA_INT,
                ADDRESS));
        probeName = linker.downcallHandle(lookup.findOrThrow("probe_name"), FunctionDescriptor.ofVoid(ADDRESS,
                ADDRESS, JAVA_LONG));
    }

    private static long c(int index) throws Throwable {
        return (long) probeLayout.invokeExact(index);
    }

    private static long allocatorField(String name) {
        return PyDataMem.ALLOCATOR_LAYOUT.byteOffset(PathElement.groupElement(name));
    }

    @Test
    void layoutIsNumPys() throws Throwable {
        assertEquals(c(0), PyDataMem.HANDLER_LAYOUT.byteSize(), "sizeof(PyDataMem_Handler)");
        assertEquals(c(1), PyDataMem.HANDLER_LAYOUT.byteOffset(PathElement.groupElement("name")));
        assertEquals(c(2), PyDataMem.NAME_FIELD_BYTES, "sizeof name");
        assertEquals(c(3), PyDataMem.HANDLER_LAYOUT.byteOffset(PathElement.groupElement("version")));
        assertEquals(c(4), PyDataMem.HANDLER_LAYOUT.byteOffset(PathElement.groupElement("allocator")));
        assertEquals(c(5), PyDataMem.ALLOCATOR_LAYOUT.byteSize(), "sizeof(PyDataMemAllocator)");
        assertEquals(c(6), allocatorField("ctx"));
        assertEquals(c(7), allocatorField("malloc"));
        assertEquals(c(8), allocatorField("calloc"));
        assertEquals(c(9), allocatorField("realloc"));
        assertEquals(c(10), allocatorField("free"));
        assertEquals(c(11), PyDataMem.HANDLER_LAYOUT.byteAlignment(), "alignment");
    }

    @Test
    void numpysTypeReadsAnExportedStruct() throws Throwable {
        try (ExportedHandler e = PyDataMem.export(DataMemHandler.of("read-by-numpy-type",
                DataMem.builtinDefault().allocator())); Arena arena = Arena.ofConfined()) {
            assertEquals(1, (int) probeVersion.invokeExact(e.struct()));
            MemorySegment out = arena.allocate(200);
            probeName.invokeExact(e.struct(), out, 200L);
            assertEquals("read-by-numpy-type", out.getString(0));
        }
    }
}
