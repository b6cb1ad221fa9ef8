package io.datamem.impl.placement;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * hwloc's view of the emulated NUMA guest against what QEMU was told and what the guest kernel
 * reports in sysfs: nodes, their CPUs and memory, memory-only nodes, distances, the PCI devices
 * placed on nodes, the huge pages reserved per node, and the binding policies.
 */
@Tag(NumaGuest.TAG)
class NumaGuestTopologyTest {

    private NumaGuest guest;
    private NumaTopology topology;

    @BeforeEach
    void inTheGuest() {
        guest = NumaGuest.require();
        topology = NumaTopology.current();
    }

    @Test
    void hwlocSeesTheNodesCpusAndMemoryTheGuestWasGiven() throws IOException {
        assertEquals(guest.nodes().stream().map(NumaGuest.Node::id).toList(),
                topology.nodes().stream().map(NumaTopology.Node::id).toList(), topology.report());
        assertEquals(guest.nodes().stream().map(n -> "node" + n.id()).toList(), sysfsNodes());
        for (NumaGuest.Node given : guest.nodes()) {
            NumaTopology.Node seen = topology.node(given.id());
            assertEquals(given.cpus(), seen.cpus(), "CPUs of node " + given.id() + ": " + seen);
            assertEquals(given.cpus(), cpuList(sysfs("node" + given.id() + "/cpulist").strip()), "sysfs cpulist");
            long memTotal = meminfo(given.id(), "MemTotal");
            assertEquals(memTotal, seen.memoryByteSize(), "hwloc's memory of node " + given.id()
                    + " is the kernel's MemTotal");
            assertTrue(memTotal <= given.memoryByteSize() && memTotal >= given.memoryByteSize() * 85 / 100,
                    "node " + given.id() + ": " + memTotal + " bytes of the " + given.memoryByteSize() + " given");
            guest.report("topology: node " + given.id() + ": " + NumaTopology.bytes(memTotal) + " of "
                    + NumaTopology.bytes(given.memoryByteSize()) + " given, CPUs " + seen.cpuList());
        }
    }

    @Test
    void memoryOnlyNodesHaveMemoryButNoCpuAndAreNoCpusLocalNode() {
        List<Integer> expected = guest.memoryOnlyNodes().stream().map(NumaGuest.Node::id).toList();
        List<Integer> seen = topology.nodes().stream().filter(n -> n.cpus().isEmpty()).map(NumaTopology.Node::id)
                .toList();
        assertEquals(expected, seen, topology.report());
        for (int id : seen) {
            assertTrue(topology.node(id).memoryByteSize() > 0, "a memory-only node has memory: " + topology.node(id));
        }
        for (int cpu : guest.cpus()) {
            assertEquals(List.of(guest.nodeOfCpu(cpu)), topology.nodesOfCpu(cpu),
                    "CPU " + cpu + "'s local node is its own, never a memory-only node");
        }
    }

    @Test
    void distancesAreTheSlitTheGuestWasGiven() {
        assertTrue(topology.hasDistances(), topology.report());
        for (NumaGuest.Node a : guest.nodes()) {
            for (NumaGuest.Node b : guest.nodes()) {
                assertEquals(OptionalLong.of(guest.distance(a.id(), b.id())), topology.distance(a.id(), b.id()),
                        "distance " + a.id() + " -> " + b.id());
            }
            List<Integer> nearest = topology.nodesByDistance(a.id()).stream().map(NumaTopology.Node::id).toList();
            assertEquals(a.id(), nearest.getFirst());
            for (int k = 1; k < nearest.size(); k++) {
                assertTrue(guest.distance(a.id(), nearest.get(k - 1)) <= guest.distance(a.id(), nearest.get(k)),
                        "nearest first from " + a.id() + ": " + nearest);
            }
        }
    }

    @Test
    void pciDevicesOnNodesHaveThoseNodesLocality() {
        assertTrue(!guest.pciDevices().isEmpty(), "the guest has PCI devices placed on nodes");
        for (NumaGuest.Pci pci : guest.pciDevices()) {
            NumaTopology.PciDevice d = topology.pciDevice(pci.busId()).orElseThrow(() -> new AssertionError(
                    pci.busId() + " not seen by hwloc: " + topology.report()));
            assertEquals(pci.node(), Integer.parseInt(sysfsPci(pci.busId(), "numa_node").strip()), "sysfs numa_node");
            if (guest.node(pci.node()).memoryOnly()) {
                // the kernel gives a device on a CPU-less node no local CPUs: hwloc hangs it off the machine
                assertEquals("", sysfsPci(pci.busId(), "local_cpulist").strip(), "local CPUs of " + pci.busId());
                assertEquals("Machine", d.attachedTo(), d.toString());
            } else {
                assertEquals(List.of(pci.node()), d.localNodes(), d.toString());
            }
            guest.report("topology: PCI " + d + ", near: " + topology.nodesNearPciDevice(pci.busId()));
        }
    }

    @Test
    void hugePagesReservedPerNodeOnTheCommandLineAreThere() {
        for (NumaGuest.Node n : guest.nodes()) {
            List<HugePages.Pool> pools = HugePages.pools(n.id());
            assertEquals(n.hugePages2m(), total(pools, 2L << 20), "2 MiB pages on node " + n.id() + ": " + pools);
            assertEquals(n.hugePages1g(), total(pools, 1L << 30), "1 GiB pages on node " + n.id() + ": " + pools);
        }
        assertEquals(guest.nodes().stream().mapToLong(NumaGuest.Node::hugePages1g).sum(),
                HugePages.pool(1L << 30).orElseThrow().total(), HugePages.report());
    }

    @Test
    void everyLinuxPolicyButNextTouchCanBindAndBeVerified() {
        assertEquals(EnumSet.complementOf(EnumSet.of(NumaPolicy.NEXT_TOUCH)), EnumSet.copyOf(topology.supportedPolicies()));
        assertTrue(topology.areaBindingSupported() && topology.locationQuerySupported(), topology.report());
    }

    private static long total(List<HugePages.Pool> pools, long pageSize) {
        return pools.stream().filter(p -> p.pageSize() == pageSize).mapToLong(HugePages.Pool::total).sum();
    }

    private static List<String> sysfsNodes() throws IOException {
        try (var s = Files.list(Path.of("/sys/devices/system/node"))) {
            return s.map(p -> p.getFileName().toString()).filter(f -> f.matches("node\\d+"))
                    .sorted((a, b) -> Integer.compare(Integer.parseInt(a.substring(4)), Integer.parseInt(b.substring(4))))
                    .toList();
        }
    }

    private static String sysfs(String relative) {
        try {
            return Files.readString(Path.of("/sys/devices/system/node", relative));
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    private static String sysfsPci(String busId, String attribute) {
        try {
            return Files.readString(Path.of("/sys/bus/pci/devices", busId, attribute));
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    static long meminfo(int node, String field) {
        Matcher m = Pattern.compile("Node " + node + " " + field + ":\\s+(\\d+) kB").matcher(sysfs("node" + node + "/meminfo"));
        assertTrue(m.find(), field + " of node " + node);
        return Long.parseLong(m.group(1)) << 10;
    }

    private static List<Integer> cpuList(String list) {
        List<Integer> cpus = new ArrayList<>();
        if (list.isEmpty()) {
            return cpus;
        }
        for (String part : list.split(",")) {
            String[] r = part.split("-");
            for (int c = Integer.parseInt(r[0]); c <= Integer.parseInt(r[r.length - 1]); c++) {
                cpus.add(c);
            }
        }
        return cpus;
    }
}
