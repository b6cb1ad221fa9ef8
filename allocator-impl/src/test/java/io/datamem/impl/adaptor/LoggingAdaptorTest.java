package io.datamem.impl.adaptor;

import io.datamem.impl.internal.adaptor.LoggingAdaptorImpl;
import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.impl.AllocatorStack;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.StringWriter;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the {@code +log} adaptor writes: the documented line format, an order one thread can replay,
 * flushing and closing. Reading and replaying a log is the command line's ({@code AllocationLogTest}
 * in {@code examples}).
 */
class LoggingAdaptorTest {

    @TempDir
    Path dir;

    @Test
    void everyOperationIsOneLineInTheDocumentedFormat() {
        StringWriter out = new StringWriter();
        LoggingAdaptorImpl log = LoggingAdaptorImpl.to(DataMem.builtinDefault().allocator(), out);
        MemorySegment a = log.malloc(4096);
        MemorySegment b = log.calloc(100, 8);
        MemorySegment c = log.realloc(a, 4096, 8192);
        log.free(b, 800);
        log.free(MemorySegment.NULL, 0);                        // not an operation: not logged
        assertEquals(0, log.malloc(1L << 50).address());
        log.free(c, 8192);
        log.close();
        log.free(log.malloc(1), 1);                             // after close: forwarded, not logged
        List<String> lines = out.toString().lines().toList();
        assertEquals("# datamem allocation log 1", lines.get(0));
        assertTrue(lines.get(1).startsWith("# started "), lines.get(1));
        long id = Thread.currentThread().threadId();
        assertEquals("# thread " + id + " " + Thread.currentThread().getName(), lines.get(2));
        String t = "\\d+ " + id + " ";
        assertTrue(lines.get(3).matches(t + "malloc 4096 " + hex(a)), lines.get(3));
        assertTrue(lines.get(4).matches(t + "calloc 100 8 " + hex(b)), lines.get(4));
        assertTrue(lines.get(5).matches(t + "realloc " + hex(a) + " 4096 8192 " + hex(c)), lines.get(5));
        assertTrue(lines.get(6).matches(t + "free " + hex(b) + " 800"), lines.get(6));
        assertTrue(lines.get(7).matches(t + "malloc 1125899906842624 0x0"), lines.get(7));
        assertTrue(lines.get(8).matches(t + "free " + hex(c) + " 8192"), lines.get(8));
        assertEquals(9, lines.size());
        assertEquals(6, log.lines());
        List<Line> ops = operations(out.toString());
        assertEquals(List.of("malloc", "calloc", "realloc", "free", "malloc", "free"),
                ops.stream().map(Line::op).toList());
        assertEquals(c.address(), address(ops.get(2).fields()[3]), "realloc's RESULT");
        assertEquals(8192, Long.parseLong(ops.get(2).fields()[2]), "realloc's NEW_SIZE");
    }

    private static String hex(MemorySegment p) {
        return "0x" + Long.toHexString(p.address());
    }

    /** Records a mixed workload, from several threads, through a handler named with log=FILE. */
    private Path record(int threads) throws Exception {
        Path file = dir.resolve("workload.log");
        DataMemHandler h = DataMem.createHandler("default_allocator+stats+log=" + file);
        List<Thread> all = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            long seed = t;
            all.add(Thread.ofPlatform().start(() -> {
                SplittableRandom r = new SplittableRandom(seed);
                List<NDArray> live = new ArrayList<>();
                for (int i = 0; i < 400; i++) {
                    int op = r.nextInt(4);
                    if (op < 2 || live.isEmpty()) {
                        int n = r.nextInt(1, 3000);
                        live.add(DataMem.callWith(h, () -> op == 0 ? NDArray.empty(DType.INT32, n)
                                : NDArray.zeros(DType.INT32, n)));
                    } else if (op == 2) {
                        live.get(r.nextInt(live.size())).resize(r.nextInt(0, 3000));
                    } else {
                        live.remove(r.nextInt(live.size())).close();
                    }
                }
                live.forEach(NDArray::close);
            }));
        }
        for (Thread t : all) {
            t.join();
        }
        AllocatorStack.find(h, LoggingAdaptorImpl.class).orElseThrow().close();
        return file;
    }

    @Test
    void aLogOfSeveralThreadsIsInAnOrderOneThreadCanReplay() throws Exception {
        List<Line> ops = operations(Files.readString(record(4)));
        Map<Long, Long> live = new HashMap<>();   // address -> size, walking the log in order
        long allocations = 0;
        long frees = 0;
        for (Line l : ops) {
            String[] f = l.fields();
            switch (l.op()) {
                case "malloc", "calloc" -> {
                    long result = address(f[f.length - 1]);
                    if (result != 0) {
                        long size = l.op().equals("malloc") ? Long.parseLong(f[0])
                                : Long.parseLong(f[0]) * Long.parseLong(f[1]);
                        assertNull(live.put(result, size), l + ": allocated while the log has it live");
                        allocations++;
                    }
                }
                case "realloc" -> {
                    long ptr = address(f[0]);
                    long result = address(f[3]);
                    if (result != 0) {
                        if (ptr != 0) {
                            assertEquals(Long.parseLong(f[1]), live.remove(ptr), l + ": a block the log has live");
                        }
                        assertNull(live.put(result, Long.parseLong(f[2])), l + ": returned while the log has it live");
                    }
                }
                case "free" -> {
                    assertEquals(Long.parseLong(f[1]), live.remove(address(f[0])), l + ": a block the log has live");
                    frees++;
                }
                default -> throw new AssertionError(l);
            }
        }
        assertEquals(Map.of(), live, "every block the workload allocated is freed in the log");
        assertEquals(allocations, frees);
    }

    @Test
    void aLogProviderNameWritesTheFileAndFlushesOnClose() throws Exception {
        Path file = dir.resolve("named.log");
        DataMemHandler h = DataMem.createHandler("aligned64+log=" + file);
        DataMemAllocator a = h.allocator();
        a.free(a.malloc(10), 10);
        ((LoggingAdaptorImpl) a).flush();
        assertEquals(2, operations(Files.readString(file)).size());
        ((LoggingAdaptorImpl) a).close();
        assertTrue(Files.readString(file).startsWith("# datamem allocation log 1"));
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                () -> DataMem.createHandler("aligned64+log"));
        assertTrue(bad.getMessage().contains("expected: log=FILE"), bad.getMessage());
    }

    /**
     * One operation line of a log.
     *
     * @param thread the thread's id
     * @param op     the operation's name
     * @param fields the fields after {@code NANOS THREAD op}
     */
    private record Line(long thread, String op, String[] fields) {

        @Override
        public String toString() {
            return thread + " " + op + " " + String.join(" ", fields);
        }
    }

    /** The operation lines of a log, split at spaces; the comment lines (the header among them) left out. */
    private static List<Line> operations(String log) {
        return log.lines().filter(l -> !l.startsWith("#")).map(l -> {
            String[] f = l.split(" ");
            assertTrue(f.length >= 4 && f[0].matches("\\d+") && f[1].matches("\\d+"), l);
            return new Line(Long.parseLong(f[1]), f[2], Arrays.copyOfRange(f, 3, f.length));
        }).toList();
    }

    /** An address as the log writes it, {@code 0x} and hexadecimal digits. */
    private static long address(String field) {
        assertTrue(field.matches("0x[0-9a-f]+"), field);
        return Long.parseUnsignedLong(field.substring(2), 16);
    }
}
