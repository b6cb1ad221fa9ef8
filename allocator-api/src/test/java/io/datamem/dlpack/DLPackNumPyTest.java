package io.datamem.dlpack;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.array.Slice;
import io.datamem.internal.Strides;
import io.datamem.testing.CountingAllocator;
import io.datamem.testing.NativeToolchain;
import io.datamem.testing.Nep49SampleAllocator;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * NumPy (the {@code python3} on {@code PATH}: this image's pyenv NumPy 2.4) imports the versioned
 * DLPack tensors datamem exports, with {@code np.from_dlpack}.
 *
 * <p>The JVM's memory cannot reach another process, so for each case the test exports an array
 * with {@link DLPack#toDLPack(NDArray, DLPackOptions)} (at the {@code max_version} NumPy itself
 * passes to {@code __dlpack__}, and at datamem's newest), reads back every field datamem wrote
 * into the native {@code DLManagedTensorVersioned} and the bytes its data pointer reaches, and
 * hands them to {@code python/dlpack_numpy_consumer.py}. That script rebuilds the identical struct
 * with ctypes over a copy of the bytes, wraps it in a {@code dltensor_versioned} capsule returned
 * by an object's {@code __dlpack__}, and checks what {@code np.from_dlpack} makes of it: shape,
 * strides (in bytes), dtype, writeability from the flags, the values, no copy, and one deleter call.
 * The other way, NumPy's own {@code __dlpack__} exports arrays and views; the script prints every
 * field of the tensors NumPy wrote and the bytes they reach, and the test rebuilds each tensor in
 * native memory and imports it with {@link DLPack#fromDLPack(MemorySegment, boolean)}.
 * Skipped when {@code python3} or NumPy 2.1 (the first to read versioned tensors) is absent.
 */
class DLPackNumPyTest {

    @TempDir
    static Path dir;

    private static Path script;
    private static DLPackVersion numpyMax;

    private final Nep49SampleAllocator sample = new Nep49SampleAllocator();
    private final DataMemHandler h = DataMemHandler.of("dlpack-numpy-test", new CountingAllocator(sample));

    /** The Python that runs the consumer script, or null when none has NumPy >= 2.1. */
    private static String python;
    /** Why no Python qualified, for the skip message. */
    private static String missing;

    /**
     * Finds a Python with NumPy 2.1 or newer: {@code -Ddatamem.test.python=PATH}, else
     * {@code python3} on the PATH, else the interpreters of pyenv ({@code ~/.pyenv/versions/}),
     * where this kind of machine keeps its NumPy 2.4 (a CI shell's PATH holds Debian's, with
     * NumPy 1.24). No such Python skips every test of the class, each counted as skipped.
     */
    @BeforeAll
    static void findNumPy() throws IOException {
        List<String> candidates = new ArrayList<>();
        String configured = System.getProperty("datamem.test.python");
        if (configured != null && !configured.isBlank()) {
            candidates.add(configured);
        }
        candidates.add("python3");
        Path pyenv = Path.of(System.getProperty("user.home"), ".pyenv", "versions");
        if (Files.isDirectory(pyenv)) {
            try (var versions = Files.list(pyenv)) {
                versions.map(v -> v.resolve("bin").resolve("python3")).filter(Files::isExecutable)
                        .sorted(java.util.Comparator.reverseOrder()).forEach(p -> candidates.add(p.toString()));
            }
        }
        List<String> tried = new ArrayList<>();
        for (String candidate : candidates) {
            NativeToolchain.Result version;
            try {
                version = NativeToolchain.run(List.of(candidate, "-c", "import numpy; print(numpy.__version__)"),
                        null);
            } catch (AssertionError e) {
                tried.add(candidate + ": not found");
                continue;
            }
            if (version.exitCode() != 0) {
                tried.add(candidate + ": no NumPy");
                continue;
            }
            String[] v = version.output().trim().split("\\.");
            int major = Integer.parseInt(v[0]);
            int minor = Integer.parseInt(v[1]);
            if (major > 2 || (major == 2 && minor >= 1)) {
                python = candidate;
                break;
            }
            tried.add(candidate + ": NumPy " + version.output().trim());
        }
        if (python == null) {
            missing = "no Python with NumPy >= 2.1, which reads versioned DLPack tensors (tried " + tried
                    + "; set -Ddatamem.test.python=PATH)";
            return;
        }
        script = dir.resolve("dlpack_numpy_consumer.py");
        try (InputStream in = DLPackNumPyTest.class.getClassLoader()
                .getResourceAsStream("python/dlpack_numpy_consumer.py")) {
            Files.write(script, in.readAllBytes());
        }
        NativeToolchain.Result probe = NativeToolchain.run(List.of(python, script.toString(), "probe"), null);
        assertEquals(0, probe.exitCode(), probe.output());
        String[] words = probe.output().trim().split("\\s+");
        assertEquals("max_version", words[0], probe.output());
        numpyMax = new DLPackVersion(Integer.parseInt(words[1]), Integer.parseInt(words[2]));
    }

    @BeforeEach
    void needNumPy() {
        Assumptions.assumeTrue(python != null, () -> "skipped: " + missing);
    }

    @Test
    void numpyImportsWhatDatamemExports() throws IOException {
        StringBuilder cases = new StringBuilder();
        int count = DataMem.callWith(h, () -> {
            int n = 0;
            try (NDArray f64 = NDArray.empty(DType.FLOAT64, 4, 5);
                 NDArray i32 = NDArray.empty(DType.INT32, 3, 4);
                 NDArray u8 = NDArray.empty(DType.UINT8, 6);
                 NDArray scalar = NDArray.empty(DType.FLOAT32);
                 NDArray empty = NDArray.empty(DType.INT16, 0, 3)) {
                fill(f64);
                fill(i32);
                fill(u8);
                fill(scalar);
                Map<String, NDArray> arrays = new LinkedHashMap<>();
                arrays.put("float64-c-contiguous", f64);
                arrays.put("float64-transposed", f64.transpose());
                arrays.put("float64-offset-stepped", f64.slice(Slice.range(1, 4, 2), Slice.range(1, 5)));
                arrays.put("float64-reversed", f64.slice(Slice.every(-1), Slice.every(-2)));
                arrays.put("int32-column", i32.slice(Slice.all(), Slice.range(2, 3)));
                arrays.put("uint8-read-only", u8.asReadOnly());
                arrays.put("float32-0d", scalar);
                arrays.put("int16-zero-size", empty);
                for (Map.Entry<String, NDArray> e : arrays.entrySet()) {
                    for (DLPackVersion version : List.of(numpyMax, DLPackVersion.CURRENT)) {
                        MemorySegment m = DLPack.toDLPack(e.getValue(),
                                DLPackOptions.defaults().withMaxVersion(version));
                        try {
                            describe(cases, e.getKey() + "@" + version, m, e.getValue());
                        } finally {
                            DLPack.release(m, true);
                        }
                        n++;
                    }
                }
            }
            return n;
        });
        Path file = dir.resolve("cases.txt");
        Files.writeString(file, cases);
        NativeToolchain.Result r = NativeToolchain.run(List.of(python, script.toString(), file.toString()), null);
        assertEquals(0, r.exitCode(), r.output());
        long ok = r.output().lines().filter(l -> l.startsWith("OK ")).count();
        assertEquals(count, ok, r.output());
        assertTrue(r.output().contains("strides=(8, 40)"), "the transposed view's strides:\n" + r.output());
        assertTrue(r.output().contains("strides=(-40, -16)"), "the reversed view's strides:\n" + r.output());
        assertTrue(r.output().contains("writeable=False"), "the read-only export:\n" + r.output());
        System.out.println("NumPy's import of datamem's DLPack exports (max_version NumPy passes: " + numpyMax
                + "):\n" + r.output());
    }

    @Test
    void datamemImportsWhatNumPyExports() {
        NativeToolchain.Result r = NativeToolchain.run(List.of(python, script.toString(), "export",
                String.valueOf(DLPackVersion.CURRENT.major()), String.valueOf(DLPackVersion.CURRENT.minor())), null);
        assertEquals(0, r.exitCode(), r.output());
        List<Map<String, String>> cases = parse(r.output());
        assertEquals(6, cases.size(), r.output());
        for (Map<String, String> c : cases) {
            String name = c.get("case");
            long[] shape = longs(c.get("shape"));
            long[] strides = "NULL".equals(c.get("strides")) ? null : longs(c.get("strides"));
            long[] dtype = longs(c.get("dtype"));
            long[] version = longs(c.get("version"));
            long flags = Long.parseLong(c.get("flags"));
            byte[] bytes = HexFormat.of().parseHex(c.getOrDefault("bytes", ""));
            long lowest = Long.parseLong(c.get("lowest"));
            long byteOffset = Long.parseLong(c.get("byte_offset"));
            try (Arena arena = Arena.ofConfined()) {
                // NumPy's bytes from its lowest element on, at the same offsets from the data pointer
                MemorySegment buffer = arena.allocate(Math.max(bytes.length, 1), 64);
                MemorySegment.copy(MemorySegment.ofArray(bytes), 0, buffer, 0, bytes.length);
                long data = "1".equals(c.get("data_null")) ? 0 : buffer.address() - byteOffset - lowest;
                MemorySegment m = arena.allocate(DLPack.DL_MANAGED_TENSOR_VERSIONED);
                m.set(JAVA_INT, 0, (int) version[0]);
                m.set(JAVA_INT, 4, (int) version[1]);
                m.set(JAVA_LONG, 24, flags);
                long t = 32;
                m.set(JAVA_LONG, t, data);
                long[] device = longs(c.get("device"));
                m.set(JAVA_INT, t + 8, (int) device[0]);
                m.set(JAVA_INT, t + 12, (int) device[1]);
                m.set(JAVA_INT, t + 16, shape.length);
                m.set(JAVA_BYTE, t + 20, (byte) dtype[0]);
                m.set(JAVA_BYTE, t + 21, (byte) dtype[1]);
                m.set(JAVA_SHORT, t + 22, (short) dtype[2]);
                m.set(JAVA_LONG, t + 24, shape.length == 0 ? 0 : arena.allocateFrom(JAVA_LONG, shape).address());
                m.set(JAVA_LONG, t + 32, strides == null ? 0 : arena.allocateFrom(JAVA_LONG, strides).address());
                m.set(JAVA_LONG, t + 40, byteOffset);
                try (NDArray a = DLPack.fromDLPack(m, true)) {
                    DType d = a.dtype();
                    assertEquals(DType.ofDlpack((int) dtype[0], (int) dtype[1], (int) dtype[2]), d, name);
                    assertArrayEquals(shape, a.shape(), name);
                    if (strides != null && a.size() > 0) {
                        for (int i = 0; i < shape.length; i++) {
                            assertEquals(strides[i] * d.itemSize(), a.strides()[i], name + " stride " + i);
                        }
                    }
                    assertEquals((flags & DLPack.FLAG_READ_ONLY) != 0, a.isReadOnly(), name + " read-only");
                    if (a.size() > 0) {
                        assertEquals(data + byteOffset, a.address(), name + ": no copy");
                    }
                    long[] values = c.get("values").isBlank() ? new long[0]
                            : Arrays.stream(c.get("values").trim().split("\\s+")).mapToLong(v -> (long) Double.parseDouble(v))
                            .toArray();
                    long[] index = new long[shape.length];
                    for (long k = 0; k < a.size(); k++) {
                        assertEquals(values[(int) k], (long) a.getDouble(index), name + " element " + k);
                        increment(index, shape);
                    }
                    assertEquals(values.length, a.size(), name);
                }
            }
        }
        System.out.println("datamem imported NumPy's exports:\n" + r.output());
    }

    /** The case blocks of the script's output: each key's text after it. */
    private static List<Map<String, String>> parse(String output) {
        List<Map<String, String>> cases = new ArrayList<>();
        Map<String, String> current = null;
        for (String line : output.lines().toList()) {
            String key = line.contains(" ") ? line.substring(0, line.indexOf(' ')) : line;
            String rest = line.contains(" ") ? line.substring(line.indexOf(' ') + 1).trim() : "";
            if (key.equals("case")) {
                current = new LinkedHashMap<>();
                current.put("case", rest);
            } else if (key.equals("end")) {
                cases.add(current);
                current = null;
            } else if (current != null) {
                current.put(key, rest);
            }
        }
        return cases;
    }

    private static long[] longs(String text) {
        return text.isBlank() ? new long[0] : Arrays.stream(text.trim().split("\\s+")).mapToLong(Long::parseLong)
                .toArray();
    }

    /** Element k (in C order) holds k. */
    private static void fill(NDArray a) {
        long[] shape = a.shape();
        long[] index = new long[shape.length];
        for (long k = 0; k < a.size(); k++) {
            a.setLong(k, index);
            increment(index, shape);
        }
    }

    private static void increment(long[] index, long[] shape) {
        for (int i = shape.length - 1; i >= 0; i--) {
            if (++index[i] < shape[i]) {
                return;
            }
            index[i] = 0;
        }
    }

    /** Writes a case: the fields datamem wrote, read back from the struct, and the bytes it reaches. */
    private static void describe(StringBuilder out, String name, MemorySegment m, NDArray a) {
        long t = 32;
        int ndim = m.get(JAVA_INT, t + 16);
        long data = m.get(JAVA_LONG, t);
        long shapePtr = m.get(JAVA_LONG, t + 24);
        long stridesPtr = m.get(JAVA_LONG, t + 32);
        long byteOffset = m.get(JAVA_LONG, t + 40);
        assertTrue(ndim == 0 || stridesPtr != 0, name + ": strides set");
        long[] shape = MemorySegment.ofAddress(shapePtr).reinterpret(8L * ndim).toArray(JAVA_LONG);
        long[] strides = stridesPtr == 0 ? null
                : MemorySegment.ofAddress(stridesPtr).reinterpret(8L * ndim).toArray(JAVA_LONG);
        int item = a.dtype().itemSize();
        byte[] bytes = new byte[0];
        long lowest = 0;
        if (data != 0) {
            long[] byteStrides = new long[ndim];
            for (int i = 0; i < ndim; i++) {
                byteStrides[i] = strides[i] * item;
            }
            // from the lowest element to the highest: data + byte_offset is element 0, which a view
            // with negative strides has above its lowest element
            lowest = Strides.lowestByte(shape, byteStrides);
            long end = Strides.highestByte(shape, byteStrides) + item;
            bytes = MemorySegment.ofAddress(data + byteOffset + lowest).reinterpret(end - lowest).toArray(JAVA_BYTE);
        }
        out.append("case ").append(name).append('\n');
        out.append("version ").append(m.get(JAVA_INT, 0)).append(' ').append(m.get(JAVA_INT, 4)).append('\n');
        out.append("flags ").append(m.get(JAVA_LONG, 24)).append('\n');
        out.append("device ").append(m.get(JAVA_INT, t + 8)).append(' ').append(m.get(JAVA_INT, t + 12)).append('\n');
        out.append("ndim ").append(ndim).append('\n');
        out.append("dtype ").append(m.get(JAVA_BYTE, t + 20) & 0xFF).append(' ')
                .append(m.get(JAVA_BYTE, t + 21) & 0xFF).append(' ').append(m.get(JAVA_SHORT, t + 22) & 0xFFFF)
                .append('\n');
        out.append("shape").append(join(shape)).append('\n');
        out.append("strides").append(strides == null ? " NULL" : join(strides)).append('\n');
        out.append("byte_offset ").append(byteOffset).append('\n');
        out.append("lowest ").append(lowest).append('\n');
        out.append("data_null ").append(data == 0 ? 1 : 0).append('\n');
        out.append("bytes ").append(HexFormat.of().formatHex(bytes)).append('\n');
        out.append("numpy_dtype ").append(a.dtype().name()).append('\n');
        StringBuilder values = new StringBuilder("values");
        long[] index = new long[ndim];
        for (long k = 0; k < a.size(); k++) {
            values.append(' ').append(a.getDouble(index));
            increment(index, shape);
        }
        out.append(values).append('\n').append("end\n");
    }

    private static String join(long[] values) {
        StringBuilder b = new StringBuilder();
        for (long v : values) {
            b.append(' ').append(v);
        }
        return b.toString();
    }
}
