package io.datamem.impl.os;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How page sizes, NUMA node lists, PCI bus ids and huge-page reservations are written in reports
 * and messages, shared by the exported {@code io.datamem.impl.placement} ({@code HugePages},
 * {@code NumaTopology}, {@code NumaPlacement}) and the placement implementation behind it.
 */
public final class Spellings {

    private Spellings() {
    }

    /**
     * A list of node ids in its short form.
     *
     * @param ids node ids, in any order, repeats allowed
     * @return for example {@code 0-3,8,10-11}, or {@code none}
     */
    public static String compact(List<Integer> ids) {
        if (ids.isEmpty()) {
            return "none";
        }
        List<Integer> sorted = new ArrayList<>(new TreeSet<>(ids));
        StringBuilder b = new StringBuilder();
        int start = sorted.getFirst();
        int prev = start;
        for (int i = 1; i <= sorted.size(); i++) {
            int cur = i < sorted.size() ? sorted.get(i) : Integer.MIN_VALUE;
            if (cur != prev + 1) {
                b.append(b.isEmpty() ? "" : ",").append(start).append(prev > start ? "-" + prev : "");
                start = cur;
            }
            prev = cur;
        }
        return b.toString();
    }

    /**
     * A list of node ids with its noun.
     *
     * @param ids node ids
     * @return for example {@code node 2} or {@code nodes 0-3}
     */
    public static String nodeNames(List<Integer> ids) {
        return (ids.size() == 1 ? "node " : "nodes ") + compact(ids);
    }

    /**
     * Normalises a PCI bus id to {@code dddd:bb:dd.f}, lower case.
     *
     * @param busId for example {@code 3b:00.0} or {@code 0000:3B:00.0}
     * @return for example {@code 0000:3b:00.0}
     * @throws NullPointerException     if {@code busId} is null
     * @throws IllegalArgumentException if it is not a PCI bus id
     */
    public static String normalizeBusId(String busId) {
        Objects.requireNonNull(busId, "busId");
        Matcher m = Pattern.compile("(?:([0-9a-fA-F]{1,8}):)?([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})\\.([0-7])")
                .matcher(busId.strip());
        if (!m.matches()) {
            throw new IllegalArgumentException("PCI bus id: '" + busId
                    + "' (expected: DOMAIN:BUS:DEVICE.FUNCTION in hexadecimal, as lspci -D prints it, e.g. 0000:3b:00.0)");
        }
        int domain = m.group(1) == null ? 0 : Integer.parseUnsignedInt(m.group(1), 16);
        int bus = Integer.parseInt(m.group(2), 16);
        int dev = Integer.parseInt(m.group(3), 16);
        int fn = Integer.parseInt(m.group(4), 16);
        if (dev > 0x1f) {
            throw new IllegalArgumentException("PCI bus id: '" + busId + "': device " + m.group(3)
                    + " (expected: 00 to 1f)");
        }
        return String.format(Locale.ROOT, "%04x:%02x:%02x.%x", domain, bus, dev, fn);
    }

    /**
     * A page size in words.
     *
     * @param bytes a size
     * @return for example {@code 2 MiB}, {@code 1 GiB}, {@code 4 KiB}
     */
    public static String sizeName(long bytes) {
        if (bytes >= (1L << 30) && bytes % (1L << 30) == 0) {
            return (bytes >> 30) + " GiB";
        }
        if (bytes >= (1L << 20) && bytes % (1L << 20) == 0) {
            return (bytes >> 20) + " MiB";
        }
        if (bytes >= 1024 && bytes % 1024 == 0) {
            return (bytes >> 10) + " KiB";
        }
        return bytes + " B";
    }

    /**
     * How to reserve explicit huge pages of one size, for messages.
     *
     * @param pageSize        the page size
     * @param defaultPageSize whether it is the kernel's default huge page size
     * @return the commands (sysctl or sysfs, and the boot parameters)
     */
    public static String howToReserve(long pageSize, boolean defaultPageSize) {
        String sysfs = "echo N > " + Path.of("/sys/kernel/mm/hugepages").resolve("hugepages-" + (pageSize >> 10) + "kB")
                .resolve("nr_hugepages");
        String boot = "hugepagesz=" + sizeName(pageSize).replace(" ", "").replace("iB", "") + " hugepages=N";
        return defaultPageSize
                ? "sysctl vm.nr_hugepages=N (or echo N > /proc/sys/vm/nr_hugepages, or " + sysfs + "), or boot with " + boot
                : sysfs + ", or boot with " + boot;
    }
}
