package io.datamem.impl.os;

import io.datamem.internal.Libc;
import org.lwjgl.PointerBuffer;
import org.lwjgl.system.MemoryStack;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.lwjgl.util.hwloc.HWLoc.HWLOC_TYPE_FILTER_KEEP_IMPORTANT;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_bitmap_alloc;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_bitmap_first;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_bitmap_free;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_bitmap_next;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_bitmap_set;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_topology_destroy;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_topology_get_complete_nodeset;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_topology_init;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_topology_load;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_topology_set_io_types_filter;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_topology_set_synthetic;
import static org.lwjgl.util.hwloc.HWLoc.hwloc_topology_set_xmlbuffer;

/**
 * hwloc, through LWJGL's binding: this machine's topology handle, memory binding and location
 * queries on it, and the loading of topologies. The binding and query functions are called through
 * FFM downcalls of our own (to the functions of the hwloc library LWJGL loaded) so that
 * {@code errno} is captured. {@code io.datamem.impl.placement} reads topologies into
 * {@code NumaTopology} snapshots with it; the NUMA allocator binds with it.
 *
 * <p>This and {@code io.datamem.impl.placement}'s reader are the only classes that touch LWJGL;
 * they are loaded when a NUMA feature is first used.
 */
public final class HwlocBinding {

    // hwloc_membind_policy_t and hwloc_membind_flags_t (compile-time constants of hwloc.h)
    /** {@code HWLOC_MEMBIND_DEFAULT}: the system default policy. */
    public static final int MEMBIND_DEFAULT = 0;
    /** {@code HWLOC_MEMBIND_FIRSTTOUCH}: the node of the first touching CPU. */
    public static final int MEMBIND_FIRSTTOUCH = 1;
    /** {@code HWLOC_MEMBIND_BIND}: the given nodes. */
    public static final int MEMBIND_BIND = 2;
    /** {@code HWLOC_MEMBIND_INTERLEAVE}: pages round-robin over the given nodes. */
    public static final int MEMBIND_INTERLEAVE = 3;
    /** {@code HWLOC_MEMBIND_NEXTTOUCH}: the node of the next touching CPU. */
    public static final int MEMBIND_NEXTTOUCH = 4;
    /** {@code HWLOC_MEMBIND_STRICT}: fail rather than accept another placement. */
    public static final int MEMBIND_STRICT = 1 << 2;
    /** {@code HWLOC_MEMBIND_MIGRATE}: move pages already touched. */
    public static final int MEMBIND_MIGRATE = 1 << 3;
    /** {@code HWLOC_MEMBIND_BYNODESET}: the set given is a nodeset. */
    public static final int MEMBIND_BYNODESET = 1 << 5;

    private HwlocBinding() {
    }

    /** This machine's topology handle, opened once and kept open for binding. */
    private static final class Machine {
        static final long TOPOLOGY;
        static final MethodHandle SET_AREA_MEMBIND;
        static final MethodHandle GET_AREA_MEMLOCATION;
        static final String FAILURE;
        static final Throwable CAUSE;
        static final Map<List<Integer>, Long> NODESETS = new ConcurrentHashMap<>();

        static {
            long topology = 0;
            MethodHandle bind = null;
            MethodHandle where = null;
            String failure = null;
            Throwable cause = null;
            try {
                topology = open(null, null);
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
            SET_AREA_MEMBIND = bind;
            GET_AREA_MEMLOCATION = where;
            FAILURE = failure;
            CAUSE = cause;
        }
    }

    /**
     * Why hwloc could not be loaded, for messages.
     *
     * @param e the failure
     * @return the message, naming what NUMA features need
     */
    public static String describe(Throwable e) {
        String platform = System.getProperty("os.name") + "/" + System.getProperty("os.arch");
        return "hwloc could not be loaded through LWJGL on " + platform + ": " + e
                + (e.getCause() != null ? " (" + e.getCause() + ")" : "")
                + ". NUMA features need org.lwjgl:lwjgl-hwloc and org.lwjgl:lwjgl with their natives for this platform "
                + "on the class or module path, and native access enabled (--enable-native-access=ALL-UNNAMED on the "
                + "class path; io.datamem.impl,org.lwjgl on the module path)";
    }

    /**
     * Fails as loading this machine's topology failed, if it did.
     *
     * @throws IllegalStateException if hwloc could not be loaded or this machine's topology read
     */
    public static void requireLoaded() {
        if (Machine.FAILURE != null) {
            throw new IllegalStateException(Machine.FAILURE, Machine.CAUSE);
        }
    }

    /**
     * This machine's topology handle, open for the life of the process.
     *
     * @return the {@code hwloc_topology_t}
     * @throws IllegalStateException if hwloc could not be loaded here
     */
    public static long machine() {
        requireLoaded();
        return Machine.TOPOLOGY;
    }

    /**
     * Opens a topology: this machine's, a synthetic one or an XML export.
     *
     * @param synthetic a synthetic description, or null
     * @param xml       an XML export, or null
     * @return the loaded {@code hwloc_topology_t}; the caller destroys it
     * @throws IllegalArgumentException if hwloc rejects the description or the XML
     * @throws IllegalStateException    if hwloc cannot load this machine's topology
     */
    public static long open(String synthetic, String xml) {
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

    /**
     * The bits set in an hwloc bitmap.
     *
     * @param bitmap an {@code hwloc_bitmap_t}, or 0
     * @return the indices, ascending
     */
    public static List<Integer> bits(long bitmap) {
        List<Integer> out = new ArrayList<>();
        if (bitmap == 0) {
            return out;
        }
        for (int i = hwloc_bitmap_first(bitmap); i >= 0 && out.size() < 1 << 20; i = hwloc_bitmap_next(bitmap, i)) {
            out.add(i);
        }
        return out;
    }

    /**
     * An immortal hwloc bitmap holding a set of node ids (cached per set).
     *
     * @param nodes node ids
     * @return the {@code hwloc_nodeset_t}
     * @throws IllegalStateException if hwloc could not be loaded here
     */
    public static long nodeset(List<Integer> nodes) {
        requireLoaded();
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

    /**
     * The set of every node this machine has (what first-touch binding takes).
     *
     * @return the {@code hwloc_nodeset_t}
     * @throws IllegalStateException if hwloc could not be loaded here
     */
    public static long completeNodeset() {
        requireLoaded();
        return hwloc_topology_get_complete_nodeset(Machine.TOPOLOGY);
    }

    /**
     * {@code hwloc_set_area_membind} on this machine.
     *
     * @param address  the range
     * @param byteSize its length
     * @param nodeset  the nodes ({@link #nodeset} or {@link #completeNodeset})
     * @param policy   a {@code MEMBIND_} policy
     * @param flags    {@code MEMBIND_} flags ({@link #MEMBIND_BYNODESET} is added)
     * @return 0, or {@code -errno}
     * @throws IllegalStateException if hwloc could not be loaded here
     */
    public static int setAreaMembind(long address, long byteSize, long nodeset, int policy, int flags) {
        requireLoaded();
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
     * @param address  the range
     * @param byteSize its length
     * @param into     receives the node ids
     * @return 0, or {@code -errno}
     * @throws IllegalStateException if hwloc could not be loaded here
     */
    public static int areaMemlocation(long address, long byteSize, List<Integer> into) {
        requireLoaded();
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
