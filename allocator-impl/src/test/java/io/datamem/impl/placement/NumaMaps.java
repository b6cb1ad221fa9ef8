package io.datamem.impl.placement;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the kernel says about the mapping holding an address, read from {@code /proc/self/maps} (its
 * range) and {@code /proc/self/numa_maps} (its policy and pages per node): a second witness of a
 * block's placement beside the allocator's own report ({@code move_pages}).
 *
 * @param start          the mapping's first address
 * @param end            the address past its last byte
 * @param policy         the memory policy as the kernel spells it: {@code bind:1}, {@code interleave:0-3},
 *                       {@code prefer:1} (or {@code prefer (many):1}), {@code local}, {@code default}
 * @param pagesPerNode   the mapping's resident pages per node, in its kernel page size
 * @param kernelPageSize the mapping's page size in bytes
 * @param line           the numa_maps line
 */
record NumaMaps(long start, long end, String policy, Map<Integer, Long> pagesPerNode, long kernelPageSize,
                String line) {

    /**
     * The mapping that holds an address.
     *
     * @param address an address inside a mapping
     * @return what the kernel reports about it
     * @throws IllegalStateException if no mapping holds it
     */
    static NumaMaps of(MemorySegment address) {
        long a = address.address();
        String maps = read("/proc/self/maps");
        long start = -1;
        long end = -1;
        for (String l : maps.split("\n")) {
            String[] range = l.substring(0, l.indexOf(' ')).split("-");
            long s = Long.parseUnsignedLong(range[0], 16);
            long e = Long.parseUnsignedLong(range[1], 16);
            if (a >= s && a < e) {
                start = s;
                end = e;
                break;
            }
        }
        if (start < 0) {
            throw new IllegalStateException("no mapping holds 0x" + Long.toHexString(a));
        }
        String prefix = Long.toHexString(start) + " ";
        for (String l : read("/proc/self/numa_maps").split("\n")) {
            if (l.startsWith(prefix)) {
                String[] fields = l.split(" ");
                String policy = fields[1];
                int i = 2;
                if (policy.equals("prefer") && fields.length > 2 && fields[2].startsWith("(many)")) {
                    policy = policy + " " + fields[2];
                    i = 3;
                }
                Map<Integer, Long> perNode = new TreeMap<>();
                long pageKiB = 4;
                for (; i < fields.length; i++) {
                    String f = fields[i];
                    if (f.matches("N\\d+=\\d+")) {
                        String[] kv = f.substring(1).split("=");
                        perNode.put(Integer.valueOf(kv[0]), Long.valueOf(kv[1]));
                    } else if (f.startsWith("kernelpagesize_kB=")) {
                        pageKiB = Long.parseLong(f.substring("kernelpagesize_kB=".length()));
                    }
                }
                return new NumaMaps(start, end, policy, perNode, pageKiB << 10, l);
            }
        }
        throw new IllegalStateException("no numa_maps line for the mapping at 0x" + Long.toHexString(start));
    }

    long residentPages() {
        return pagesPerNode.values().stream().mapToLong(Long::longValue).sum();
    }

    private static String read(String file) {
        try {
            return Files.readString(Path.of(file));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
