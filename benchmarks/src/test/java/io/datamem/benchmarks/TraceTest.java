package io.datamem.benchmarks;

import io.datamem.benchmarks.report.Result;
import io.datamem.benchmarks.report.Trace;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TraceTest {

    @TempDir
    Path dir;

    @Test
    void theStandardTraceIsTheSameEveryTimeAndSkewedTowardSmallBlocks() {
        Trace a = Trace.standard();
        Trace b = Trace.standard();
        assertArrayEquals(a.sizes(), b.sizes());
        assertArrayEquals(a.slots(), b.slots());
        assertEquals(Trace.ALLOCATIONS, a.sizes().length);
        assertEquals(Trace.STEPS, a.slots().length);
        long[] sizes = a.sizes();
        assertTrue(Arrays.stream(sizes).allMatch(s -> s >= 16 && s <= 65536 && s % 8 == 0));
        double small = Arrays.stream(sizes).filter(s -> s <= 256).count() / (double) sizes.length;
        double large = Arrays.stream(sizes).filter(s -> s > 16384).count() / (double) sizes.length;
        assertTrue(small > 0.55 && small < 0.62, "about 58% at most 256 B: " + small);
        assertTrue(large > 0.07 && large < 0.11, "about 9% above 16 KiB: " + large);
        assertEquals(128, a.medianBytes());
        assertTrue(Arrays.stream(a.slots()).allMatch(s -> s >= 0 && s < Trace.WINDOW));
    }

    @Test
    void aReplayFreesEveryBlockWithTheSizeItWasAllocatedWith() {
        Trace t = Trace.generate(7, 8, 100);
        long[] live = new long[8];
        List<String> wrong = new ArrayList<>();
        long[] counts = new long[2];
        long total = t.replay(new Trace.Heap() {
            @Override
            public void allocate(int slot, long byteSize) {
                if (live[slot] != 0) {
                    wrong.add("allocate into a full slot " + slot);
                }
                live[slot] = byteSize;
                counts[0]++;
            }

            @Override
            public void touch(int slot, long offset) {
                if (offset >= live[slot]) {
                    wrong.add("touch past the end of slot " + slot);
                }
            }

            @Override
            public void free(int slot, long byteSize) {
                if (live[slot] != byteSize) {
                    wrong.add("free of slot " + slot + " with " + byteSize + " bytes, allocated " + live[slot]);
                }
                live[slot] = 0;
                counts[1]++;
            }
        }, 2);
        assertEquals(List.of(), wrong);
        assertEquals(108, counts[0]);
        assertEquals(108, counts[1]);
        assertEquals(Arrays.stream(t.sizes()).sum(), total);
        assertTrue(t.peakLiveBytes() > 0 && t.peakLiveBytes() <= 8 * 65536);
    }

    @Test
    void theTraceFileIsWhatDmbenchPairsReads() throws Exception {
        Trace t = Trace.generate(3, 4, 10);
        Path f = dir.resolve("trace.bin");
        t.write(f);
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(f)).order(ByteOrder.LITTLE_ENDIAN);
        byte[] magic = new byte[8];
        b.get(magic);
        assertEquals("DMTRACE1", new String(magic, java.nio.charset.StandardCharsets.US_ASCII));
        assertEquals(4, b.getLong());
        assertEquals(10, b.getLong());
        for (long s : t.sizes()) {
            assertEquals(s, b.getLong());
        }
        for (int s : t.slots()) {
            assertEquals(s, b.getInt());
        }
        assertEquals(0, b.remaining());
    }

    @Test
    void externalResultsReadAsJmhResults() {
        String json = "[" + ExternalResults.result("io.datamem.benchmarks.CPeers.pair", "avgt",
                Map.of("allocator", "tcmalloc", "byteSize", "64"), 1, new double[] {6.0, 5.0, 7.0, 5.5, 6.5}, "ns/op",
                "C, libtcmalloc_minimal.so.4") + "]";
        Result r = Result.parseAll(json).getFirst();
        assertEquals("CPeers.pair", r.benchmark());
        assertEquals("tcmalloc", r.param("allocator"));
        assertEquals(6.0, r.score(), 1e-9);
        assertEquals(1.0, r.error(), 1e-9, "fewer than 11 repeats: the whole range");
        assertEquals(5.0, r.percentile(0), 1e-9);
        assertEquals(1, r.forks());
        Result one = Result.parseAll("[" + ExternalResults.result("io.datamem.benchmarks.TraceRss.peak", "ss",
                Map.of("allocator", "c"), 5, new double[] {1e6}, "B", "25") + "]").getFirst();
        assertTrue(Double.isNaN(one.error()), "one value has no error");
        assertEquals(5, one.forks());
    }
}
