package io.datamem.impl.placement;

import io.datamem.impl.os.HwlocBinding;
import org.lwjgl.PointerBuffer;
import org.lwjgl.system.MemoryStack;
import org.lwjgl.system.MemoryUtil;
import org.lwjgl.util.hwloc.hwloc_distances_s;
import org.lwjgl.util.hwloc.hwloc_obj;
import org.lwjgl.util.hwloc.hwloc_pcidev_attr_s;
import org.lwjgl.util.hwloc.hwloc_topology_membind_support;

import java.nio.IntBuffer;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import static org.lwjgl.util.hwloc.HWLoc.HWLOC_DISTANCES_KIND_VALUE_BANDWIDTH;
import static org.lwjgl.util.hwloc.HWLoc.HWLOC_DISTANCES_KIND_VALUE_LATENCY;
import static org.lwjgl.util.hwloc.HWLoc.HWLOC_OBJ_NUMANODE;
import static org.lwjgl.util.hwloc.HWLoc.HWLOC_OBJ_OS_DEVICE;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_distances_get_by_type;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_distances_release;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_get_api_version;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_get_info_by_name;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_get_nbobjs_by_type;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_get_next_pcidev;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_get_non_io_ancestor_obj;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_get_obj_by_type;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_obj_type_string;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_topology_destroy;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_topology_get_infos;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_topology_get_support;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_topology_is_thissystem;

/**
 * Reads hwloc topologies (this machine's, through {@link HwlocBinding}'s handle, synthetic ones and
 * XML exports) into {@link NumaTopology} snapshots.
 *
 * <p>With {@link HwlocBinding}, the only class that touches LWJGL; it is loaded when a NUMA feature
 * is first used.
 */
final class Hwloc {

    private Hwloc() {
    }

    /** This machine's topology, read once from the handle that stays open for binding. */
    private static final class Machine {
        static final NumaTopology SNAPSHOT;
        static final String FAILURE;
        static final Throwable CAUSE;

        static {
            NumaTopology snapshot = null;
            String failure = null;
            Throwable cause = null;
            long handle = 0;
            try {
                handle = HwlocBinding.machine();
            } catch (IllegalStateException e) {
                failure = e.getMessage();      // HwlocBinding's own: HwlocBinding.describe of its failure
                cause = e.getCause();
            }
            if (failure == null) {
                try {
                    snapshot = snapshot(handle, "this machine");
                } catch (LinkageError | RuntimeException e) {
                    failure = HwlocBinding.describe(e);
                    cause = e;
                }
            }
            SNAPSHOT = snapshot;
            FAILURE = failure;
            CAUSE = cause;
        }
    }

    static NumaTopology system() {
        if (Machine.FAILURE != null) {
            throw new IllegalStateException(Machine.FAILURE, Machine.CAUSE);
        }
        return Machine.SNAPSHOT;
    }

    static NumaTopology load(String synthetic, String xml) {
        long topology;
        try {
            topology = HwlocBinding.open(synthetic, xml);
        } catch (LinkageError e) {
            throw new IllegalStateException(HwlocBinding.describe(e), e);
        }
        try {
            return snapshot(topology, synthetic != null ? "synthetic '" + synthetic + "'" : "XML");
        } finally {
            hwloc_topology_destroy(topology);
        }
    }

    /** A {@code char *} field of an hwloc object, "" when NULL. */
    private static String string(hwloc_obj o, int fieldOffset) {
        long p = MemoryUtil.memGetAddress(o.address() + fieldOffset);
        return p == 0 ? "" : MemoryUtil.memUTF8(p);
    }

