package io.datamem.numpy;

import io.datamem.testing.NativeToolchain;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * CPython embedded in the test JVM through FFM: the shared {@code libpython3.X.so} is opened with
 * {@code RTLD_GLOBAL} (extension modules such as NumPy's resolve the interpreter's symbols
 * globally), initialised once with {@code Py_InitializeEx(0)} (no signal handlers: the JVM keeps
 * its own), and used under {@code PyGILState_Ensure}/{@code Release}. It is never finalised: the
 * interpreter can be initialised once per process, so the test that uses it runs in a JVM of its
 * own (datamem-numpy's pom).
 *
 * <p>Python's {@code sys.stdout} and {@code sys.stderr} go to a {@code StringIO} ({@link #output()}),
 * so that nothing writes to the test JVM's own standard streams, which Surefire reads.
 */
final class EmbeddedPython {

    /** Overrides where libpython is looked for. */
    static final String LIBRARY_PROPERTY = "datamem.test.libpython";

    private static final Linker LINKER = Linker.nativeLinker();
    private static final int RTLD_NOW = 2;
    private static final int RTLD_GLOBAL = 0x100;
    private static EmbeddedPython instance;

    private final Path library;
    private final SymbolLookup symbols;
    private final Arena arena = Arena.ofAuto();
    private final MethodHandle gilEnsure;
    private final MethodHandle gilRelease;
    private final MethodHandle runSimpleString;
    private final MethodHandle importModule;
    private final MethodHandle addModule;
    private final MethodHandle moduleGetDict;
    private final MethodHandle dictGetItemString;
    private final MethodHandle dictSetItemString;
    private final MethodHandle unicodeFromString;
    private final MethodHandle unicodeAsUtf8;
    private final MethodHandle getAttrString;
    private final MethodHandle capsuleNew;
    private final MethodHandle capsuleGetPointer;
    private final MethodHandle decRef;
    private final MethodHandle errClear;
    private final String version;

    private EmbeddedPython(Path library, SymbolLookup symbols) throws Throwable {
        this.library = library;
        this.symbols = symbols;
        gilEnsure = handle("PyGILState_Ensure", FunctionDescriptor.of(JAVA_INT));
        gilRelease = handle("PyGILState_Release", FunctionDescriptor.ofVoid(JAVA_INT));
        runSimpleString = handle("PyRun_SimpleString", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        importModule = handle("PyImport_ImportModule", FunctionDescriptor.of(ADDRESS, ADDRESS));
        addModule = handle("PyImport_AddModule", FunctionDescriptor.of(ADDRESS, ADDRESS));
        moduleGetDict = handle("PyModule_GetDict", FunctionDescriptor.of(ADDRESS, ADDRESS));
        dictGetItemString = handle("PyDict_GetItemString", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
        dictSetItemString = handle("PyDict_SetItemString", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
        unicodeFromString = handle("PyUnicode_FromString", FunctionDescriptor.of(ADDRESS, ADDRESS));
        unicodeAsUtf8 = handle("PyUnicode_AsUTF8", FunctionDescriptor.of(ADDRESS, ADDRESS));
        getAttrString = handle("PyObject_GetAttrString", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
        capsuleNew = handle("PyCapsule_New", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, ADDRESS));
        capsuleGetPointer = handle("PyCapsule_GetPointer", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
        decRef = handle("Py_DecRef", FunctionDescriptor.ofVoid(ADDRESS));
        errClear = handle("PyErr_Clear", FunctionDescriptor.ofVoid());

        MethodHandle isInitialized = handle("Py_IsInitialized", FunctionDescriptor.of(JAVA_INT));
        if ((int) isInitialized.invokeExact() == 0) {
            handle("Py_InitializeEx", FunctionDescriptor.ofVoid(JAVA_INT)).invokeExact(0);
            // Py_InitializeEx leaves this thread holding the GIL: release it, so that every use,
            // on any thread, takes it with PyGILState_Ensure.
            MemorySegment unused = (MemorySegment) handle("PyEval_SaveThread", FunctionDescriptor.of(ADDRESS))
                    .invokeExact();
            assert unused.address() != 0;
        }
        version = ((MemorySegment) handle("Py_GetVersion", FunctionDescriptor.of(ADDRESS)).invokeExact())
                .reinterpret(1000).getString(0);
        withGil(() -> {
            exec("import io, sys\n_dm_out = io.StringIO()\nsys.stdout = _dm_out\nsys.stderr = _dm_out");
            return null;
        });
    }

    private MethodHandle handle(String name, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(symbols.findOrThrow(name), descriptor);
    }

    /**
     * The interpreter of this process, started on first use; skips (fails under CI) when no shared
     * libpython is found.
     *
     * @return the interpreter
     */
    static synchronized EmbeddedPython get() {
        if (instance == null) {
            Path library = locate();
            NativeToolchain.require(library != null, "a shared libpython3 (looked for: -D" + LIBRARY_PROPERTY
                    + ", the LIBDIR/INSTSONAME of " + NativeToolchain.PYTHON3 + ", /usr/lib/*-linux-gnu/libpython3.*.so.1.0)",
                    "python3-dev");
            try {
                dlopenGlobal(library);
                instance = new EmbeddedPython(library, SymbolLookup.libraryLookup(library, Arena.global()));
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable t) {
                throw new AssertionError(t);
            }
        }
        return instance;
    }

    private static Path locate() {
        String override = System.getProperty(LIBRARY_PROPERTY);
        if (override != null && !override.isBlank()) {
            return Path.of(override);
        }
        List<Path> candidates = new ArrayList<>();
        if (Files.isExecutable(NativeToolchain.PYTHON3)) {
            NativeToolchain.Result r = NativeToolchain.run(List.of(NativeToolchain.PYTHON3.toString(), "-c",
                    "import sysconfig as s; print(s.get_config_var('LIBDIR')); print(s.get_config_var('INSTSONAME'));"
                            + " print(s.get_config_var('LDLIBRARY'))"), null);
            String[] lines = r.output().trim().split("\n");
            if (r.exitCode() == 0 && lines.length == 3) {
                candidates.add(Path.of(lines[0].trim(), lines[1].trim()));
                candidates.add(Path.of(lines[0].trim(), lines[2].trim()));
            }
        }
        for (String dir : List.of("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib")) {
            try (var files = Files.list(Path.of(dir))) {
                files.filter(p -> p.getFileName().toString().matches("libpython3\\.\\d+\\.so\\.1\\.0"))
                        .sorted().forEach(candidates::add);
            } catch (java.io.IOException e) {
                // no such directory
            }
        }
        return candidates.stream().filter(p -> p.getFileName().toString().contains(".so") && Files.isRegularFile(p))
                .findFirst().orElse(null);
    }

    private static void dlopenGlobal(Path library) throws Throwable {
        SymbolLookup libc = LINKER.defaultLookup();
        MemorySegment dlopen = libc.find("dlopen").orElseGet(() ->
                SymbolLookup.libraryLookup("libdl.so.2", Arena.global()).findOrThrow("dlopen"));
        MethodHandle open = LINKER.downcallHandle(dlopen, FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT));
        MemorySegment handle = (MemorySegment) open.invokeExact(Arena.global().allocateFrom(library.toString()),
                RTLD_NOW | RTLD_GLOBAL);
        if (handle.address() == 0) {
            MethodHandle error = LINKER.downcallHandle(libc.findOrThrow("dlerror"), FunctionDescriptor.of(ADDRESS));
            throw new AssertionError("dlopen(" + library + ", RTLD_NOW | RTLD_GLOBAL) failed: "
                    + ((MemorySegment) error.invokeExact()).reinterpret(4096).getString(0));
        }
    }

    /** The library loaded. */
    Path library() {
        return library;
    }

    /** {@code Py_GetVersion()}. */
    String version() {
        return version;
    }

    /**
     * Runs {@code body} holding the GIL ({@code PyGILState_Ensure}, then {@code Release}).
     *
     * @param body what to run
     * @param <T>  its result
     * @return its result
     */
    <T> T withGil(Supplier<T> body) {
        int state;
        try {
            state = (int) gilEnsure.invokeExact();
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
        try {
            return body.get();
        } finally {
            try {
                gilRelease.invokeExact(state);
            } catch (Throwable t) {
                throw new AssertionError(t);
            }
        }
    }

    private MemorySegment cString(String s) {
        return arena.allocateFrom(s);
    }

    private MemorySegment mainDict() throws Throwable {
        MemorySegment main = (MemorySegment) addModule.invokeExact(cString("__main__"));
        return (MemorySegment) moduleGetDict.invokeExact(main);
    }

    /**
     * Runs statements in {@code __main__}, with the GIL held; a Python exception becomes an
     * {@link AssertionError} with its traceback.
     *
     * @param code Python statements
     */
    void exec(String code) {
        try {
            MemorySegment dict = mainDict();
            MemorySegment text = (MemorySegment) unicodeFromString.invokeExact(cString(code));
            int rc = (int) dictSetItemString.invokeExact(dict, cString("_dm_code"), text);
            decRef.invokeExact(text);
            if (rc != 0) {
                throw new AssertionError("cannot pass code to Python");
            }
            int status = (int) runSimpleString.invokeExact(cString("""
                    try:
                        exec(_dm_code, globals())
                        _dm_error = ''
                    except BaseException:
                        import traceback
                        _dm_error = traceback.format_exc()
                    """));
            String error = global("_dm_error");
            if (status != 0 || !error.isEmpty()) {
                throw new AssertionError("Python failed:\n" + code + "\n" + error);
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /**
     * Evaluates an expression in {@code __main__}, with the GIL held.
     *
     * @param expression a Python expression
     * @return {@code str()} of its value
     */
    String eval(String expression) {
        exec("_dm_value = str(" + expression + ")");
        return global("_dm_value");
    }

    private String global(String name) {
        try {
            MemorySegment value = (MemorySegment) dictGetItemString.invokeExact(mainDict(), cString(name));
            if (value.address() == 0) {
                throw new AssertionError("no global " + name);
            }
            return ((MemorySegment) unicodeAsUtf8.invokeExact(value)).reinterpret(Integer.MAX_VALUE).getString(0);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** What Python printed so far. */
    String output() {
        return eval("_dm_out.getvalue()");
    }

    /**
     * {@code PyImport_ImportModule}, with the GIL held.
     *
     * @param name the module
     * @return a new reference, or NULL (the error cleared)
     */
    MemorySegment importModule(String name) {
        try {
            MemorySegment m = (MemorySegment) importModule.invokeExact(cString(name));
            if (m.address() == 0) {
                errClear.invokeExact();
            }
            return m;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /**
     * {@code PyObject_GetAttrString}, with the GIL held.
     *
     * @param object an object
     * @param name   the attribute
     * @return a new reference, or NULL (the error cleared)
     */
    MemorySegment attribute(MemorySegment object, String name) {
        try {
            MemorySegment a = (MemorySegment) getAttrString.invokeExact(object, cString(name));
            if (a.address() == 0) {
                errClear.invokeExact();
            }
            return a;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /**
     * {@code PyCapsule_New(pointer, name, NULL)}, with the GIL held. The name must outlive the
     * capsule.
     *
     * @param pointer the pointer
     * @param name    the capsule's name, a C string
     * @return a new reference
     */
    MemorySegment capsule(MemorySegment pointer, MemorySegment name) {
        try {
            return (MemorySegment) capsuleNew.invokeExact(pointer, name, MemorySegment.NULL);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /**
     * {@code PyCapsule_GetPointer}, with the GIL held.
     *
     * @param capsule a capsule
     * @param name    its name as a C string, or NULL
     * @return the pointer, or NULL (the error cleared)
     */
    MemorySegment capsulePointer(MemorySegment capsule, MemorySegment name) {
        try {
            MemorySegment p = (MemorySegment) capsuleGetPointer.invokeExact(capsule, name);
            if (p.address() == 0) {
                errClear.invokeExact();
            }
            return p;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /**
     * Binds a global of {@code __main__} to an object, with the GIL held.
     *
     * @param name   the global's name
     * @param object the object (the dictionary takes its own reference)
     */
    void setGlobal(String name, MemorySegment object) {
        try {
            int rc = (int) dictSetItemString.invokeExact(mainDict(), cString(name), object);
            if (rc != 0) {
                errClear.invokeExact();
                throw new AssertionError("cannot set the Python global " + name);
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /**
     * {@code Py_DecRef}, with the GIL held.
     *
     * @param object an object, or NULL
     */
    void decref(MemorySegment object) {
        try {
            decRef.invokeExact(object);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }
}
