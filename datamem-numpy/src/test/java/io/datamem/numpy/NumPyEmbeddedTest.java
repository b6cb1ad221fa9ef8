package io.datamem.numpy;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.impl.adaptor.StatisticsAdaptor;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * End to end, with NumPy inside the JVM: CPython is embedded through FFM ({@link EmbeddedPython}),
 * a Java handler is exported with {@link PyDataMem#export}, wrapped in a {@code mem_handler}
 * capsule and installed with NumPy's own {@code PyDataMem_SetHandler} (found in the
 * {@code _ARRAY_API} table, {@link NumPyCApi}). Arrays NumPy creates then report the Java handler's
 * name, their bytes show in its statistics, deleting them frees through it with the right sizes,
 * and setting the previous handler back restores {@code default_allocator}. The other way, NumPy's
 * own default handler is imported into Java and serves an {@link NDArray}.
 *
 * <p>Runs in a JVM of its own (CPython is initialised once per process); skips, saying what to
 * install, without a shared libpython or NumPy, and fails under {@code CI=true}.
 */
class NumPyEmbeddedTest {

    private static final MemorySegment CAPSULE_NAME = Arena.global().allocateFrom(PyDataMem.CAPSULE_NAME);

    private static EmbeddedPython python;
    private static NumPyCApi numpy;

    @BeforeAll
    static void startPython() {
        python = EmbeddedPython.get();
        numpy = python.withGil(() -> NumPyCApi.load(python));
        report("embedded CPython " + python.version().replace('\n', ' ') + " from " + python.library());
        report("NumPy " + numpy.version + " (" + numpy.core + "), " + numpy.header + ": PyDataMem_SetHandler is "
                + "PyArray_API[" + numpy.setHandlerIndex + "], PyDataMem_GetHandler PyArray_API["
                + numpy.getHandlerIndex + "]");
    }

    @AfterAll
    static void pythonOutput() {
        if (python != null) {
            String out = python.withGil(python::output);
            if (!out.isEmpty()) {
                report("Python printed: " + out);
            }
        }
    }

    private static void report(String line) {
        System.out.println("[numpy-e2e] " + line);
    }

    private static String name(String expression) {
        return python.eval("mm.get_handler_name(" + expression + ")");
    }

    private static long dataAddress(String array) {
        return Long.parseLong(python.eval(array + ".__array_interface__['data'][0]"));
    }

    @Test
    void numpyArraysAllocateAndFreeThroughTheJavaHandler() {
        DataMemHandler handler = DataMem.createHandler("default_allocator+stats");
        StatisticsAdaptor stats = assertInstanceOf(StatisticsAdaptor.class, handler.allocator());
        try (ExportedHandler exported = PyDataMem.export(handler)) {
            python.withGil(() -> {
                String before = name("");
                report("handler name before: " + before);
                assertEquals("default_allocator", before);

                MemorySegment capsule = python.capsule(exported.struct(), CAPSULE_NAME);
                MemorySegment previous = numpy.setHandler(capsule);
                assertNotEquals(0, previous.address(), "PyDataMem_SetHandler accepted the capsule");
                assertEquals("default_allocator+stats", name(""), "NumPy's current handler is the Java one");

                python.exec("""
                        a = np.empty(1000)
                        b = np.arange(500, dtype=np.int32)
                        z = np.zeros((20, 30))
                        a[:] = 2.0
                        total = float(a.sum() + b.sum() + z.sum())
                        """);
                assertEquals(2000.0 + 124750.0, Double.parseDouble(python.eval("total")));
                for (String array : new String[] {"a", "b", "z"}) {
                    assertEquals("default_allocator+stats", name(array), array + " reports the Java handler");
                    assertEquals("1", python.eval("mm.get_handler_version(" + array + ")"));
                }
                assertEquals(8000, exported.liveBlockSize(dataAddress("a")).orElseThrow(), "np.empty(1000)");
                assertEquals(2000, exported.liveBlockSize(dataAddress("b")).orElseThrow(), "np.arange(500, int32)");
                assertEquals(4800, exported.liveBlockSize(dataAddress("z")).orElseThrow(), "np.zeros((20, 30))");
                assertEquals(3, exported.liveBlocks());
                assertEquals(14800, exported.liveBytes());
                assertEquals(14800, stats.figures().currentBytes(), "NumPy's bytes are in the Java handler's statistics");
                report("after a = np.empty(1000), b = np.arange(500, dtype=np.int32), z = np.zeros((20, 30)): "
                        + "get_handler_name(a) = " + name("a") + ", live blocks " + exported.liveBlocks()
                        + ", stats.figures().currentBytes() = " + stats.figures().currentBytes() + ", allocations = "
                        + stats.figures().allocations());

                python.exec("a.resize(3000, refcheck=False)");     // NumPy's realloc: no old size
                assertEquals(24000, exported.liveBlockSize(dataAddress("a")).orElseThrow());
                assertEquals(2.0, Double.parseDouble(python.eval("a[999]")), "realloc kept the data");
                assertEquals(30800, stats.figures().currentBytes());
                assertEquals(1, stats.figures().reallocations());
                report("after a.resize(3000): stats.figures().currentBytes() = " + stats.figures().currentBytes() + ", reallocations = "
                        + stats.figures().reallocations());

                python.exec("del a, b, z");
                assertEquals(0, exported.liveBlocks(), "deleting the arrays freed them through the handler");
                assertEquals(0, stats.figures().currentBytes());
                assertEquals(stats.figures().allocations(), stats.figures().frees(), "every allocation freed");
                report("after del a, b, z: live blocks " + exported.liveBlocks() + ", stats.figures().currentBytes() = "
                        + stats.figures().currentBytes() + ", frees = " + stats.figures().frees() + ", freed bytes = "
                        + stats.figures().freedBytes());

                python.exec("kept = np.ones(300)");               // outlives the handler's reign
                MemorySegment ours = numpy.setHandler(previous);
                assertEquals(capsule.address(), ours.address(), "SetHandler returned our capsule");
                python.decref(ours);
                python.decref(previous);
                python.decref(capsule);                            // arrays and NumPy hold their own references

                python.exec("c = np.empty(10)");
                String after = name("c");
                report("handler name after setting the previous one back: get_handler_name(c) = " + after
                        + ", get_handler_name() = " + name(""));
                assertEquals("default_allocator", after);
                assertEquals("default_allocator", name(""));
                assertEquals("default_allocator+stats", name("kept"), "an array keeps the handler it was made with");
                assertEquals(1, exported.liveBlocks());
                python.exec("del kept, c");
                assertEquals(0, exported.liveBlocks(), "freed through the Java handler after it was uninstalled");
                return null;
            });
            ExportStatistics s = exported.statistics();
            report("export statistics: " + s);
            assertEquals(0, stats.figures().currentBytes());
            assertEquals(stats.figures().allocations(), s.allocations());
            assertEquals(s.allocations(), s.frees());
            assertEquals(0, s.sizeMismatches(), () -> "NumPy freed each block with its size: " + s);
            assertEquals(0, s.foreignFrees() + s.doubleFrees() + s.foreignReallocs() + s.upcallErrors(), s::toString);
            report("statistics of default_allocator+stats: allocated " + stats.figures().allocatedBytes() + " bytes in "
                    + stats.figures().allocations() + " allocations, " + stats.figures().reallocations() + " reallocation, freed "
                    + stats.figures().freedBytes() + " bytes in " + stats.figures().frees() + " frees, peak " + stats.figures().peakBytes());
        }
    }

