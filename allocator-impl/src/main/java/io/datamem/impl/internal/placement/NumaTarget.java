package io.datamem.impl.internal.placement;

import io.datamem.impl.os.Spellings;
import io.datamem.impl.placement.NumaAllocator;
import io.datamem.impl.placement.NumaTopology;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Which NUMA nodes a {@link NumaAllocator} places memory on. A target is resolved against a
 * {@link NumaTopology} ({@link #resolve}): explicit node ids are checked to exist, the
 * nodes local to the calling thread are found per allocation, the nodes near a PCI device once.
 */
public sealed interface NumaTarget {

    /**
     * Explicit nodes, by their OS index (the numbers in {@code /sys/devices/system/node/nodeN},
     * {@code numactl} and {@code lstopo}).
     *
     * @param ids the node ids, ascending, without duplicates
     */
    record Nodes(List<Integer> ids) implements NumaTarget {

        /**
         * Validates and normalises the ids.
         *
         * @throws NullPointerException     if {@code ids} or an id is null
         * @throws IllegalArgumentException if {@code ids} is empty or an id is negative
         */
        public Nodes {
            Objects.requireNonNull(ids, "ids");
            if (ids.isEmpty()) {
                throw new IllegalArgumentException("ids: [] (expected: at least one NUMA node id)");
            }
            TreeSet<Integer> sorted = new TreeSet<>();
            for (Integer id : ids) {
                Objects.requireNonNull(id, "id");
                if (id < 0) {
                    throw new IllegalArgumentException("NUMA node id: " + id + " (expected: >= 0)");
                }
                sorted.add(id);
            }
            ids = List.copyOf(sorted);
        }

        @Override
        public String spec() {
            return ids.stream().map(String::valueOf).collect(Collectors.joining(","));
        }
    }

    /**
     * The node local to the thread that allocates, found at each allocation from the CPU it runs
     * on: the NUMA node(s) closest to that CPU that have memory (a memoryless node's nearest node
     * with memory, by distance).
     */
    record Local() implements NumaTarget {
        @Override
        public String spec() {
            return "local";
        }
    }

    /**
     * The nodes nearest a PCI device (a GPU, a NIC): those local to the part of the machine the
     * device is attached to.
     *
     * @param busId the device's PCI bus id, {@code DOMAIN:BUS:DEVICE.FUNCTION} in hexadecimal, as
     *              {@code lspci -D} prints it; normalised to lower case with a 4-digit domain
     */
    record NearPciDevice(String busId) implements NumaTarget {

        /**
         * Validates and normalises the bus id.
         *
         * @throws NullPointerException     if {@code busId} is null
         * @throws IllegalArgumentException if it is not a PCI bus id
         */
        public NearPciDevice {
            busId = Spellings.normalizeBusId(busId);
        }

        @Override
        public String spec() {
            return "pci:" + busId;
        }
    }

    /** Every NUMA node of the machine (for interleaving over all of them, say). */
    record AllNodes() implements NumaTarget {
        @Override
        public String spec() {
            return "all";
        }
    }

    /**
     * The target's spelling in handler names.
     *
     * @return for example {@code 0,1}, {@code local}, {@code pci:0000:3b:00.0}, {@code all}
     */
    String spec();

    /**
     * Explicit nodes.
     *
     * @param ids node ids (OS indexes)
     * @return the target
     * @throws IllegalArgumentException if {@code ids} is empty or an id is negative
     */
    static NumaTarget nodes(int... ids) {
        List<Integer> list = new ArrayList<>(ids.length);
        for (int id : ids) {
            list.add(id);
        }
        return new Nodes(list);
    }

    /**
     * The node local to the allocating thread.
     *
     * @return the target
     */
    static NumaTarget local() {
        return new Local();
    }

    /**
     * The nodes nearest a PCI device.
     *
     * @param busId for example {@code 0000:3b:00.0} or {@code 3b:00.0}
     * @return the target
     * @throws NullPointerException     if {@code busId} is null
     * @throws IllegalArgumentException if it is not a PCI bus id
     */
    static NumaTarget nearPciDevice(String busId) {
        return new NearPciDevice(busId);
    }

    /**
     * Every node.
     *
     * @return the target
     */
    static NumaTarget allNodes() {
        return new AllNodes();
    }

    /**
     * Parses a target as handler names write it: {@code 0}, {@code 0,2}, {@code 0-3,8},
     * {@code local}, {@code all}, {@code pci:0000:3b:00.0}.
     *
     * @param text the text
     * @return the target
     * @throws NullPointerException     if {@code text} is null
     * @throws IllegalArgumentException if malformed
     */
    static NumaTarget parse(String text) {
        String t = Objects.requireNonNull(text, "text").strip().toLowerCase(Locale.ROOT);
        switch (t) {
            case "local" -> {
                return local();
            }
            case "all" -> {
                return allNodes();
            }
            default -> {
            }
        }
        if (t.startsWith("pci:")) {
            return nearPciDevice(t.substring(4));
        }
        List<Integer> ids = new ArrayList<>();
        for (String part : t.split(",", -1)) {
            String p = part.strip();
            Matcher m = Pattern.compile("(\\d{1,6})(?:-(\\d{1,6}))?").matcher(p);
            if (!m.matches()) {
                throw new IllegalArgumentException("NUMA target: '" + text + "' (expected: node ids such as 0 or 0,2 or "
                        + "0-3, local, all, or pci:DOMAIN:BUS:DEVICE.FUNCTION)");
            }
            int from = Integer.parseInt(m.group(1));
            int to = m.group(2) == null ? from : Integer.parseInt(m.group(2));
            if (to < from || to - from > 4095) {
                throw new IllegalArgumentException("NUMA target: '" + text + "': range " + p
                        + " (expected: FROM-TO with FROM <= TO)");
            }
            for (int i = from; i <= to; i++) {
                ids.add(i);
            }
        }
        return new Nodes(ids);
    }

    /**
     * The node ids a target stands for on a topology.
     *
     * @param topology the topology
     * @param target   the target
     * @param cpu      the CPU the allocating thread runs on (used by {@link NumaTarget.Local})
     * @return the node ids, ascending, at least one
     * @throws NullPointerException     if {@code target} is null
     * @throws IllegalArgumentException if a node or device does not exist; the message lists what
     *                                  does
     */
    static List<Integer> resolve(NumaTopology topology, NumaTarget target, int cpu) {
        Objects.requireNonNull(target, "target");
        return switch (target) {
            case NumaTarget.Nodes n -> {
                List<Integer> missing = n.ids().stream()
                        .filter(id -> topology.nodes().stream().noneMatch(node -> node.id() == id)).toList();
                if (!missing.isEmpty()) {
                    throw new IllegalArgumentException("NUMA node" + (missing.size() > 1 ? "s " : " ")
                            + Spellings.compact(missing) + (missing.size() > 1 ? " do" : " does") + " not exist on "
                            + topology.source() + "; its nodes: " + topology.nodes().stream()
                            .map(NumaTopology.Node::toString).collect(Collectors.joining(", ")));
                }
                yield n.ids();
            }
            case NumaTarget.Local l -> topology.nodesOfCpu(cpu);
            case NumaTarget.NearPciDevice p -> topology.nodesNearPciDevice(p.busId());
            case NumaTarget.AllNodes a -> topology.nodes().stream().map(NumaTopology.Node::id).toList();
        };
    }
}
