package io.datamem.examples.cli;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.impl.AllocatorStack;
import io.datamem.impl.adaptor.LoggingAdaptor;
import io.datamem.impl.snapshot.MemorySnapshot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.imageio.ImageIO;
import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code datamem view}: the HTML page of a memory snapshot, its sections and chart ids, escaping,
 * no external resources, and (where Chromium is installed) what a real headless browser renders of it.
 */
class SnapshotPageTest {

    /** The handler the snapshots are taken of. */
    private static final String HANDLER = "pool(aligned64)+stats+tracking=full";

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

    /** A snapshot of {@value #HANDLER} with arrays of several size classes live, renamed to test escaping. */
    private static MemorySnapshot snapshotWithLiveArrays(String name) {
        DataMemHandler h = DataMem.createHandler(HANDLER);
        List<NDArray> live = new ArrayList<>();
        MemorySnapshot[] taken = new MemorySnapshot[1];
        DataMem.runWith(h, () -> {
            for (int i = 0; i < 40; i++) {
                live.add(NDArray.zeros(DType.FLOAT64, 8 + i * 16));
                NDArray.zeros(DType.INT8, 100 + i).close();
            }
            for (int i = 0; i < live.size(); i += 3) {
                live.get(i).close();   // holes in the slabs
            }
            taken[0] = MemorySnapshot.take(h);
        });
        for (int i = 0; i < live.size(); i++) {
            if (i % 3 != 0) {
                live.get(i).close();
            }
        }
        MemorySnapshot s = taken[0];
        MemorySnapshot.Handler first = s.handlers().getFirst();
        return new MemorySnapshot(s.time(), s.processId(),
                List.of(new MemorySnapshot.Handler(name, first.version(), first.layers())));
    }

    @Test
    void thePageHasEverySectionAndEscapesAndLoadsNothing() throws Exception {
        MemorySnapshot s = snapshotWithLiveArrays("pool<b>&\"x\"");
        Path json = s.write(dir.resolve("s.json"));
        Run r = cli("view", json.toString());
        assertEquals(0, r.status(), r.out());
        Path page = dir.resolve("s.json.html");
        assertTrue(r.out().contains("page written to " + page), r.out());
        String html = Files.readString(page);
        for (String part : List.of("<!DOCTYPE html>", "datamem-snapshot, version 1", s.time().toString(),
                "<th>process</th><td>" + s.processId() + "</td>", "Live: <b>", "id=\"fragmentation-0\"",
                "fill=\"#d62728\"", "fill=\"#ff9896\"", "largest free run", "Top allocation sites", "id=\"sites-0\"",
                "SnapshotPageTest", "id=\"blocks-0\"", "Live blocks", "<th>NUMA nodes</th>")) {
            assertTrue(html.contains(part), part);
        }
        assertTrue(html.contains("pool&lt;b&gt;&amp;&quot;x&quot;"), "handler name escaped");
        assertFalse(html.contains("pool<b>"), "handler name unescaped");
        assertFalse(html.contains("http://") || html.contains("https://"), "an external reference");
        assertFalse(html.contains("<script") || html.contains("<link") || html.contains("<img"), html);
        assertFalse(html.contains("bytes-over-time"), "no log given");
        long blocks = s.handlers().getFirst().blocks().size();
        assertTrue(blocks > 20, "live blocks " + blocks);
        assertEquals(blocks, html.split("<tr><td><code>0x", -1).length - 1, "a row per live block");
    }

    @Test
    void withALogThePageChartsTheBytesInUseOverTime() throws Exception {
        Path log = logOfArrays();
        Path json = dir.resolve("end.json");
        Run snap = cli("snapshot", "--log", log.toString(), "--handler", HANDLER, "--out", json.toString());
        assertEquals(0, snap.status(), snap.out());
        Path page = dir.resolve("end.html");
        Run r = cli("view", json.toString(), "--log", log.toString(), "--out", page.toString());
        assertEquals(0, r.status(), r.out());
        assertTrue(r.out().contains("logged operations from " + log), r.out());
        String html = Files.readString(page);
        assertTrue(html.contains("id=\"bytes-over-time\"") && html.contains("<polyline"), html);
        assertTrue(html.contains("id=\"fragmentation-0\""), html);
        assertFalse(html.contains("http://") || html.contains("https://"), "an external reference");
        List<long[]> points = SnapshotPage.bytesInUse(AllocationLog.read(log));
        assertEquals(8000 + 4000, points.getLast()[1], "two arrays left live by the log");
        assertEquals(8000 + 4000 + 123, points.stream().mapToLong(p -> p[1]).max().orElseThrow());
        Run missing = cli("view", dir.resolve("nothing.json").toString());
        assertEquals(DatamemCli.FAILURE, missing.status(), missing.out());
    }

