package io.datamem.examples.cli;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.impl.AllocatorStack;
import io.datamem.impl.adaptor.GuardAdaptor;
import io.datamem.impl.adaptor.LoggingAdaptor;
import io.datamem.impl.adaptor.StatisticsAdaptor;
import io.datamem.impl.snapshot.LayerSnapshot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.StringReader;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Reading the logs the {@code +log=FILE} adaptor writes, and replaying them against other handlers:
 * what {@code datamem replay}, {@code snapshot --log} and {@code view --log} are built on.
 */
class AllocationLogTest {

    @TempDir
    Path dir;

    @Test
    void whatTheAdaptorWritesReadsBack() {
        Path file = dir.resolve("ops.log");
        DataMemHandler h = DataMem.createHandler("default_allocator+log=" + file);
        DataMemAllocator log = h.allocator();
        MemorySegment a = log.malloc(4096);
        MemorySegment b = log.calloc(100, 8);
        MemorySegment c = log.realloc(a, 4096, 8192);
        log.free(b, 800);
        log.free(MemorySegment.NULL, 0);                        // not an operation: not logged
        assertEquals(0, log.malloc(1L << 50).address());
        log.free(c, 8192);
        AllocatorStack.find(h, LoggingAdaptor.class).orElseThrow().close();
        // read checks the header's version: the adaptor and this reader agree on it
        List<AllocationLog.Entry> entries = AllocationLog.read(file);
        assertEquals(List.of(AllocationLog.Op.MALLOC, AllocationLog.Op.CALLOC, AllocationLog.Op.REALLOC,
                AllocationLog.Op.FREE, AllocationLog.Op.MALLOC, AllocationLog.Op.FREE),
                entries.stream().map(AllocationLog.Entry::op).toList());
        assertEquals(c.address(), entries.get(2).result());
        assertEquals(8192, entries.get(2).requestedBytes());
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
        AllocatorStack.find(h, LoggingAdaptor.class).orElseThrow().close();
        return file;
    }

    @Test
    void aReplayAgainstTwoHandlersGivesTheSameCountsAndPeak() throws Exception {
        List<AllocationLog.Entry> entries = AllocationLog.read(record(1));
        AllocationLog.Replay onDefault = AllocationLog.replay(entries,
                DataMem.createHandler("default_allocator").allocator());
        DataMemHandler aligned = DataMem.createHandler("aligned64+stats");
        StatisticsAdaptor stats = AllocatorStack.find(aligned, StatisticsAdaptor.class).orElseThrow();
        AllocationLog.Replay onAligned = AllocationLog.replay(entries, aligned.allocator());
        assertEquals(entries.size(), onDefault.operations());
        assertEquals(onDefault.mallocs(), onAligned.mallocs());
        assertEquals(onDefault.callocs(), onAligned.callocs());
        assertEquals(onDefault.reallocs(), onAligned.reallocs());
        assertEquals(onDefault.frees(), onAligned.frees());
        assertEquals(onDefault.peakBytes(), onAligned.peakBytes());
        assertEquals(0, onDefault.failures() + onDefault.skipped() + onDefault.leftLiveBlocks());
        LayerSnapshot.Statistics seen = stats.figures();
        assertEquals(seen.peakBytes(), onAligned.peakBytes(), "the replay's peak is what the target saw");
        assertEquals(0, seen.currentBytes());
        assertEquals(onAligned.mallocs() + onAligned.callocs(), seen.allocations());
        assertTrue(onDefault.toString().contains("peak bytes: " + onDefault.peakBytes()), onDefault.toString());
    }

    @Test
    void aLogOfSeveralThreadsReplaysOnOneWithoutConfusingReusedAddresses() throws Exception {
        Path file = record(4);
        DataMemHandler target = DataMem.createHandler("default_allocator+guard+stats");
        AllocationLog.Replay r = AllocationLog.replay(AllocationLog.read(file), target.allocator());
        assertEquals(0, r.skipped(), "every free and realloc named a block the replay had");
        assertEquals(0, r.leftLiveBlocks());
        assertEquals(r.mallocs() + r.callocs(), r.frees());
        assertEquals(0, AllocatorStack.find(target, StatisticsAdaptor.class).orElseThrow().figures().currentBytes());
        GuardAdaptor guard = AllocatorStack.find(target, GuardAdaptor.class).orElseThrow();
        assertEquals(List.of(), guard.violations(), "the replay freed each block once, with its size");
    }

    @Test
    void replayedFailuresAndLeftoversAreCounted() {
        String log = """
                # datamem allocation log 1
                1 1 malloc 100 0x1000
                2 1 malloc 1125899906842624 0x0
                3 1 realloc 0x1000 100 200 0x2000
                4 1 malloc 50 0x3000
                5 1 free 0x9999 8
                6 1 calloc 3 4 0x4000
                7 1 free 0x2000 200
                """;
        List<AllocationLog.Entry> entries = AllocationLog.read(new StringReader(log), "inline");
        // the third request the target sees fails
        DataMemHandler target = DataMem.createHandler("default_allocator+stats+faults=nth:3");
        AllocationLog.Replay r = AllocationLog.replay(entries, target.allocator());
        assertEquals(1, r.loggedFailures());
        assertEquals(1, r.failures(), "the third request (malloc 50) failed in the replay");
        assertEquals(1, r.skipped(), "free of 0x9999, which the replay never had");
        assertEquals(1, r.leftLiveBlocks());
        assertEquals(12, r.leftLiveBytes());
        assertEquals(212, r.peakBytes());
        assertEquals(0, AllocatorStack.find(target, StatisticsAdaptor.class).orElseThrow().figures().currentBytes(),
                "leftovers are freed at the end");
    }

    @Test
    void malformedLogsNameTheLine() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> AllocationLog.read(
                new StringReader("# datamem allocation log 1\n1 1 malloc 10 0x10\n2 1 free 0x10\n"), "bad.log"));
        assertTrue(e.getMessage().startsWith("bad.log line 3: '2 1 free 0x10': free takes 2 fields"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> AllocationLog.read(
                new StringReader("# datamem allocation log 7\n"), "new.log"));
        assertTrue(e.getMessage().contains("log format version 7 (expected: 1)"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> AllocationLog.read(
                new StringReader("1 1 mmap 10 0x10\n"), "x"));
        assertTrue(e.getMessage().startsWith("x line 1"), e.getMessage());
    }
}