    @Test
    void closingWhileNumPyHoldsArraysIsSafe() {
        DataMemHandler handler = DataMem.createHandler("default_allocator+stats");
        StatisticsAdaptor stats = (StatisticsAdaptor) handler.allocator();
        ExportedHandler exported = PyDataMem.export(handler);
        python.withGil(() -> {
            MemorySegment capsule = python.capsule(exported.struct(), CAPSULE_NAME);
            MemorySegment previous = numpy.setHandler(capsule);
            python.exec("held = np.empty(2000)");
            exported.close();                                      // NumPy still holds `held`, and the handler is installed
            python.exec("""
                    try:
                        np.empty(100)
                        _dm_after_close = 'allocated'
                    except MemoryError as e:
                        _dm_after_close = 'MemoryError'
                    """);
            assertEquals("MemoryError", python.eval("_dm_after_close"), "a closed export allocates nothing");
            python.decref(numpy.setHandler(previous));             // (even a 0-d temporary needs an allocation)
            python.decref(previous);
            python.decref(capsule);
            python.exec("held[:] = 1.5");
            assertEquals(3000.0, Double.parseDouble(python.eval("float(held.sum())")), "live blocks stay valid");
            assertEquals("default_allocator+stats", name("held"));
            python.exec("del held");
            return null;
        });
        ExportStatistics s = exported.statistics();
        report("closed while NumPy held an array: " + s);
        assertEquals(0, s.liveBlocks());
        assertEquals(1, s.frees(), "freed through the handler after close");
        assertTrue(s.refusedAfterClose() >= 1);
        assertEquals(0, stats.figures().currentBytes());
        assertEquals(0, s.upcallErrors());
    }

    @Test
    void numpysDefaultHandlerImportedIntoJavaServesAnArray() {
        python.withGil(() -> {
            MemorySegment capsule = numpy.getHandler();
            assertNotEquals(0, capsule.address());
            MemorySegment struct = python.capsulePointer(capsule, CAPSULE_NAME);
            DataMemHandler numpysDefault = PyDataMem.importHandler(struct);
            report("NumPy's current handler imported into Java: " + numpysDefault + " (" + numpysDefault.allocator()
                    + ")");
            assertEquals("default_allocator", numpysDefault.name());
            // NumPy's default functions use a cache guarded by the GIL: called here, with it held.
            try (NDArray a = DataMem.callWith(numpysDefault, () -> NDArray.zeros(DType.FLOAT64, 1000))) {
                a.setDouble(7.0, 999);
                a.resize(5000);
                assertEquals(7.0, a.getDouble(999));
                assertEquals(0.0, a.getDouble(4999));
            }
            python.decref(capsule);
            return null;
        });
    }
}