    /**
     * A log of arrays: 8000 and 4000 bytes (2000 resized to 4000) left live, 123 allocated and freed
     * while both are live.
     */
    private Path logOfArrays() {
        Path log = dir.resolve("arrays.log");
        DataMemHandler logged = AllocatorStack.on(DataMem.createHandler("default_allocator").allocator())
                .with("log=" + log).handler("default+log");
        NDArray[] kept = new NDArray[2];
        DataMem.runWith(logged, () -> {
            kept[0] = NDArray.zeros(DType.FLOAT64, 1000);
            kept[1] = NDArray.zeros(DType.INT32, 500);
            kept[1].resize(1000);                               // a realloc from 2000 to 4000 bytes
            NDArray.empty(DType.INT8, 123).close();
        });
        AllocatorStack.find(logged, LoggingAdaptor.class).orElseThrow().close();
        kept[0].close();
        kept[1].close();
        return log;
    }

    // ---------------------------------------------------------------------------------------------
    // a real browser

    private static Optional<Path> chromium() {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            for (String name : List.of("chromium", "chromium-browser")) {
                Path p = Path.of(dir.isEmpty() ? "." : dir, name);
                if (Files.isExecutable(p)) {
                    return Optional.of(p);
                }
            }
        }
        return Optional.empty();
    }

    private static Path assumeChromium() throws Exception {
        Optional<Path> c = chromium();
        assumeTrue(c.isPresent(), "no chromium or chromium-browser on the PATH: the page is not rendered in a"
                + " browser (install one: apt-get install -y chromium)");
        // Ubuntu's chromium-browser can be a stub that asks for a snap: not a browser that runs here
        Process version = new ProcessBuilder(c.orElseThrow().toString(), "--version").redirectErrorStream(true)
                .start();
        boolean ran = version.waitFor(60, TimeUnit.SECONDS) && version.exitValue() == 0;
        String said = new String(version.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!ran) {
            version.destroyForcibly();
        }
        assumeTrue(ran && said.contains("Chromium"), c.orElseThrow() + " --version did not answer a Chromium"
                + " version (" + said.strip() + "): the page is not rendered in a browser (install one: apt-get"
                + " install -y chromium)");
        return c.orElseThrow();
    }

    private record Browser(int status, String out) {
    }

    private Browser browser(Path chromium, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(chromium.toString(), "--headless=new", "--no-sandbox",
                "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
                "--user-data-dir=" + Files.createTempDirectory(dir, "profile")));
        command.addAll(List.of(args));
        Path output = Files.createTempFile(dir, "chromium", ".out");
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile()).start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("chromium did not finish in 120 s: " + command + "\n" + Files.readString(output));
        }
        return new Browser(p.exitValue(), Files.readString(output));
    }

    private Path page() throws Exception {
        Path json = snapshotWithLiveArrays(HANDLER).write(dir.resolve("browser.json"));
        Path log = logOfArrays();
        Path page = dir.resolve("browser.html");
        Run r = cli("view", json.toString(), "--log", log.toString(), "--out", page.toString());
        assertEquals(0, r.status(), r.out());
        return page;
    }

    @Test
    void aHeadlessBrowserLoadsThePageWithItsCharts() throws Exception {
        Path chromium = assumeChromium();
        Path page = page();
        Browser b = browser(chromium, "--dump-dom", page.toUri().toString());
        assertEquals(0, b.status(), b.out());
        for (String id : List.of("fragmentation-0", "sites-0", "blocks-0", "bytes-over-time")) {
            assertTrue(b.out().contains("id=\"" + id + "\""), id + " not in the DOM:\n" + b.out());
        }
    }

    @Test
    void aHeadlessBrowserDrawsTheChartsBars() throws Exception {
        Path chromium = assumeChromium();
        Path page = page();
        Path png = dir.resolve("page.png");
        Browser b = browser(chromium, "--screenshot=" + png, "--window-size=1200,1600", page.toUri().toString());
        assertEquals(0, b.status(), b.out());
        assertTrue(Files.size(png) > 0, "no screenshot: " + b.out());
        BufferedImage image = ImageIO.read(png.toFile());
        assertEquals(1200, image.getWidth());
        long used = count(image, 0xd6, 0x27, 0x28);
        long free = count(image, 0xff, 0x98, 0x96);
        long largest = count(image, 0x1f, 0x77, 0xb4);
        // the bars of used bytes (fragmentation and sites) and the line, the free bytes, the largest runs
        assertTrue(used > 5000, "pixels of the used bars (#d62728): " + used);
        assertTrue(free > 500, "pixels of the free bars (#ff9896): " + free);
        assertTrue(largest > 200, "pixels of the largest free runs (#1f77b4): " + largest);
        System.out.printf("screenshot %dx%d: %d used, %d free, %d largest-free-run pixels%n", image.getWidth(),
                image.getHeight(), used, free, largest);
    }

    private static long count(BufferedImage image, int r, int g, int b) {
        long n = 0;
        for (int y = 0; y < image.getHeight(); y++) {
            for (int x = 0; x < image.getWidth(); x++) {
                int rgb = image.getRGB(x, y);
                if (Math.abs((rgb >> 16 & 0xff) - r) <= 8 && Math.abs((rgb >> 8 & 0xff) - g) <= 8
                        && Math.abs((rgb & 0xff) - b) <= 8) {
                    n++;
                }
            }
        }
        return n;
    }
}
