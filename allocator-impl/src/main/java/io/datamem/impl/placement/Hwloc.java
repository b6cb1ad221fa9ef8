package io.datamem.impl.placement;

import io.datamem.impl.os.LinuxMemory;
import io.datamem.internal.Libc;
import org.lwjgl.PointerBuffer;
import org.lwjgl.system.MemoryStack;
import org.lwjgl.system.MemoryUtil;
import org.lwjgl.util.hwloc.hwloc_distances_s;
import org.lwjgl.util.hwloc.hwloc_obj;
import org.lwjgl.util.hwloc.hwloc_pcidev_attr_s;
import org.lwjgl.util.hwloc.hwloc_topology_membind_support;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.IntBuffer;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.lwjgl.util.hwloc.HWLoc.HWLOC_DISTANCES_KIND_VALUE_BANDWIDTH;
import static org.lwjgl.util.hwloc.HWLoc.HWLOC_DISTANCES_KIND_VALUE_LATENCY;
import static org.lwjgl.util.hwloc.HWLoc.HWLOC_OBJ_NUMANODE;
import static org.lwjgl.util.hwloc.HWLoc.HWLOC_OBJ_OS_DEVICE;
import static org.lwjgl.util.hwloc.HWLoc.HWLOC_TYPE_FILTER_KEEP_IMPORTANT;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_bitmap_alloc;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_bitmap_first;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_bitmap_free;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_bitmap_next;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_bitmap_set;
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
import static org.lwjgl.util.hwloc.HWLoc.hwloc_topology_get_complete_nodeset;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_topology_get_infos;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_topology_get_support;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_topology_init;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_topology_is_thissystem;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_topology_load;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_topology_set_io_types_filter;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_topology_set_synthetic;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_topology_set_xmlbuffer;

/**
 * hwloc, through LWJGL's binding: topology snapshots, and memory binding and location queries on
 * this machine. The binding and query functions are called through FFM downcalls of our own (to the
 * functions of the hwloc library LWJGL loaded) so that {@code errno} is captured.
 *
 * <p>This is the only class that touches LWJGL; it is loaded when a NUMA feature is first used.
 */
final class Hwloc {

    // hwloc_membind_policy_t and hwloc_membind_flags_t (compile-time constants of hwloc.h)
    static final int MEMBIND_DEFAULT = 0;
    static final int MEMBIND_FIRSTTOUCH = 1;
    static final int MEMBIND_BIND = 2;
    static final int MEMBIND_INTERLEAVE = 3;
    static final int MEMBIND_NEXTTOUCH = 4;
    static final int MEMBIND_STRICT = 1 << 2;
    static final int MEMBIND_MIGRATE = 1 << 3;
    static final int MEMBIND_BYNODESET = 1 << 5;

    private Hwloc() {
    }

    /** This machine's topology, loaded once; the handle stays open for binding. */
    private static final class Machine {
        static final long TOPOLOGY;
        static final NumaTopology SNAPSHOT;
        static final MethodHandle SET_AREA_MEMBIND;
        static final MethodHandle GET_AREA_MEMLOCATION;
        static final String FAILURE;
        static final Throwable CAUSE;
        static final Map<List<Integer>, Long> NODESETS = new ConcurrentHashMap<>();

