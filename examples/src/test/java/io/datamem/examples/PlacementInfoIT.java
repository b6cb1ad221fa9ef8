package io.datamem.examples;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code ./datamem info} prints the huge pages this machine offers (transparent mode, explicit page
 * sizes with their pools) and the NUMA topology (nodes, distances, PCI devices, binding support),
 * without JVM warnings.
 */
class PlacementInfoIT {

    private static final Path ROOT = Path.of(System.getProperty("datamem.repo.root"));

    @Test
    void infoPrintsHugePagesAndTheNumaTopology() throws Exception {
        Process p = new ProcessBuilder(ROOT.resolve("datamem").toString(), "info").directory(ROOT.toFile())
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(2, TimeUnit.MINUTES));
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("huge pages:\n  transparent huge pages: "), out);
        if (java.nio.file.Files.isDirectory(Path.of("/sys/kernel/mm/hugepages/hugepages-2048kB"))) {
            assertTrue(out.contains("  explicit huge pages 2 MiB: "), out);
        }
        assertTrue(out.contains("NUMA topology of this machine (hwloc "), out);
        assertTrue(out.contains("  node 0: ") || out.contains("  node "), out);
        assertTrue(out.contains("  memory binding: "), out);
        assertTrue(out.contains("numa:local") && out.contains("hugepages:2m"), "provider names listed: " + out);
        assertTrue(out.contains("memory snapshots (docs/observability.md):\n  in code:       MemorySnapshot.take("),
                "how to take a snapshot: " + out);
        assertTrue(out.contains("\n  a running JVM: datamem snapshot --pid PID [--handler NAME]   (Attach API, MBean"
                + " io.datamem:type=MemorySnapshots; JVMs register it with their first handler, unless"
                + " -Ddatamem.jmx=false)\n"), "how to take a live snapshot: " + out);
        assertFalse(out.contains("WARNING"), out);
    }
}
