package io.datamem.examples.cli;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code datamem info} inside the emulated NUMA guests of {@code scripts/numa-guest}: it prints every
 * node with its CPUs (none for the memory-only ones) and every per-node huge page pool the guest
 * kernel reserved, as sysfs has them. Skipped, saying why, outside such a guest.
 */
@Tag("numa-guest")
class NumaGuestInfoTest {

    @Test
    void infoPrintsTheGuestsNodesAndPerNodeHugePagePools() throws IOException {
        String unavailable = System.getProperty("datamem.guest.unavailable");
        Assumptions.assumeTrue(unavailable == null, () -> "skipped: no NUMA guest could start on this machine: "
                + unavailable);
        Assumptions.assumeTrue(System.getProperty("datamem.guest.description") != null, "skipped: not inside a NUMA "
                + "guest (no -Ddatamem.guest.description); this test runs in the guests of scripts/numa-guest");
        PrintStream saved = System.out;
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        int status;
        System.setOut(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        try {
            status = DatamemCli.run("info");
        } finally {
            System.setOut(saved);
        }
        String out = bytes.toString(StandardCharsets.UTF_8);
        assertEquals(0, status, out);
        Path sys = Path.of("/sys/devices/system/node");
        List<Path> nodes;
        try (Stream<Path> s = Files.list(sys)) {
            nodes = s.filter(p -> p.getFileName().toString().matches("node\\d+")).sorted().toList();
        }
        assertTrue(out.contains("): " + nodes.size() + " nodes, "), out);
        for (Path node : nodes) {
            int id = Integer.parseInt(node.getFileName().toString().substring(4));
            String cpus = Files.readString(node.resolve("cpulist")).strip();
            String line = "  node " + id + ": ";
            assertTrue(out.lines().anyMatch(l -> l.startsWith(line) && l.endsWith(", CPUs " + (cpus.isEmpty() ? "none"
                    : cpus))), "node " + id + " with CPUs '" + cpus + "': " + out);
            try (Stream<Path> pools = Files.list(node.resolve("hugepages"))) {
                for (Path pool : pools.toList()) {
                    long pages = Long.parseLong(Files.readString(pool.resolve("nr_hugepages")).strip());
                    String size = pool.getFileName().toString().equals("hugepages-2048kB") ? "2 MiB" : "1 GiB";
                    if (pages > 0) {
                        assertTrue(out.contains("    " + size + " on node " + id + ": " + pages + " in the pool"),
                                size + " pages on node " + id + ": " + out);
                    }
                }
            }
        }
        System.out.println(out);
    }
}
