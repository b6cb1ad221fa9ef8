package io.datamem.impl.placement;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Makes sure the kernel's pool of explicit huge pages of one size has a number of pages free for a
 * test: when it has not, and the test runs as root, it raises the pool
 * ({@code /proc/sys/vm/nr_hugepages} for the default size, the sysfs counterpart for others) and
 * {@link #close()} restores it. Otherwise {@link #skipReason()} says precisely why not and how to
 * enable the tests.
 */
final class HugePageReservation implements AutoCloseable {

    private final Path control;
    private final long previous;   // -1: nothing changed
    private final String skipReason;

    private HugePageReservation(Path control, long previous, String skipReason) {
        this.control = control;
        this.previous = previous;
        this.skipReason = skipReason;
    }

    static HugePageReservation reserve(long pageSize, int pages) {
        String size = HugePages.sizeName(pageSize);
        Path sysfs = Path.of("/sys/kernel/mm/hugepages/hugepages-" + (pageSize >> 10) + "kB/nr_hugepages");
        Path control = pageSize == HugePages.defaultPageSize() ? Path.of("/proc/sys/vm/nr_hugepages") : sysfs;
        Optional<HugePages.Pool> pool = HugePages.pool(pageSize);
        if (pool.isEmpty()) {
            return new HugePageReservation(control, -1, "this kernel offers no " + size + " huge pages (no "
                    + sysfs.getParent() + "); they need a kernel and CPU with " + size + " page support");
        }
        if (pool.get().available() >= pages) {
            return new HugePageReservation(control, -1, null);
        }
        String how = "reserve them beforehand as root: echo " + (pool.get().total() + pages) + " > " + control
                + " (or boot with hugepagesz=" + size.replace(" ", "").replace("iB", "") + " hugepages=" + pages
                + "); run as root, the test reserves and restores them itself";
        if (!Files.isWritable(control)) {
            return new HugePageReservation(control, -1, "needs " + pages + " free " + size + " huge pages, the pool has "
                    + pool.get().available() + " and " + control + " is not writable by this user; " + how);
        }
        long before = pool.get().total();
        try {
            Files.writeString(control, Long.toString(before + pages - pool.get().available()));
        } catch (IOException e) {
            return new HugePageReservation(control, -1, "cannot write " + control + " (" + e.getMessage() + "); " + how);
        }
        long got = HugePages.pool(pageSize).map(HugePages.Pool::available).orElse(0L);
        if (got < pages) {
            restore(control, before);
            return new HugePageReservation(control, -1, "asked the kernel for " + pages + " free " + size
                    + " huge pages through " + control + " but it could provide only " + got + ": physical memory is "
                    + "too fragmented or too small on this machine for " + size + " pages at run time (reserve them "
                    + "at boot: hugepagesz=" + size.replace(" ", "").replace("iB", "") + " hugepages=" + pages + ")");
        }
        return new HugePageReservation(control, before, null);
    }

    private static void restore(Path control, long value) {
        try {
            Files.writeString(control, Long.toString(value));
        } catch (IOException e) {
            throw new IllegalStateException("could not restore " + control + " to " + value, e);
        }
    }

    /** Null when the pages are there; else why the test must be skipped. */
    String skipReason() {
        return skipReason;
    }

    @Override
    public void close() {
        if (previous >= 0) {
            restore(control, previous);
        }
    }
}
