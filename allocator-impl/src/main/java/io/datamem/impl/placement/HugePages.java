package io.datamem.impl.placement;

import io.datamem.impl.os.Spellings;
import io.datamem.internal.Libc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * What this machine offers in huge pages, read from the kernel's files: the explicit (hugetlbfs)
 * page pools in {@code /sys/kernel/mm/hugepages}, the transparent huge page settings in
 * {@code /sys/kernel/mm/transparent_hugepage}, and how a mapping is actually backed, from
 * {@code /proc/self/smaps}.
 *
 * <p>Every method reads the files afresh (the administrator may change them at any time) and is
 * thread-safe. On systems without these files (not Linux, or a kernel without huge page support)
 * the methods report nothing: no pools, {@link TransparentMode#UNSUPPORTED}.
 */
public final class HugePages {

    private static final Path HUGEPAGES = Path.of("/sys/kernel/mm/hugepages");
    private static final Path THP = Path.of("/sys/kernel/mm/transparent_hugepage");
    private static final Path NODES = Path.of("/sys/devices/system/node");
    private static final Path SMAPS = Path.of("/proc/self/smaps");

    private HugePages() {
    }

    /** The system-wide transparent huge page mode ({@code /sys/kernel/mm/transparent_hugepage/enabled}). */
    public enum TransparentMode {
        /** Every anonymous mapping may get huge pages. */
        ALWAYS,
        /** Only ranges advised with {@code madvise(MADV_HUGEPAGE)} get huge pages (datamem advises). */
        MADVISE,
        /** Transparent huge pages are switched off. */
        NEVER,
        /** The kernel has no transparent huge page support (or this is not Linux). */
        UNSUPPORTED;

        /**
         * Whether ranges advised with {@code MADV_HUGEPAGE} can get huge pages in this mode.
         *
         * @return true for {@link #ALWAYS} and {@link #MADVISE}
         */
        public boolean usable() {
            return this == ALWAYS || this == MADVISE;
        }
    }

    /**
     * One explicit huge page pool: the kernel's counters for one page size, system-wide or on one
     * NUMA node.
     *
     * @param pageSize   the page size in bytes (2 MiB, 1 GiB, ...)
     * @param node       the NUMA node the counters are for, or -1 for the whole system
     * @param total      pages in the pool ({@code nr_hugepages}: set aside by the administrator)
     * @param free       pages in the pool not yet handed out ({@code free_hugepages})
     * @param reserved   free pages already promised to mappings that have not touched them yet
     *                   ({@code resv_hugepages}; -1 per node, where the kernel does not count it)
     * @param surplus    pages beyond the pool, taken from the overcommit allowance
     *                   ({@code surplus_hugepages})
     * @param overcommit how many surplus pages the kernel may create on demand
     *                   ({@code nr_overcommit_hugepages}; -1 per node)
     */
    public record Pool(long pageSize, int node, long total, long free, long reserved, long surplus, long overcommit) {

        /**
         * Validates the components.
         *
         * @throws IllegalArgumentException if {@code pageSize} is not a power of two or a count is
         *                                  below -1
         */
        public Pool {
            if (pageSize <= 0 || Long.bitCount(pageSize) != 1) {
                throw new IllegalArgumentException("pageSize: " + pageSize + " (expected: a power of two)");
            }
            if (node < -1 || total < 0 || free < 0 || reserved < -1 || surplus < 0 || overcommit < -1) {
                throw new IllegalArgumentException("pool counters: node " + node + ", total " + total + ", free " + free
                        + ", reserved " + reserved + ", surplus " + surplus + ", overcommit " + overcommit
                        + " (expected: counts >= 0, -1 only where not counted)");
            }
        }

        /**
         * Pages a new mapping could get now: free pages not promised to anyone, plus what
         * overcommit still allows.
         *
         * @return a page count
         */
        public long available() {
            long unpromised = free - Math.max(reserved, 0);
            long extra = overcommit < 0 ? 0 : Math.max(0, overcommit - surplus);
            return Math.max(0, unpromised) + extra;
        }

        @Override
        public String toString() {
            return sizeName(pageSize) + (node >= 0 ? " on node " + node : "") + ": " + total + " in the pool, "
                    + free + " free" + (reserved >= 0 ? ", " + reserved + " reserved by mappings" : "")
                    + ", " + surplus + " surplus" + (overcommit > 0 ? " (overcommit " + overcommit + ")" : "");
        }
    }

    /**
     * How one mapping of this process is backed, from {@code /proc/self/smaps}. Neighbouring
     * mappings with the same properties may have been merged by the kernel into one, so the
     * figures can cover more than one block.
     *
     * @param start          the first address of the mapping
     * @param end            the address after its last byte
     * @param kernelPageSize the page size of the mapping ({@code KernelPageSize}: the explicit huge
     *                       page size for hugetlbfs mappings, else the base page size)
     * @param residentBytes  bytes resident in memory ({@code Rss}; explicit huge pages count in
     *                       {@code hugetlbBytes} instead)
     * @param anonHugeBytes  bytes backed by transparent huge pages ({@code AnonHugePages})
     * @param hugetlbBytes   bytes backed by explicit huge pages ({@code Private_Hugetlb} +
     *                       {@code Shared_Hugetlb})
     * @param thpEligible    whether the kernel considers the mapping eligible for transparent huge
     *                       pages ({@code THPeligible})
     */
    public record Residency(long start, long end, long kernelPageSize, long residentBytes, long anonHugeBytes,
                            long hugetlbBytes, boolean thpEligible) {

        /**
         * Validates the components.
         *
         * @throws IllegalArgumentException if the range is empty or a byte count is negative
         */
        public Residency {
            if (Long.compareUnsigned(end, start) <= 0 || kernelPageSize <= 0 || residentBytes < 0
                    || anonHugeBytes < 0 || hugetlbBytes < 0) {
                throw new IllegalArgumentException("mapping 0x" + Long.toHexString(start) + "-0x" + Long.toHexString(end)
                        + " (expected: a non-empty range with non-negative counters)");
            }
        }

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "0x%x-0x%x: kernel page %s, %d resident, %d on transparent huge pages, "
                    + "%d on explicit huge pages%s", start, end, sizeName(kernelPageSize), residentBytes, anonHugeBytes,
                    hugetlbBytes, thpEligible ? ", THP-eligible" : "");
        }
    }

    /**
     * The explicit huge page pools of the whole system, smallest page size first.
     *
     * @return the pools; empty if the kernel offers no explicit huge pages
     * @throws UncheckedIOException if the kernel's files cannot be read
     */
    public static List<Pool> pools() {
        return readPools(HUGEPAGES, -1);
    }

    /**
     * The explicit huge page pools of one NUMA node, smallest page size first.
     *
     * @param node the node's OS index
     * @return the pools; empty if the node or its counters do not exist
     * @throws IllegalArgumentException if {@code node} is negative
     * @throws UncheckedIOException     if the kernel's files cannot be read
     */
    public static List<Pool> pools(int node) {
        if (node < 0) {
            throw new IllegalArgumentException("node: " + node + " (expected: >= 0)");
        }
        return readPools(NODES.resolve("node" + node).resolve("hugepages"), node);
    }

    /**
     * The system-wide pool of one page size.
     *
     * @param pageSize the page size in bytes
     * @return the pool, or empty if the kernel has no pool of that size
     * @throws UncheckedIOException if the kernel's files cannot be read
     */
    public static Optional<Pool> pool(long pageSize) {
        return pools().stream().filter(p -> p.pageSize() == pageSize).findFirst();
    }

    private static List<Pool> readPools(Path dir, int node) {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        List<Pool> pools = new ArrayList<>();
        try (Stream<Path> sizes = Files.list(dir)) {
            for (Path p : sizes.toList()) {
                String name = p.getFileName().toString();
                if (!name.startsWith("hugepages-") || !name.endsWith("kB")) {
                    continue;
                }
                long pageSize = Long.parseLong(name.substring("hugepages-".length(), name.length() - 2)) * 1024;
                pools.add(new Pool(pageSize, node, readLong(p.resolve("nr_hugepages"), 0),
                        readLong(p.resolve("free_hugepages"), 0),
                        node < 0 ? readLong(p.resolve("resv_hugepages"), 0) : -1,
                        readLong(p.resolve("surplus_hugepages"), 0),
                        node < 0 ? readLong(p.resolve("nr_overcommit_hugepages"), 0) : -1));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + dir, e);
        }
        pools.sort(Comparator.comparingLong(Pool::pageSize));
        return List.copyOf(pools);
    }

    private static long readLong(Path file, long otherwise) throws IOException {
        try {
            return Long.parseLong(Files.readString(file).strip());
        } catch (NoSuchFileException e) {
            return otherwise;
        }
    }

    /**
     * The transparent huge page mode.
     *
     * @return the mode; {@link TransparentMode#UNSUPPORTED} if the kernel has no such setting
     */
    public static TransparentMode transparentMode() {
        String s = bracketed(THP.resolve("enabled"));
        return switch (s) {
            case "always" -> TransparentMode.ALWAYS;
            case "madvise" -> TransparentMode.MADVISE;
            case "never" -> TransparentMode.NEVER;
            default -> TransparentMode.UNSUPPORTED;
        };
    }

    /**
     * The transparent huge page defragmentation setting: what a page fault in an advised range does
     * when no huge page is free ({@code /sys/kernel/mm/transparent_hugepage/defrag}).
     *
     * @return for example {@code madvise} (compact memory for advised ranges, stalling the fault);
     *         empty if unsupported
     */
    public static String transparentDefrag() {
        return bracketed(THP.resolve("defrag"));
    }

    private static String bracketed(Path file) {
        try {
            String s = Files.readString(file);
            int open = s.indexOf('[');
            int close = s.indexOf(']', open + 1);
            return open >= 0 && close > open ? s.substring(open + 1, close) : s.strip();
        } catch (IOException e) {
            return "";
        }
    }

    /**
     * The size of a transparent huge page ({@code hpage_pmd_size}): 2 MiB on x86-64, and on
     * AArch64 with 4 KiB base pages.
     *
     * @return bytes, or 0 if the kernel has no transparent huge pages
     */
    public static long transparentPageSize() {
        try {
            return Long.parseLong(Files.readString(THP.resolve("hpage_pmd_size")).strip());
        } catch (IOException | NumberFormatException e) {
            return 0;
        }
    }

    /**
     * How the mapping containing an address is backed, from {@code /proc/self/smaps}: for example
     * whether a touched transparent-huge-page block really got huge pages.
     *
     * @param address an address in this process
     * @return the mapping's figures, or empty if no mapping contains the address (or smaps is not
     *         available)
     * @throws NullPointerException if {@code address} is null
     * @throws UncheckedIOException if smaps exists but cannot be read
     */
    public static Optional<Residency> residency(MemorySegment address) {
        Objects.requireNonNull(address, "address");
        long a = address.address();
        if (!Files.isReadable(SMAPS)) {
            return Optional.empty();
        }
        List<String> lines;
        try {
            lines = Files.readAllLines(SMAPS);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + SMAPS, e);
        }
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (!isHeader(line)) {
                continue;
            }
            int dash = line.indexOf('-');
            int space = line.indexOf(' ');
            long start = Long.parseUnsignedLong(line, 0, dash, 16);
            long end = Long.parseUnsignedLong(line, dash + 1, space, 16);
            if (Long.compareUnsigned(a, start) < 0 || Long.compareUnsigned(a, end) >= 0) {
                continue;
            }
            long kernelPage = Libc.pageSize();
            long rss = 0;
            long anonHuge = 0;
            long hugetlb = 0;
            boolean eligible = false;
            for (int j = i + 1; j < lines.size(); j++) {
                String f = lines.get(j);
                int colon = f.indexOf(':');
                if (colon < 0 || isHeader(f)) {
                    break; // the next mapping's header
                }
                String key = f.substring(0, colon);
                String value = f.substring(colon + 1).strip();
                switch (key) {
                    case "KernelPageSize" -> kernelPage = kiB(value);
                    case "Rss" -> rss = kiB(value);
                    case "AnonHugePages" -> anonHuge = kiB(value);
                    case "Private_Hugetlb", "Shared_Hugetlb" -> hugetlb += kiB(value);
                    case "THPeligible" -> eligible = value.equals("1");
                    default -> {
                    }
                }
            }
            return Optional.of(new Residency(start, end, kernelPage, rss, anonHuge, hugetlb, eligible));
        }
        return Optional.empty();
    }

    /** Whether a smaps line is a mapping's header: {@code start-end perms offset dev inode [path]}. */
    private static boolean isHeader(String line) {
        int dash = line.indexOf('-');
        int space = line.indexOf(' ');
        return dash > 0 && space > dash + 1 && isHex(line, 0, dash) && isHex(line, dash + 1, space);
    }

    private static boolean isHex(String s, int from, int to) {
        for (int i = from; i < to; i++) {
            if (Character.digit(s.charAt(i), 16) < 0) {
                return false;
            }
        }
        return to > from;
    }

    private static long kiB(String value) {
        String digits = value.endsWith("kB") ? value.substring(0, value.length() - 2).strip() : value;
        return Long.parseLong(digits) * 1024;
    }

    /**
     * A human-readable summary: the transparent huge page settings and every explicit pool,
     * system-wide and per NUMA node where the node has pages.
     *
     * @return several lines, each ending with a line separator
     */
    public static String report() {
        StringBuilder b = new StringBuilder();
        TransparentMode mode = transparentMode();
        b.append("transparent huge pages: ").append(mode.name().toLowerCase(Locale.ROOT));
        if (mode != TransparentMode.UNSUPPORTED) {
            b.append(" (page ").append(sizeName(transparentPageSize())).append(", defrag ").append(transparentDefrag())
                    .append(')');
        }
        b.append(System.lineSeparator());
        List<Pool> pools;
        try {
            pools = pools();
        } catch (UncheckedIOException e) {
            return b.append("explicit huge pages: unreadable (").append(e.getMessage()).append(')')
                    .append(System.lineSeparator()).toString();
        }
        if (pools.isEmpty()) {
            b.append("explicit huge pages: none offered by this kernel").append(System.lineSeparator());
        }
        for (Pool p : pools) {
            b.append("explicit huge pages ").append(p).append(System.lineSeparator());
            for (int node = 0; Files.isDirectory(NODES.resolve("node" + node)); node++) {
                for (Pool n : pools(node)) {
                    if (n.pageSize() == p.pageSize() && (n.total() > 0 || n.surplus() > 0)) {
                        b.append("  ").append(n).append(System.lineSeparator());
                    }
                }
            }
        }
        return b.toString();
    }

    /**
     * The default explicit huge page size: the size {@code /proc/sys/vm/nr_hugepages} (and
     * {@code sysctl vm.nr_hugepages}) reserves, from {@code Hugepagesize} in {@code /proc/meminfo}.
     *
     * @return bytes (2 MiB on x86-64), or -1 if the kernel does not say
     */
    public static long defaultPageSize() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (line.startsWith("Hugepagesize:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
        return -1;
    }

    /**
     * How an administrator reserves explicit huge pages of one size, in words.
     *
     * @param pageSize the page size in bytes
     * @return the commands and the boot parameters
     */
    static String howToReserve(long pageSize) {
        return Spellings.howToReserve(pageSize, pageSize == defaultPageSize());
    }

    /**
     * A page size in words.
     *
     * @param bytes a size
     * @return for example {@code 2 MiB}, {@code 1 GiB}, {@code 4 KiB}
     */
    static String sizeName(long bytes) {
        return Spellings.sizeName(bytes);
    }
}
