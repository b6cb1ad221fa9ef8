package io.datamem.examples.cli;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.examples.metrics.PrometheusExample;
import io.datamem.impl.AllocatorStack;
import io.datamem.impl.adaptor.LoggingAdaptor;
import io.datamem.impl.snapshot.MemorySnapshot;
import io.datamem.junit.CheckedMemory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code datamem replay}, {@code datamem metrics}, the Prometheus example and the demo's profiled
 * run, each under a checked handler: the test fails if any of them leaks or misuses memory of the
 * handler bound around it.
 */
@CheckedMemory("default_allocator+stats")
class ObservabilityCommandsTest {

    @TempDir
    Path dir;

    private record Run(int status, String out) {
    }

    private static synchronized Run cli(String... args) {
        PrintStream saved = System.out;
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        System.setOut(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        try {
            int status = DatamemCli.run(args);
            return new Run(status, bytes.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(saved);
        }
    }

    @Test
    void aRecordedLogReplaysAgainstTwoHandlersWithTheSameCountsAndPeak(DataMemHandler checked) {
        Path log = dir.resolve("recorded.log");
        DataMemHandler logged = AllocatorStack.on(checked.allocator())
                .with("log=" + log).handler("checked+log");
        DataMem.runWith(logged, () -> {
            NDArray a = NDArray.zeros(DType.FLOAT64, 1000);
            NDArray b = NDArray.empty(DType.INT8, 123);
            a.resize(3000);
            b.close();
            NDArray c = NDArray.zeros(DType.INT32, 10, 10);
            a.close();
            c.close();
        });
        AllocatorStack.find(logged, LoggingAdaptor.class).orElseThrow().close();
        Run r = cli("replay", log.toString(), "--handler", "default_allocator", "--handler", "aligned64+stats");
        assertEquals(0, r.status(), r.out());
        assertTrue(r.out().startsWith("datamem replay: " + log + ", 7 operations"), r.out());
        List<String> counts = lines(r.out(), "operations: ");
        assertEquals(3, counts.size(), r.out());
        assertTrue(counts.getFirst().startsWith("operations: 7 (malloc 1, calloc 2, realloc 1, free 3) from 1"
                + " thread(s) over "), "first what the log holds: " + r.out());
        assertEquals(List.of("operations: 7 (malloc 1, calloc 2, realloc 1, free 3)",
                "operations: 7 (malloc 1, calloc 2, realloc 1, free 3)"), counts.subList(1, 3));
        assertEquals(List.of("sizes requested: 123 to 24000 bytes, 32523 bytes in all; at most 24400 bytes live at"
                + " once"), lines(r.out(), "sizes requested: "));
        assertEquals(List.of("failed when logged (not replayed): 0; left live at the end: 0 blocks, 0 bytes"),
                lines(r.out(), "failed when logged"));
        assertEquals(List.of("peak bytes: 24400", "peak bytes: 24400"), lines(r.out(), "peak bytes: "));
        assertTrue(r.out().contains("against 'default_allocator':") && r.out().contains("against 'aligned64+stats':"),
                r.out());
        List<String> times = lines(r.out(), "time: ");
        assertEquals(2, times.size(), r.out());
        times.forEach(t -> assertTrue(t.contains(" ms for one pass: not a benchmark ("), t));
        assertFalse(r.out().contains("per operation"), "no rate from one short cold pass: " + r.out());
    }

    private static List<String> lines(String text, String prefix) {
        return text.lines().map(String::strip).filter(l -> l.startsWith(prefix)).toList();
    }

    @Test
    void aSnapshotOfALogsEndShowsWhatItLeftLive(DataMemHandler checked) throws Exception {
        Path log = dir.resolve("left.log");
        DataMemHandler logged = AllocatorStack.on(checked.allocator())
                .with("log=" + log).handler("checked+log");
        NDArray[] kept = new NDArray[1];
        DataMem.runWith(logged, () -> {
            kept[0] = NDArray.zeros(DType.FLOAT64, 1000);      // still live when the log ends
            NDArray.empty(DType.INT8, 123).close();
        });
        AllocatorStack.find(logged, LoggingAdaptor.class).orElseThrow().close();
        kept[0].close();
        Path out = dir.resolve("left.json");
        Run r = cli("snapshot", "--log", log.toString(), "--handler", "pool(aligned64)+stats", "--out", out.toString());
        assertEquals(0, r.status(), r.out());
        assertTrue(r.out().startsWith("datamem snapshot: " + log + ", 3 operations replayed against"
                + " 'pool(aligned64)+stats'; at the log's end 1 block(s), 8000 bytes were live"), r.out());
        assertTrue(r.out().contains("snapshot written to " + out), r.out());
        MemorySnapshot read = MemorySnapshot.read(out);
        assertEquals(8000, read.handlers().getFirst().liveBytes().orElseThrow(), read.summary());
        Run usage = cli("snapshot", "--log", log.toString(), "--handler", "no_such_handler");
        assertEquals(2, usage.status(), usage.out());
    }

    @Test
    void replayingAMalformedLogSaysWhichLine() throws Exception {
        Path log = dir.resolve("bad.log");
        java.nio.file.Files.writeString(log, "1 1 malloc 10\n");
        PrintStream savedErr = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            assertEquals(1, cli("replay", log.toString()).status(), "a failure, not a usage error");
        } finally {
            System.setErr(savedErr);
        }
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("bad.log line 1"), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void metricsPrintsPrometheusScrapeText() {
        Run r = cli("metrics");
        assertEquals(0, r.status(), r.out());
        String tags = "handler=\"aligned64+stats\",handler_version=\"1\",memory_kind=\"host\"";
        assertTrue(r.out().contains("datamem_memory_used_bytes{" + tags + "} 0.0"), r.out());
        assertTrue(r.out().contains("# TYPE datamem_allocations_total counter"), r.out());
        // Counts are counts, bytes are bytes: no count ends in _bytes_total, no series carries a statistic tag.
        assertTrue(r.out().contains("datamem_allocations_total{" + tags + "} 200.0"), r.out());
        assertTrue(r.out().contains("# TYPE datamem_allocation_size_bytes_total counter"), r.out());
        assertTrue(r.out().contains("# TYPE datamem_allocation_size_max_bytes gauge"), r.out());
        assertFalse(r.out().contains("statistic="), r.out());
        // A few size buckets per handler, in numeric order, +Inf last.
        List<String> bounds = Pattern.compile("datamem_allocations_by_size_total\\{[^}]*le=\"([^\"]+)\"")
                .matcher(r.out()).results().map(m -> m.group(1)).toList();
        assertEquals(List.of("63", "1023", "16383", "262143", "4194303", "67108863", "1073741823", "+Inf"), bounds,
                r.out());
        Matcher peak = Pattern.compile("datamem_memory_peak_bytes\\{[^}]*} ([0-9.E]+)").matcher(r.out());
        assertTrue(peak.find() && Double.parseDouble(peak.group(1)) > 0, r.out());
    }

    @Test
    void thePrometheusExampleServesMetricsOverHttp() throws Exception {
        try (PrometheusExample example = new PrometheusExample(DataMem.createHandler("aligned64+stats"))) {
            example.workload(20, 1);
            var server = example.serve(0);
            try {
                URI uri = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/metrics");
                HttpURLConnection c = (HttpURLConnection) uri.toURL().openConnection();
                assertEquals(200, c.getResponseCode());
                assertTrue(c.getContentType().startsWith("text/plain"), c.getContentType());
                String body = new String(c.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                assertTrue(body.contains("datamem_allocations_total{handler=\"aligned64+stats\""), body);
            } finally {
                server.stop(0);
            }
        }
    }

    @Test
    void theDemoEndsWithAProfiledRunAndItsMeterTable() {
        Run r = cli("demo", "--elements", "20000");
        assertEquals(0, r.status(), r.out());
        assertTrue(r.out().contains("profiled run: a compute block under 'aligned64+stats'"), r.out());
        for (String meter : List.of("datamem.memory.used", "datamem.memory.peak", "datamem.allocations",
                "datamem.frees", "datamem.allocation.failures", "datamem.allocation.size")) {
            assertTrue(r.out().contains("  " + meter + " "), meter + " in " + r.out());
        }
        assertTrue(r.out().contains("  datamem.allocation.size        counter                bytes   480000\n"), r.out());
        assertTrue(r.out().contains("  datamem.allocation.size.max    gauge                  bytes   160000\n"), r.out());
        assertTrue(r.out().contains("tags of every meter: handler=aligned64+stats, handler.version=1,"
                + " memory.kind=host"), r.out());
        assertTrue(r.out().contains("the block's own figures (a statistics scope): 3 allocations, 1 reallocations,"
                + " 3 frees, peak 640000 bytes"), r.out());
        assertTrue(r.out().strip().endsWith("ok: both blocks computed the same result and every byte was freed"),
                r.out());
    }
}