    private static NumaTopology snapshot(long topology, String source) {
        boolean thisSystem = hwloc_topology_is_thissystem(topology);
        int count = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE);
        List<NumaTopology.Node> nodes = new ArrayList<>();
        List<Long> objects = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            hwloc_obj o = hwloc_get_obj_by_type(topology, HWLOC_OBJ_NUMANODE, i);
            nodes.add(new NumaTopology.Node(o.os_index(), o.attr().numanode().local_memory(), HwlocBinding.bits(o.cpuset()),
                    string(o, hwloc_obj.SUBTYPE)));
            objects.add(o.address());
        }
        long[][] distances = null;
        String distanceKind = "";
        try (MemoryStack stack = MemoryStack.stackPush()) {
            IntBuffer nr = stack.ints(8);
            PointerBuffer found = stack.callocPointer(8);
            if (hwloc_distances_get_by_type(topology, HWLOC_OBJ_NUMANODE, nr, found, 0, 0) == 0) {
                int n = Math.min(nr.get(0), 8);
                hwloc_distances_s chosen = null;
                for (int k = 0; k < n; k++) {
                    hwloc_distances_s d = hwloc_distances_s.create(found.get(k));
                    if (chosen == null || (d.kind() & HWLOC_DISTANCES_KIND_VALUE_LATENCY) != 0
                            && (chosen.kind() & HWLOC_DISTANCES_KIND_VALUE_LATENCY) == 0) {
                        chosen = d;
                    }
                }
                if (chosen != null && chosen.nbobjs() == count) {
                    int m = chosen.nbobjs();
                    distances = new long[m][m];
                    PointerBuffer objs = chosen.objs();
                    int[] position = new int[m];
                    for (int k = 0; k < m; k++) {
                        position[k] = objects.indexOf(objs.get(k));
                    }
                    boolean complete = true;
                    for (int k = 0; k < m; k++) {
                        complete &= position[k] >= 0;
                    }
                    if (complete) {
                        for (int a = 0; a < m; a++) {
                            for (int c = 0; c < m; c++) {
                                distances[position[a]][position[c]] = chosen.values().get(a * m + c);
                            }
                        }
                        distanceKind = (chosen.kind() & HWLOC_DISTANCES_KIND_VALUE_LATENCY) != 0 ? "latency"
                                : (chosen.kind() & HWLOC_DISTANCES_KIND_VALUE_BANDWIDTH) != 0 ? "bandwidth" : "hops";
                    } else {
                        distances = null;
                    }
                }
                for (int k = 0; k < n; k++) {
                    hwloc_distances_release(topology, hwloc_distances_s.create(found.get(k)));
                }
            }
        }
        List<NumaTopology.PciDevice> pci = new ArrayList<>();
        for (hwloc_obj d = hwloc_get_next_pcidev(topology, null); d != null; d = hwloc_get_next_pcidev(topology, d)) {
            hwloc_pcidev_attr_s a = d.attr().pcidev();
            String busId = String.format(Locale.ROOT, "%04x:%02x:%02x.%x", a.domain(), a.bus() & 0xff, a.dev() & 0xff,
                    a.func() & 0xff);
            List<String> names = new ArrayList<>();
            for (hwloc_obj c = d.io_first_child(); c != null; c = c.next_sibling()) {
                String osName = string(c, hwloc_obj.NAME);
                if (c.type() == HWLOC_OBJ_OS_DEVICE && !osName.isEmpty()) {
                    names.add(osName);
                }
            }
            hwloc_obj ancestor = hwloc_get_non_io_ancestor_obj(topology, d);
            String attached = ancestor == null ? "Machine"
                    : hwloc_obj_type_string(ancestor.type()) + (ancestor.depth() == 0 ? "" : " " + ancestor.logical_index());
            List<Integer> cpus = ancestor == null ? List.of() : HwlocBinding.bits(ancestor.cpuset());
            // the nodes whose locality lies within the part the device hangs off (hwloc's nodeset of
            // that part also names memory attached higher up, such as machine-wide CXL memory)
            List<Integer> local = nodes.stream().filter(n -> !n.cpus().isEmpty() && cpus.containsAll(n.cpus()))
                    .map(NumaTopology.Node::id).toList();
            if (local.isEmpty() && ancestor != null) {
                local = HwlocBinding.bits(ancestor.nodeset());
            }
            pci.add(new NumaTopology.PciDevice(busId, a.class_id() & 0xffff, a.vendor_id() & 0xffff,
                    a.device_id() & 0xffff, names, attached, cpus, local));
        }
        hwloc_topology_membind_support support = hwloc_topology_get_support(topology).membind();
        Set<NumaPolicy> policies = EnumSet.noneOf(NumaPolicy.class);
        boolean area = thisSystem && support.set_area_membind();
        if (area) {
            if (support.bind_membind()) {
                policies.add(NumaPolicy.BIND);
                policies.add(NumaPolicy.PREFERRED);
            }
            if (support.interleave_membind()) {
                policies.add(NumaPolicy.INTERLEAVE);
            }
            if (support.firsttouch_membind()) {
                policies.add(NumaPolicy.FIRST_TOUCH);
            }
            if (support.nexttouch_membind()) {
                policies.add(NumaPolicy.NEXT_TOUCH);
            }
        }
        String version = hwloc_get_info_by_name(hwloc_topology_get_infos(topology), "hwlocVersion");
        if (version == null) {
            int v = hwloc_get_api_version();
            version = (v >> 16) + "." + ((v >> 8) & 0xff) + "." + (v & 0xff);
        }
        return new NumaTopology(source, thisSystem, version, nodes, distances, distanceKind, pci, policies, area,
                thisSystem && support.get_area_memlocation());
    }

}