        static {
            long topology = 0;
            NumaTopology snapshot = null;
            MethodHandle bind = null;
            MethodHandle where = null;
            String failure = null;
            Throwable cause = null;
            try {
                topology = open(null, null);
                snapshot = snapshot(topology, "this machine");
                var library = org.lwjgl.util.hwloc.HWLoc.getLibrary();
                bind = LinuxMemory.downcallCapturingErrno(
                        MemorySegment.ofAddress(library.getFunctionAddress("hwloc_set_area_membind")),
                        FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT));
                where = LinuxMemory.downcallCapturingErrno(
                        MemorySegment.ofAddress(library.getFunctionAddress("hwloc_get_area_memlocation")),
                        FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT));
            } catch (LinkageError | RuntimeException e) {
                failure = describe(e);
                cause = e;
            }
            TOPOLOGY = topology;
            SNAPSHOT = snapshot;
            SET_AREA_MEMBIND = bind;
            GET_AREA_MEMLOCATION = where;
            FAILURE = failure;
            CAUSE = cause;
        }
    }

    private static String describe(Throwable e) {
        String platform = System.getProperty("os.name") + "/" + System.getProperty("os.arch");
        return "hwloc could not be loaded through LWJGL on " + platform + ": " + e
                + (e.getCause() != null ? " (" + e.getCause() + ")" : "")
                + ". NUMA features need org.lwjgl:lwjgl-hwloc and org.lwjgl:lwjgl with their natives for this platform "
                + "on the class or module path, and native access enabled (--enable-native-access=ALL-UNNAMED on the "
                + "class path; io.datamem.impl,org.lwjgl on the module path)";
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
            topology = open(synthetic, xml);
        } catch (LinkageError e) {
            throw new IllegalStateException(describe(e), e);
        }
        try {
            return snapshot(topology, synthetic != null ? "synthetic '" + synthetic + "'" : "XML");
        } finally {
            hwloc_topology_destroy(topology);
        }
    }

    private static long open(String synthetic, String xml) {
        long topology;
        try (MemoryStack stack = MemoryStack.stackPush()) {
            PointerBuffer p = stack.mallocPointer(1);
            if (hwloc_topology_init(p) != 0) {
                throw new IllegalStateException("hwloc_topology_init failed");
            }
            topology = p.get(0);
        }
        boolean ok = false;
        try {
            if (synthetic != null && hwloc_topology_set_synthetic(topology, synthetic) != 0) {
                throw new IllegalArgumentException("hwloc rejects the synthetic topology '" + synthetic
                        + "' (expected: levels such as 'pack:2 numa:1 core:4 pu:2', see hwloc's Synthetic topologies)");
            }
            if (xml != null && hwloc_topology_set_xmlbuffer(topology, xml) != 0) {
                throw new IllegalArgumentException("hwloc rejects the XML topology (expected: an hwloc XML export, "
                        + "as lstopo machine.xml writes it); it begins: "
                        + xml.strip().lines().limit(2).reduce("", (a, c) -> a + c.strip() + " "));
            }
            hwloc_topology_set_io_types_filter(topology, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
            if (hwloc_topology_load(topology) != 0) {
                throw synthetic != null || xml != null
                        ? new IllegalArgumentException("hwloc could not load the " + (xml != null ? "XML" : "synthetic")
                        + " topology")
                        : new IllegalStateException("hwloc could not load this machine's topology");
            }
            ok = true;
            return topology;
        } finally {
            if (!ok) {
                hwloc_topology_destroy(topology);
            }
        }
    }

    /** A {@code char *} field of an hwloc object, "" when NULL. */
    private static String string(hwloc_obj o, int fieldOffset) {
        long p = MemoryUtil.memGetAddress(o.address() + fieldOffset);
        return p == 0 ? "" : MemoryUtil.memUTF8(p);
    }

    private static List<Integer> bits(long bitmap) {
        List<Integer> out = new ArrayList<>();
        if (bitmap == 0) {
            return out;
        }
        for (int i = hwloc_bitmap_first(bitmap); i >= 0 && out.size() < 1 << 20; i = hwloc_bitmap_next(bitmap, i)) {
            out.add(i);
        }
        return out;
    }

    private static NumaTopology snapshot(long topology, String source) {
        boolean thisSystem = hwloc_topology_is_thissystem(topology);
        int count = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE);
        List<NumaTopology.Node> nodes = new ArrayList<>();
        List<Long> objects = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            hwloc_obj o = hwloc_get_obj_by_type(topology, HWLOC_OBJ_NUMANODE, i);
            nodes.add(new NumaTopology.Node(o.os_index(), o.attr().numanode().local_memory(), bits(o.cpuset()),
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
            List<Integer> cpus = ancestor == null ? List.of() : bits(ancestor.cpuset());
            // the nodes whose locality lies within the part the device hangs off (hwloc's nodeset of
            // that part also names memory attached higher up, such as machine-wide CXL memory)
            List<Integer> local = nodes.stream().filter(n -> !n.cpus().isEmpty() && cpus.containsAll(n.cpus()))
                    .map(NumaTopology.Node::id).toList();
            if (local.isEmpty() && ancestor != null) {
                local = bits(ancestor.nodeset());
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

    /** An immortal hwloc bitmap holding a set of node ids (cached per set). */
    static long nodeset(List<Integer> nodes) {
        system();
        return Machine.NODESETS.computeIfAbsent(List.copyOf(nodes), ids -> {
            long bitmap = hwloc_bitmap_alloc();
            if (bitmap == 0) {
                throw new OutOfMemoryError("hwloc_bitmap_alloc");
            }
            for (int id : ids) {
                hwloc_bitmap_set(bitmap, id);
            }
            return bitmap;
        });
    }

    /** The set of every node this machine has (what first-touch binding takes). */
    static long completeNodeset() {
        system();
        return hwloc_topology_get_complete_nodeset(Machine.TOPOLOGY);
    }

    /**
     * {@code hwloc_set_area_membind} on this machine.
     *
     * @return 0, or {@code -errno}
     */
    static int setAreaMembind(long address, long byteSize, long nodeset, int policy, int flags) {
        system();
        MemorySegment capture = LinuxMemory.errnoCapture();
        try {
            int r = (int) Machine.SET_AREA_MEMBIND.invokeExact(capture, Machine.TOPOLOGY, address, byteSize, nodeset,
                    policy, flags | MEMBIND_BYNODESET);
            return r < 0 ? -LinuxMemory.errno(capture) : r;
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        }
    }

    /**
     * {@code hwloc_get_area_memlocation} on this machine: the nodes holding the pages of a range that
     * are present.
     *
     * @param into receives the node ids
     * @return 0, or {@code -errno}
     */
    static int areaMemlocation(long address, long byteSize, List<Integer> into) {
        system();
        long set = hwloc_bitmap_alloc();
        if (set == 0) {
            throw new OutOfMemoryError("hwloc_bitmap_alloc");
        }
        try {
            MemorySegment capture = LinuxMemory.errnoCapture();
            int r = (int) Machine.GET_AREA_MEMLOCATION.invokeExact(capture, Machine.TOPOLOGY, address, byteSize, set,
                    MEMBIND_BYNODESET);
            if (r < 0) {
                return -LinuxMemory.errno(capture);
            }
            into.addAll(bits(set));
            return 0;
        } catch (Throwable t) {
            throw Libc.rethrow(t);
        } finally {
            hwloc_bitmap_free(set);
        }
    }
}
