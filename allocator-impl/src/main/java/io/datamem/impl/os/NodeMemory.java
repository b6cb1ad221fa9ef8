package io.datamem.impl.os;

import io.datamem.internal.Libc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How much memory one NUMA node can still give a strictly bound allocation before the kernel
 * reclaims or, failing that, ends a process: the node's free memory
 * ({@code /sys/devices/system/node/nodeN/meminfo}, {@code MemFree}) less the high watermarks of
 * its zones ({@code /proc/zoneinfo}), below which the page allocator starts reclaiming. Internal.
 *
 * <p>A policy of {@code MPOL_BIND} may not spill to other nodes, so when its node is full the
 * kernel's out-of-memory killer runs, constrained to that node, and picks the process with the most
 * memory there, usually the one faulting the pages in, even when they are faulted through
 * {@code madvise(MADV_POPULATE_WRITE)}. The NUMA allocator reads this figure first and refuses a
 * populated bound block that does not fit. The figure is a snapshot: another process taking the
 * node's memory in between can still bring the killer.
 */
public final class NodeMemory {

    private static final Pattern MEM_FREE = Pattern.compile("(?m)^Node \\d+ MemFree:\\s+(\\d+) kB$");
    private static final Pattern ZONE = Pattern.compile("Node (\\d+), zone\\s+\\S+");
    private static final Pattern HIGH = Pattern.compile("\\s+high\\s+(\\d+)");

    private NodeMemory() {
    }

    /**
     * The bytes a bound allocation can still take on a node without the kernel reclaiming:
     * {@code MemFree} less the high watermarks of the node's zones, at least 0.
     *
     * @param node the node's OS index
     * @return the bytes, or -1 when this system does not tell (no such sysfs or procfs files)
     * @throws UncheckedIOException if the files exist but cannot be read
     */
    public static long allocatableBytes(int node) {
        String meminfo;
        String zoneinfo;
        try {
            meminfo = Files.readString(Path.of("/sys/devices/system/node/node" + node + "/meminfo"));
            zoneinfo = Files.readString(Path.of("/proc/zoneinfo"));
        } catch (NoSuchFileException e) {
            return -1;
        } catch (IOException e) {
            throw new UncheckedIOException("reading the free memory of NUMA node " + node, e);
        }
        Matcher free = MEM_FREE.matcher(meminfo);
        if (!free.find()) {
            return -1;
        }
        long bytes = Long.parseLong(free.group(1)) << 10;
        long highPages = 0;
        int zoneNode = -1;
        for (String line : zoneinfo.split("\n")) {
            Matcher zone = ZONE.matcher(line);
            if (zone.matches()) {
                zoneNode = Integer.parseInt(zone.group(1));
                continue;
            }
            Matcher high = HIGH.matcher(line);
            if (zoneNode == node && high.matches()) {
                highPages += Long.parseLong(high.group(1));
            }
        }
        return Math.max(0, bytes - highPages * Libc.pageSize());
    }
}
