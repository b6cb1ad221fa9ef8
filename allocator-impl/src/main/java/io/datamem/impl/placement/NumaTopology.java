package io.datamem.impl.placement;

import io.datamem.impl.os.Spellings;
import io.datamem.impl.os.OptionalModules;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * A snapshot of a machine's NUMA structure, read through hwloc: the NUMA nodes with their memory
 * and CPUs, the distances between them, the PCI devices and the nodes near each, and which memory
 * binding policies the platform supports. It is the ground a {@link NumaAllocator} resolves the
 * target of its handler name on ({@code local}, node ids, {@code pci:BUS_ID}, {@code all}), and what
 * {@code datamem info} prints ({@link #report()}).
 *
 * <p>{@link #current()} is this machine, loaded once. {@link #synthetic(String)} and
 * {@link #fromXml(String)} load other machines from hwloc's synthetic descriptions and XML exports
 * ({@code lstopo machine.xml}), so that placement decisions can be examined, and tested, for a
 * machine one does not have. Loading any topology loads hwloc (through LWJGL); nothing else in
 * datamem does.
 *
 * <p>Immutable and thread-safe. Node ids are OS indexes, as in {@code /sys/devices/system/node},
 * {@code numactl} and {@code lstopo}.
 */
public final class NumaTopology {

    /**
     * A NUMA node.
     *
     * @param id             its OS index
     * @param memoryByteSize the memory it holds (0 for a memoryless node)
     * @param cpus           the OS indexes of the CPUs it is local to, ascending (empty for a
     *                       CPU-less node, such as some HBM or CXL memory)
     * @param subtype        hwloc's subtype ({@code DRAM}, {@code HBM}, {@code NVM},
     *                       {@code CXL-DRAM}, ...), or empty if hwloc gives none
     */
    public record Node(int id, long memoryByteSize, List<Integer> cpus, String subtype) {

        /**
         * Validates the components.
         *
         * @throws NullPointerException     if {@code cpus} or {@code subtype} is null
         * @throws IllegalArgumentException if {@code id} or {@code memoryByteSize} is negative
         */
        public Node {
            if (id < 0 || memoryByteSize < 0) {
                throw new IllegalArgumentException("NUMA node " + id + " with " + memoryByteSize
                        + " bytes (expected: id and memory >= 0)");
            }
            cpus = List.copyOf(new TreeSet<>(cpus));
            Objects.requireNonNull(subtype, "subtype");
        }

        /**
         * The CPUs as a compact list.
         *
         * @return for example {@code 0-15,32-47}, or {@code none}
         */
        public String cpuList() {
            return compact(cpus);
        }

        @Override
        public String toString() {
            return "node " + id + " (" + bytes(memoryByteSize) + (subtype.isEmpty() ? "" : " " + subtype) + ", CPUs "
                    + cpuList() + ")";
        }
    }

    /**
     * A PCI device and where it is attached.
     *
     * @param busId      its bus id, {@code dddd:bb:dd.f}
     * @param classId    the PCI class ({@code 0x0300} display, {@code 0x0302} 3D controller,
     *                   {@code 0x0200} Ethernet, {@code 0x0108} NVMe, ...)
     * @param vendorId   the PCI vendor id
     * @param deviceId   the PCI device id
     * @param osDevices  the names the operating system gives it ({@code eth0}, {@code nvme0n1},
     *                   {@code cuda0}), possibly none
     * @param attachedTo the part of the machine it hangs off, for example {@code Package 1},
     *                   {@code Machine}
     * @param localCpus  the CPUs of that part, ascending
     * @param localNodes the NUMA nodes whose locality lies within that part, ascending: those with
     *                   CPUs there, and memory-only nodes where hwloc gives them that part's CPUs as
     *                   their locality (some firmware does for CXL memory; Linux on a machine whose
     *                   memory-only nodes have no CPU list does not). A device attached to the machine
     *                   as a whole gets every such node, and so does one on a memory-only node, which
     *                   the kernel gives no local CPUs, so that hwloc hangs it off the machine
     */
    public record PciDevice(String busId, int classId, int vendorId, int deviceId, List<String> osDevices,
                            String attachedTo, List<Integer> localCpus, List<Integer> localNodes) {

        /**
         * Validates the components.
         *
         * @throws NullPointerException     if a component is null
         * @throws IllegalArgumentException if the bus id is malformed
         */
        public PciDevice {
            busId = Spellings.normalizeBusId(busId);
            osDevices = List.copyOf(osDevices);
            Objects.requireNonNull(attachedTo, "attachedTo");
            localCpus = List.copyOf(new TreeSet<>(localCpus));
            localNodes = List.copyOf(new TreeSet<>(localNodes));
        }

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%s class %04x %04x:%04x%s -> %s (attached to %s)", busId, classId,
                    vendorId, deviceId, osDevices.isEmpty() ? "" : " " + String.join(",", osDevices),
                    nodeNames(localNodes), attachedTo);
        }
    }

    private final String source;
    private final boolean thisSystem;
    private final String hwlocVersion;
    private final List<Node> nodes;
    private final Map<Integer, Node> byId = new LinkedHashMap<>();
    private final long[][] distances; // by position in nodes; null when unknown
    private final String distanceKind;
    private final List<PciDevice> pciDevices;
    private final Set<NumaPolicy> policies;
    private final boolean areaBinding;
    private final boolean locationQuery;

    NumaTopology(String source, boolean thisSystem, String hwlocVersion, List<Node> nodes, long[][] distances,
                 String distanceKind, List<PciDevice> pciDevices, Set<NumaPolicy> policies, boolean areaBinding,
                 boolean locationQuery) {
        this.source = source;
        this.thisSystem = thisSystem;
        this.hwlocVersion = hwlocVersion;
        List<Node> sorted = new ArrayList<>(nodes);
        sorted.sort(Comparator.comparingInt(Node::id));
        this.nodes = List.copyOf(sorted);
        for (Node n : this.nodes) {
            byId.put(n.id(), n);
        }
        if (distances != null) {
            // reorder from hwloc's order (given by the caller in the order of 'nodes') to sorted order
            long[][] d = new long[sorted.size()][sorted.size()];
            for (int i = 0; i < sorted.size(); i++) {
                for (int j = 0; j < sorted.size(); j++) {
                    d[i][j] = distances[nodes.indexOf(sorted.get(i))][nodes.indexOf(sorted.get(j))];
                }
            }
            this.distances = d;
        } else {
            this.distances = null;
        }
        this.distanceKind = distanceKind;
        List<PciDevice> pci = new ArrayList<>(pciDevices);
        pci.sort(Comparator.comparing(PciDevice::busId));
        this.pciDevices = List.copyOf(pci);
        this.policies = policies.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(policies));
        this.areaBinding = areaBinding;
        this.locationQuery = locationQuery;
    }

    /**
     * This machine's topology, loaded through hwloc on first use and kept for the life of the
     * process.
     *
     * @return the topology
     * @throws IllegalStateException if hwloc cannot be loaded here (the message says why: LWJGL's
     *                               hwloc modules not resolved on the module path, a missing native
     *                               library for this platform, native access not enabled)
     */
    public static NumaTopology current() {
        OptionalModules.HWLOC.require("NUMA topology");
        return Hwloc.system();
    }

    /**
     * A machine described in hwloc's synthetic syntax, for example
     * {@code pack:2 numa:2 core:8 pu:2} (2 sockets with 2 NUMA nodes each) or
     * {@code pack:2 numa:1(memory=64GB) core:4 pu:1}. Synthetic topologies have no distances and no
     * PCI devices; use {@link #fromXml} for those.
     *
     * @param description the description
     * @return the topology
     * @throws NullPointerException     if {@code description} is null
     * @throws IllegalArgumentException if hwloc rejects the description
     * @throws IllegalStateException    if hwloc cannot be loaded here
     */
    public static NumaTopology synthetic(String description) {
        Objects.requireNonNull(description, "description");
        OptionalModules.HWLOC.require("NUMA topology");
        return Hwloc.load(description, null);
    }

    /**
     * A machine from an hwloc XML export ({@code lstopo machine.xml} on that machine), with its
     * distances and PCI devices.
     *
     * @param xml the XML text
     * @return the topology
     * @throws NullPointerException     if {@code xml} is null
     * @throws IllegalArgumentException if hwloc rejects the XML
     * @throws IllegalStateException    if hwloc cannot be loaded here
     */
    public static NumaTopology fromXml(String xml) {
        Objects.requireNonNull(xml, "xml");
        OptionalModules.HWLOC.require("NUMA topology");
        return Hwloc.load(null, xml);
    }

    /**
     * Where the topology comes from.
     *
     * @return for example {@code this machine}, {@code synthetic 'pack:2 numa:1 core:2 pu:1'},
     *         {@code XML}
     */
    public String source() {
        return source;
    }

    /**
     * Whether this is the machine the process runs on (the only one memory can be bound on).
     *
     * @return true for {@link #current()}
     */
    public boolean thisSystem() {
        return thisSystem;
    }

    /**
     * The version of hwloc that read the topology.
     *
     * @return for example {@code 3.0.0}
     */
    public String hwlocVersion() {
        return hwlocVersion;
    }

    /**
     * The NUMA nodes, by ascending id.
     *
     * @return the nodes (at least one)
     */
    public List<Node> nodes() {
        return nodes;
    }

    /**
     * One node.
     *
     * @param id the node's OS index
     * @return the node
     * @throws IllegalArgumentException if there is no such node; the message lists those there are
     */
    public Node node(int id) {
        Node n = byId.get(id);
        if (n == null) {
            throw new IllegalArgumentException("NUMA node " + id + " does not exist on " + source + "; its nodes: "
                    + nodes.stream().map(Node::toString).collect(Collectors.joining(", ")));
        }
        return n;
    }

    /**
     * The PCI devices, by bus id.
     *
     * @return the devices (none for synthetic topologies, or when hwloc could not see the PCI bus)
     */
    public List<PciDevice> pciDevices() {
        return pciDevices;
    }

    /**
     * One PCI device.
     *
     * @param busId its bus id, {@code [DOMAIN:]BUS:DEVICE.FUNCTION}
     * @return the device, or empty if there is none with that id
     * @throws IllegalArgumentException if {@code busId} is malformed
     */
    public Optional<PciDevice> pciDevice(String busId) {
        String id = Spellings.normalizeBusId(busId);
        return pciDevices.stream().filter(d -> d.busId().equals(id)).findFirst();
    }

    /**
     * Whether the firmware (or the XML) reports distances between nodes.
     *
     * @return true if {@link #distance} knows them
     */
    public boolean hasDistances() {
        return distances != null;
    }

    /**
     * The relative distance between two nodes (the ACPI SLIT convention: 10 to itself, larger is
     * farther), as hwloc reports it.
     *
     * @param from a node id
     * @param to   a node id
     * @return the distance, or empty if the machine reports none
     * @throws IllegalArgumentException if a node does not exist
     */
    public OptionalLong distance(int from, int to) {
        int i = nodes.indexOf(node(from));
        int j = nodes.indexOf(node(to));
        return distances == null ? OptionalLong.empty() : OptionalLong.of(distances[i][j]);
    }

    /**
     * Every node, nearest first, as seen from one node: by distance, then (for equal or unknown
     * distances) the node itself first and then by id.
     *
     * @param from a node id
     * @return all nodes, {@code from} first
     * @throws IllegalArgumentException if the node does not exist
     */
    public List<Node> nodesByDistance(int from) {
        int i = nodes.indexOf(node(from));
        List<Node> out = new ArrayList<>(nodes);
        out.sort(Comparator.<Node>comparingLong(n -> distances == null ? (n.id() == from ? 0 : 1)
                : distances[i][nodes.indexOf(n)]).thenComparing(n -> n.id() != from).thenComparingInt(Node::id));
        return List.copyOf(out);
    }

    /**
     * The nodes local to a CPU: among the nodes whose CPUs include it, those closest to it (with the
     * smallest set of local CPUs: a sub-NUMA cluster rather than the whole machine's CXL memory),
     * keeping those with memory; when none has memory, the nearest node with memory by distance.
     *
     * @param cpu a CPU's OS index
     * @return the node ids, ascending
     * @throws IllegalArgumentException if no node lists the CPU
     */
    public List<Integer> nodesOfCpu(int cpu) {
        List<Node> candidates = nodes.stream().filter(n -> n.cpus().contains(cpu)).toList();
        if (candidates.isEmpty()) {
            throw new IllegalArgumentException("CPU " + cpu + " is not local to any NUMA node of " + source
                    + "; CPUs: " + nodes.stream().map(n -> "node " + n.id() + ": " + n.cpuList())
                    .collect(Collectors.joining(", ")));
        }
        int smallest = candidates.stream().mapToInt(n -> n.cpus().size()).min().orElseThrow();
        List<Node> closest = candidates.stream().filter(n -> n.cpus().size() == smallest).toList();
        return withMemory(closest);
    }

    /**
     * The nodes nearest a PCI device: those local to where it is attached, keeping those with
     * memory (when none has memory, the nearest node with memory by distance).
     *
     * @param busId the device's bus id
     * @return the node ids, ascending
     * @throws IllegalArgumentException if the bus id is malformed or no such device exists; the
     *                                  message lists the devices there are
     */
    public List<Integer> nodesNearPciDevice(String busId) {
        String id = Spellings.normalizeBusId(busId);
        PciDevice d = pciDevice(id).orElseThrow(() -> new IllegalArgumentException("PCI device " + id
                + " does not exist on " + source + "; its PCI devices: " + (pciDevices.isEmpty() ? "none"
                : pciDevices.stream().map(PciDevice::toString).collect(Collectors.joining("; ")))));
        List<Node> local = d.localNodes().stream().map(this::node).toList();
        if (local.isEmpty()) {
            return nodes.stream().map(Node::id).toList();
        }
        return withMemory(local);
    }

    private List<Integer> withMemory(List<Node> candidates) {
        List<Integer> ids = candidates.stream().filter(n -> n.memoryByteSize() > 0).map(Node::id).sorted().toList();
        if (!ids.isEmpty()) {
            return ids;
        }
        for (Node n : nodesByDistance(candidates.getFirst().id())) {
            if (n.memoryByteSize() > 0) {
                return List.of(n.id());
            }
        }
        return candidates.stream().map(Node::id).sorted().toList(); // no node reports memory at all
    }

    /**
     * The policies memory can be bound with here.
     *
     * @return the supported policies; empty for topologies not of this machine, or where hwloc
     *         cannot bind memory
     */
    public Set<NumaPolicy> supportedPolicies() {
        return policies;
    }

    /**
     * Whether hwloc can bind a range of memory here ({@code hwloc_set_area_membind}).
     *
     * @return true if memory binding works on this platform
     */
    public boolean areaBindingSupported() {
        return areaBinding;
    }

    /**
     * Whether hwloc can tell where the pages of a range are ({@code hwloc_get_area_memlocation}).
     *
     * @return true if placement can be verified here
     */
    public boolean locationQuerySupported() {
        return locationQuery;
    }

    /**
     * The topology in words: nodes with memory and CPUs, the distance matrix, PCI devices with their
     * nodes, and the binding policies supported.
     *
     * @return several lines, each ending with a line separator
     */
    public String report() {
        String nl = System.lineSeparator();
        StringBuilder b = new StringBuilder();
        long cpuCount = nodes.stream().flatMap(n -> n.cpus().stream()).distinct().count();
        b.append("NUMA topology of ").append(source).append(" (hwloc ").append(hwlocVersion).append("): ")
                .append(nodes.size()).append(nodes.size() == 1 ? " node" : " nodes").append(", ")
                .append(nodes.stream().mapToLong(Node::memoryByteSize).sum() > 0
                        ? bytes(nodes.stream().mapToLong(Node::memoryByteSize).sum()) : "memory unknown")
                .append(", ").append(cpuCount).append(" CPUs").append(nl);
        for (Node n : nodes) {
            b.append("  node ").append(n.id()).append(": ").append(bytes(n.memoryByteSize()))
                    .append(n.subtype().isEmpty() ? "" : " " + n.subtype())
                    .append(", CPUs ").append(n.cpuList()).append(nl);
        }
        if (distances == null) {
            b.append("  distances: none reported").append(nl);
        } else {
            b.append("  distances (").append(distanceKind).append(", 10 = local):").append(nl).append("        ");
            for (Node n : nodes) {
                b.append(String.format(Locale.ROOT, "%6d", n.id()));
            }
            b.append(nl);
            for (int i = 0; i < nodes.size(); i++) {
                b.append(String.format(Locale.ROOT, "    %4d", nodes.get(i).id()));
                for (int j = 0; j < nodes.size(); j++) {
                    b.append(String.format(Locale.ROOT, "%6d", distances[i][j]));
                }
                b.append(nl);
            }
        }
        if (pciDevices.isEmpty()) {
            b.append("  PCI devices: none seen").append(nl);
        } else {
            b.append("  PCI devices (bus id, class, vendor:device, OS names -> local NUMA nodes):").append(nl);
            for (PciDevice d : pciDevices) {
                b.append("    ").append(d).append(nl);
            }
        }
        if (thisSystem) {
            if (!areaBinding) {
                b.append("  memory binding: not supported on this platform").append(nl);
            } else {
                b.append("  memory binding: ").append(policies.stream().sorted().map(NumaPolicy::spec)
                        .collect(Collectors.joining(", ")));
                List<String> missing = EnumSet.complementOf(policies.isEmpty() ? EnumSet.noneOf(NumaPolicy.class)
                        : EnumSet.copyOf(policies)).stream().map(NumaPolicy::spec).toList();
                if (!missing.isEmpty()) {
                    b.append(" (not supported: ").append(String.join(", ", missing)).append(')');
                }
                b.append("; placement verification ").append(locationQuery ? "available" : "not available").append(nl);
            }
        }
        return b.toString();
    }

    @Override
    public String toString() {
        return "NumaTopology[" + source + ", " + nodes.size() + " nodes]";
    }

    static String nodeNames(List<Integer> ids) {
        return Spellings.nodeNames(ids);
    }

    /** {@code 0-3,8,10-11}. */
    static String compact(List<Integer> ids) {
        return Spellings.compact(ids);
    }

    static String bytes(long n) {
        if (n >= (1L << 30)) {
            return String.format(Locale.ROOT, "%.1f GiB", n / (double) (1L << 30));
        }
        if (n >= (1L << 20)) {
            return String.format(Locale.ROOT, "%.1f MiB", n / (double) (1L << 20));
        }
        return n + " bytes";
    }
}
