package io.datamem.numpy;

import io.datamem.testing.NativeToolchain;

import java.io.IOException;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static java.lang.foreign.ValueLayout.ADDRESS;

/**
 * NumPy's C API, reached as a C extension reaches it ({@code import_array()}): the capsule
 * {@code <core>._multiarray_umath._ARRAY_API} holds {@code void **PyArray_API}, and the index of
 * each function in that table is read from the installed {@code numpy/__multiarray_api.h}
 * ({@code #define PyDataMem_SetHandler (*(PyObject * (*)(PyObject *)) PyArray_API[304])}), never
 * hard-coded. {@code <core>} is {@code numpy.core} (NumPy 1.x) or {@code numpy._core} (NumPy 2).
 * Every method must be called with the GIL held.
 */
final class NumPyCApi {

    private static final MethodHandle OBJECT_FROM_OBJECT =
            Linker.nativeLinker().downcallHandle(FunctionDescriptor.of(ADDRESS, ADDRESS));
    private static final MethodHandle OBJECT_FROM_NOTHING =
            Linker.nativeLinker().downcallHandle(FunctionDescriptor.of(ADDRESS));

    final String core;
    final String version;
    final Path header;
    final int setHandlerIndex;
    final int getHandlerIndex;
    private final MemorySegment setHandler;
    private final MemorySegment getHandler;

    private NumPyCApi(String core, String version, Path header, int setHandlerIndex, int getHandlerIndex,
            MemorySegment api) {
        this.core = core;
        this.version = version;
        this.header = header;
        this.setHandlerIndex = setHandlerIndex;
        this.getHandlerIndex = getHandlerIndex;
        MemorySegment table = api.reinterpret(8L * (Math.max(setHandlerIndex, getHandlerIndex) + 1));
        this.setHandler = table.getAtIndex(ADDRESS, setHandlerIndex);
        this.getHandler = table.getAtIndex(ADDRESS, getHandlerIndex);
    }

    /**
     * Imports NumPy in the embedded interpreter and finds its C API; skips (fails under CI) when
     * NumPy cannot be imported. Call with the GIL held.
     *
     * @param python the interpreter
     * @return the API
     */
    static NumPyCApi load(EmbeddedPython python) {
        python.exec("""
                try:
                    import numpy as np
                    _dm_numpy = ''
                except BaseException as e:
                    _dm_numpy = repr(e)
                """);
        String failure = python.eval("_dm_numpy");
        NativeToolchain.require(failure.isEmpty(), "NumPy for the embedded " + python.library() + " (import numpy: "
                + failure + ")", "python3-numpy");
        python.exec("""
                import importlib
                try:
                    _dm_umath = importlib.import_module('numpy._core._multiarray_umath')
                    _dm_core = 'numpy._core'
                except ImportError:
                    _dm_umath = importlib.import_module('numpy.core._multiarray_umath')
                    _dm_core = 'numpy.core'
                mm = importlib.import_module(_dm_core + '.multiarray')
                """);
        String core = python.eval("_dm_core");
        String version = python.eval("np.__version__");
        Path header = Path.of(python.eval("np.get_include()"), "numpy", "__multiarray_api.h");
        String text;
        try {
            text = Files.readString(header, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new AssertionError("NumPy " + version + "'s C API header " + header + " cannot be read: " + e, e);
        }
        MemorySegment module = python.importModule(core + "._multiarray_umath");
        if (module.address() == 0) {
            throw new AssertionError("cannot import " + core + "._multiarray_umath");
        }
        MemorySegment capsule = python.attribute(module, "_ARRAY_API");
        python.decref(module);
        if (capsule.address() == 0) {
            throw new AssertionError(core + "._multiarray_umath has no _ARRAY_API");
        }
        MemorySegment api = python.capsulePointer(capsule, MemorySegment.NULL);
        python.decref(capsule); // the module keeps the capsule, and the table, alive
        if (api.address() == 0) {
            throw new AssertionError(core + "._multiarray_umath._ARRAY_API holds NULL");
        }
        return new NumPyCApi(core, version, header,
                index(text, header, "PyDataMem_SetHandler", "PyObject \\* \\(\\*\\)\\(PyObject \\*\\)"),
                index(text, header, "PyDataMem_GetHandler", "PyObject \\* \\(\\*\\)\\(void\\)"), api);
    }

    /**
     * The index of a function in {@code PyArray_API}, from its {@code #define} in the header.
     *
     * @param header    the header's text
     * @param path      where it was read, for messages
     * @param function  the function
     * @param signature the cast the define must contain (a regular expression)
     * @return the index
     */
    static int index(String header, Path path, String function, String signature) {
        Matcher m = Pattern.compile("#define\\s+" + function + "\\s*\\\\\\s*\\(\\*\\(" + signature
                + "\\)\\s*\\\\\\s*PyArray_API\\[(\\d+)\\]\\)").matcher(header);
        if (!m.find()) {
            throw new AssertionError("no '#define " + function + " (*(" + signature.replace("\\", "")
                    + ") PyArray_API[N])' in " + path + ": this NumPy's C API is not laid out as NumPy 1.22-2.x's");
        }
        return Integer.parseInt(m.group(1));
    }

    /**
     * {@code PyDataMem_SetHandler(handler)}.
     *
     * @param handler a capsule named {@code mem_handler}, or NULL for NumPy's default
     * @return a new reference to the previous handler, or NULL on error
     */
    MemorySegment setHandler(MemorySegment handler) {
        try {
            return (MemorySegment) OBJECT_FROM_OBJECT.invokeExact(setHandler, handler);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /**
     * {@code PyDataMem_GetHandler()}.
     *
     * @return a new reference to the current handler's capsule
     */
    MemorySegment getHandler() {
        try {
            return (MemorySegment) OBJECT_FROM_NOTHING.invokeExact(getHandler);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }
}
