package io.datamem.impl.placement;

import io.datamem.impl.internal.placement.NumaBuilder;
import io.datamem.impl.internal.placement.NumaTarget;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.OptionalLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Placement decisions on multi-node machines this test does not need: topologies loaded by hwloc
 * from synthetic descriptions and from an XML export of a two-socket machine with sub-NUMA
 * clustering (nodes 0-1 on package 0, nodes 2-3 on package 1, node 3 memoryless), a CPU-less CXL
 * memory node 4 attached to the whole machine, SLIT-style distances, a GPU under node 2, a NIC under
 * package 0 and an NVMe drive attached to the machine.
 */
class NumaTopologySelectionTest {

    private static NumaTopology twoSockets() throws IOException {
        try (InputStream in = NumaTopologySelectionTest.class.getResourceAsStream("/topologies/two-sockets-snc-cxl.xml")) {
            return NumaTopology.fromXml(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        }
    }

    @Test
    void syntheticTopologiesHaveTheirNodesCpusAndMemory() {
        NumaTopology t = NumaTopology.synthetic("pack:4 numa:1(memory=64GB) core:2 pu:2");
        assertFalse(t.thisSystem());
        assertEquals(List.of(0, 1, 2, 3), t.nodes().stream().map(NumaTopology.Node::id).toList());
        assertEquals(64_000_000_000L, t.node(2).memoryByteSize());
        assertEquals(List.of(4, 5, 6, 7), t.node(1).cpus());
        assertEquals("12-15", t.node(3).cpuList());
        assertEquals(List.of(1), t.nodesOfCpu(5));
        assertEquals(List.of(3), t.nodesOfCpu(15));
        assertTrue(t.pciDevices().isEmpty());
        assertFalse(t.hasDistances());
        assertTrue(t.supportedPolicies().isEmpty(), "nothing can be bound on a machine that is not this one");
        assertTrue(t.report().contains("4 nodes") && t.report().contains("node 3: 59.6 GiB, CPUs 12-15"), t.report());
    }

    @Test
    void interleaveSetsAndRangesResolveToExistingNodes() {
        NumaTopology t = NumaTopology.synthetic("pack:2 numa:2 core:2 pu:1");
        assertEquals(List.of(0, 1, 2, 3), NumaTarget.resolve(t, NumaTarget.allNodes(), -1));
        assertEquals(List.of(0, 2), NumaTarget.resolve(t, NumaTarget.parse("2,0"), -1));
        assertEquals(List.of(1, 2, 3), NumaTarget.resolve(t, NumaTarget.parse("1-3"), -1));
        assertEquals(List.of(0, 1, 3), NumaTarget.resolve(t, NumaTarget.parse("0-1,3,3"), -1));
        assertEquals(List.of(2), NumaTarget.resolve(t, NumaTarget.local(), 4));
    }

    @Test
    void unknownNodesAndCpusAreErrorsListingWhatExists() {
        NumaTopology t = NumaTopology.synthetic("pack:2 numa:1 core:2 pu:1");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> NumaTarget.resolve(t, NumaTarget.nodes(1, 5, 7), -1));
        assertTrue(e.getMessage().startsWith("NUMA nodes 5,7 do not exist on synthetic 'pack:2 numa:1 core:2 pu:1'; "
                + "its nodes: node 0 (1.0 GiB, CPUs 0-1), node 1 (1.0 GiB, CPUs 2-3)"), e.getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> t.node(9)).getMessage()
                .contains("NUMA node 9 does not exist"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> t.nodesOfCpu(64)).getMessage()
                .contains("CPU 64 is not local to any NUMA node"));
        String pci = assertThrows(IllegalArgumentException.class,
                () -> NumaTarget.resolve(t, NumaTarget.nearPciDevice("3b:00.0"), -1)).getMessage();
        assertTrue(pci.contains("PCI device 0000:3b:00.0 does not exist") && pci.contains("its PCI devices: none"), pci);
    }

    @Test
    void distancesOrderNodesNearestFirst() throws IOException {
        NumaTopology t = twoSockets();
        assertTrue(t.hasDistances());
        assertEquals(OptionalLong.of(11), t.distance(0, 1));
        assertEquals(OptionalLong.of(21), t.distance(1, 2));
        assertEquals(OptionalLong.of(30), t.distance(4, 0));
        assertEquals(List.of(3, 2, 0, 1, 4), t.nodesByDistance(3).stream().map(NumaTopology.Node::id).toList());
        assertEquals(List.of(4, 0, 1, 2, 3), t.nodesByDistance(4).stream().map(NumaTopology.Node::id).toList());
        assertEquals(List.of(1, 0, 2, 3, 4), t.nodesByDistance(1).stream().map(NumaTopology.Node::id).toList());
        NumaTopology noDistances = NumaTopology.synthetic("pack:3 numa:1 core:1 pu:1");
        assertEquals(OptionalLong.empty(), noDistances.distance(0, 1));
        assertEquals(List.of(2, 0, 1), noDistances.nodesByDistance(2).stream().map(NumaTopology.Node::id).toList(),
                "without distances: the node itself, then by id");
    }

    @Test
    void theLocalNodeIsTheClosestWithMemory() throws IOException {
        NumaTopology t = twoSockets();
        assertEquals("CXL-DRAM", t.node(4).subtype());
        assertEquals(List.of(0, 1, 2, 3, 4, 5, 6, 7), t.node(4).cpus(), "the CXL node is local to every CPU");
        assertEquals(List.of(0), t.nodesOfCpu(0), "the sub-NUMA cluster's node, not the machine-wide CXL memory");
        assertEquals(List.of(1), t.nodesOfCpu(3));
        assertEquals(List.of(2), NumaTarget.resolve(t, NumaTarget.local(), 4));
        assertEquals(0, t.node(3).memoryByteSize());
        assertEquals(List.of(2), t.nodesOfCpu(6), "memoryless node 3: its nearest node with memory by distance");
    }

    @Test
    void pciDevicesResolveToTheNodesTheyAreAttachedTo() throws IOException {
        NumaTopology t = twoSockets();
        assertEquals(List.of("0000:01:00.0", "0000:18:00.0", "0000:3b:00.0"),
                t.pciDevices().stream().map(NumaTopology.PciDevice::busId).toList());
        NumaTopology.PciDevice gpu = t.pciDevice("3B:00.0").orElseThrow();
        assertEquals(0x0302, gpu.classId());
        assertEquals(0x10de, gpu.vendorId());
        assertEquals(0x20b0, gpu.deviceId());
        assertEquals(List.of("cuda0"), gpu.osDevices());
        assertEquals(List.of(2), gpu.localNodes());
        assertTrue(gpu.attachedTo().startsWith("Group"), gpu.attachedTo());
        assertEquals(List.of(2), NumaTarget.resolve(t, NumaTarget.nearPciDevice("0000:3b:00.0"), -1));
        NumaTopology.PciDevice nic = t.pciDevice("0000:18:00.0").orElseThrow();
        assertEquals(List.of("eth1", "mlx5_0"), nic.osDevices());
        assertEquals("Package 0", nic.attachedTo());
        assertEquals(List.of(0, 1), t.nodesNearPciDevice("18:00.0"));
        assertEquals("Machine", t.pciDevice("0000:01:00.0").orElseThrow().attachedTo());
        assertEquals(List.of(0, 1, 2, 4), t.nodesNearPciDevice("0000:01:00.0"),
                "a device attached to the whole machine: every node with memory");
        String missing = assertThrows(IllegalArgumentException.class, () -> t.nodesNearPciDevice("0000:af:00.0"))
                .getMessage();
        assertTrue(missing.contains("PCI device 0000:af:00.0 does not exist on XML")
                && missing.contains("0000:3b:00.0 class 0302 10de:20b0 cuda0 -> node 2"), missing);
    }

    @Test
    void theReportShowsNodesDistancesAndDevices() throws IOException {
        String r = twoSockets().report();
        assertTrue(r.startsWith("NUMA topology of XML (hwloc "), r);
        assertTrue(r.contains("5 nodes"), r);
        assertTrue(r.contains("  node 4: 128.0 GiB CXL-DRAM, CPUs 0-7"), r);
        assertTrue(r.contains("  node 3: 0 bytes, CPUs 6-7"), r);
        assertTrue(r.contains("distances (latency, 10 = local):"), r);
        assertTrue(r.contains("       3    21    21    11    10    30"), r);
        assertTrue(r.contains("0000:18:00.0 class 0200 15b3:1017 eth1,mlx5_0 -> nodes 0-1 (attached to Package 0)"), r);
    }

    @Test
    void targetsParseAndNormalise() {
        assertEquals(new NumaTarget.Nodes(List.of(0, 1, 2, 3, 8)), NumaTarget.parse("0-3,8"));
        assertEquals(new NumaTarget.NearPciDevice("0000:3b:00.0"), NumaTarget.parse("pci:3B:00.0"));
        assertEquals("pci:0001:3b:1f.7", NumaTarget.parse("pci:1:3b:1f.7").spec());
        assertEquals(NumaTarget.local(), NumaTarget.parse("local"));
        assertEquals(NumaTarget.allNodes(), NumaTarget.parse(" ALL "));
        assertEquals("0,2", NumaTarget.nodes(2, 0, 2).spec());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> NumaTarget.parse("x")).getMessage()
                .contains("expected: node ids such as 0 or 0,2 or 0-3, local, all, or pci:"));
        assertThrows(IllegalArgumentException.class, () -> NumaTarget.parse("3-1"));
        assertThrows(IllegalArgumentException.class, () -> NumaTarget.parse("0,,1"));
        assertThrows(IllegalArgumentException.class, NumaTarget::nodes);
        assertEquals("NUMA node id: -1 (expected: >= 0)",
                assertThrows(IllegalArgumentException.class, () -> NumaTarget.nodes(-1)).getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> NumaTarget.nearPciDevice("3b:00"))
                .getMessage().contains("expected: DOMAIN:BUS:DEVICE.FUNCTION"));
        assertThrows(IllegalArgumentException.class, () -> NumaTarget.nearPciDevice("3b:20.0"));
        assertEquals(NumaPolicy.FIRST_TOUCH, NumaBuilder.policyOfSpec("first-touch"));
        assertEquals(NumaPolicy.INTERLEAVE, NumaBuilder.policyOfSpec("Interleave"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> NumaBuilder.policyOfSpec("spread")).getMessage()
                .contains("expected: bind, preferred, interleave, firsttouch or nexttouch"));
    }

    @Test
    void hwlocRejectionsAreIllegalArguments() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> NumaTopology.synthetic("nonsense")).getMessage()
                .contains("hwloc rejects the synthetic topology 'nonsense'"));
        assertThrows(IllegalArgumentException.class, () -> NumaTopology.fromXml("<not a topology/>"));
    }
}
