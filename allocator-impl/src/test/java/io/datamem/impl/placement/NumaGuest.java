package io.datamem.impl.placement;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;

/**
 * The emulated NUMA machine the tests tagged {@code numa-guest} run in: what {@code scripts/numa-guest}
 * told QEMU (nodes with their memory and CPUs, SLIT distances, PCI devices placed on nodes, huge
 * pages reserved per node on the kernel command line), read from the description file it passes as
 * {@code -Ddatamem.guest.description}. Outside such a guest, or where the script could not start
 * one ({@code -Ddatamem.guest.unavailable=WHY}), {@link #require()} skips the test saying why.
 */
final class NumaGuest {

    /** The tag of the tests that run only inside a NUMA guest. */
    static final String TAG = "numa-guest";
    /** The tag of those that also need memory-only (CPU-less) nodes, as the 4-node guest has. */
    static final String MEMORY_ONLY_NODES = "memory-only-nodes";

    private static final long MiB = 1L << 20;

    /**
     * A node as the guest was given it.
     *
     * @param id             its id
     * @param memoryByteSize the memory QEMU gave it
     * @param cpus           its vCPUs (none for a memory-only node)
     * @param hugePages2m    the 2 MiB pages reserved on it at boot
     * @param hugePages1g    the 1 GiB pages reserved on it at boot
     */
    record Node(int id, long memoryByteSize, List<Integer> cpus, int hugePages2m, int hugePages1g) {

        boolean memoryOnly() {
            return cpus.isEmpty();
        }
    }

    /**
     * A PCI device placed behind an expander bridge on a node.
     *
     * @param busId its bus id
     * @param node  the node QEMU put the bridge on
     */
    record Pci(String busId, int node) {
    }

    private final String name;
    private final List<Node> nodes;
    private final long[][] distances;
    private final List<Pci> pci;

    private NumaGuest(String name, List<Node> nodes, long[][] distances, List<Pci> pci) {
        this.name = name;
        this.nodes = nodes;
        this.distances = distances;
        this.pci = pci;
    }

    /**
     * The guest this test runs in; skips the test (an assumption) when it runs anywhere else.
     *
     * @return the guest
     */
    static NumaGuest require() {
        String unavailable = System.getProperty("datamem.guest.unavailable");
        Assumptions.assumeTrue(unavailable == null, () -> "skipped: no NUMA guest could start on this machine: "
                + unavailable);
        String description = System.getProperty("datamem.guest.description");
        Assumptions.assumeTrue(description != null, "skipped: not inside a NUMA guest (no -Ddatamem.guest.description); "
                + "these tests run in the emulated 2- and 4-node guests of scripts/numa-guest");
        return read(Path.of(description));
    }

    private static NumaGuest read(Path file) {
        Properties p = new Properties();
        try (Reader in = Files.newBufferedReader(file)) {
            p.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException("reading the guest description " + file, e);
        }
        List<Node> nodes = new ArrayList<>();
        for (String id : p.getProperty("nodes").split(",")) {
            String prefix = "node." + id + ".";
            String cpus = p.getProperty(prefix + "cpus", "");
            nodes.add(new Node(Integer.parseInt(id), Long.parseLong(p.getProperty(prefix + "memory.mib")) * MiB,
                    cpus.isEmpty() ? List.of() : Arrays.stream(cpus.split(",")).map(Integer::valueOf).toList(),
                    Integer.parseInt(p.getProperty(prefix + "hugepages.2m", "0")),
                    Integer.parseInt(p.getProperty(prefix + "hugepages.1g", "0"))));
        }
        long[][] d = new long[nodes.size()][nodes.size()];
        for (int i = 0; i < nodes.size(); i++) {
            for (int j = 0; j < nodes.size(); j++) {
                int a = Math.min(nodes.get(i).id(), nodes.get(j).id());
                int b = Math.max(nodes.get(i).id(), nodes.get(j).id());
                d[i][j] = a == b ? 10 : Long.parseLong(p.getProperty("distance." + a + "." + b));
            }
        }
        List<Pci> pci = new ArrayList<>();
        for (String entry : p.getProperty("pci", "").split(",")) {
            if (!entry.isBlank()) {
                String[] parts = entry.split("@");
                pci.add(new Pci(parts[0], Integer.parseInt(parts[1])));
            }
        }
        return new NumaGuest(p.getProperty("name"), List.copyOf(nodes), d, List.copyOf(pci));
    }

    /** The guest's name in reports: {@code numa2}, {@code numa4}. */
    String name() {
        return name;
    }

    List<Node> nodes() {
        return nodes;
    }

    Node node(int id) {
        return nodes.stream().filter(n -> n.id() == id).findFirst().orElseThrow();
    }

    List<Node> memoryOnlyNodes() {
        return nodes.stream().filter(Node::memoryOnly).toList();
    }

    List<Integer> cpus() {
        return nodes.stream().flatMap(n -> n.cpus().stream()).sorted().toList();
    }

    /** The node a vCPU belongs to. */
    int nodeOfCpu(int cpu) {
        return nodes.stream().filter(n -> n.cpus().contains(cpu)).findFirst().orElseThrow().id();
    }

    long distance(int from, int to) {
        return distances[nodes.indexOf(node(from))][nodes.indexOf(node(to))];
    }

    List<Pci> pciDevices() {
        return pci;
    }

    /**
     * Prints a line of the placement report and appends it to the report file the script collects
     * ({@code -Ddatamem.guest.report}), prefixed with the guest's name.
     *
     * @param line what was placed where
     */
    void report(String line) {
        String text = "[" + name + "] " + line;
        System.out.println(text);
        String file = System.getProperty("datamem.guest.report");
        if (file != null) {
            try {
                Files.writeString(Path.of(file), text + System.lineSeparator(), StandardCharsets.UTF_8,
                        StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            } catch (IOException e) {
                throw new UncheckedIOException("appending to the placement report " + file, e);
            }
        }
    }
}
