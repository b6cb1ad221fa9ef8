package io.datamem.benchmarks.report;

import java.io.IOException;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

import static java.lang.foreign.ValueLayout.ADDRESS;

/**
 * The machine a run measured.
 *
 * @param cpu                  the processor model ({@code /proc/cpuinfo})
 * @param cores                processors available to the JVM
 * @param memoryBytes          physical memory ({@code /proc/meminfo})
 * @param os                   operating system and kernel release
 * @param transparentHugePages the transparent huge page mode and defrag setting
 * @param virtualized          whether the processor reports running under a hypervisor
 * @param libc                 the C library's version
 * @param jdk                  the JDK that runs the report (the one that ran the benchmarks)
 */
public record Machine(String cpu, int cores, long memoryBytes, String os, String transparentHugePages,
                      boolean virtualized, String libc, String jdk) {

    /**
     * Describes this machine.
     *
     * @return what it is
     */
    public static Machine current() {
        List<String> cpuinfo = lines(Path.of("/proc/cpuinfo"));
        String cpu = field(cpuinfo, "model name").orElse(System.getProperty("os.arch"));
        boolean virtualized = field(cpuinfo, "flags").map(f -> (" " + f + " ").contains(" hypervisor ")).orElse(false);
        long memory = field(lines(Path.of("/proc/meminfo")), "MemTotal")
                .map(v -> Long.parseLong(v.replaceAll("[^0-9]", "")) * 1024).orElse(-1L);
        String thp = selected(Path.of("/sys/kernel/mm/transparent_hugepage/enabled"))
                + " (defrag " + selected(Path.of("/sys/kernel/mm/transparent_hugepage/defrag")) + ")";
        String os = System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                + System.getProperty("os.arch");
        String jdk = "JDK " + System.getProperty("java.runtime.version") + " (" + System.getProperty("java.vm.name")
                + ", " + System.getProperty("java.vendor") + ")";
        return new Machine(cpu, Runtime.getRuntime().availableProcessors(), memory, os, thp, virtualized, readLibc(), jdk);
    }

    private static List<String> lines(Path p) {
        try {
            return Files.readAllLines(p);
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
    }

    private static Optional<String> field(List<String> lines, String name) {
        for (String l : lines) {
            int colon = l.indexOf(':');
            if (colon > 0 && l.substring(0, colon).trim().equals(name)) {
                return Optional.of(l.substring(colon + 1).trim());
            }
        }
        return Optional.empty();
    }

    /** The bracketed choice of a sysfs setting such as {@code always [madvise] never}. */
    static String selected(Path p) {
        List<String> l = lines(p);
        if (l.isEmpty()) {
            return "unknown";
        }
        String s = l.get(0);
        int open = s.indexOf('[');
        int close = s.indexOf(']');
        return open >= 0 && close > open ? s.substring(open + 1, close) : s.trim();
    }

    private static String readLibc() {
        try {
            Linker linker = Linker.nativeLinker();
            MethodHandle h = linker.downcallHandle(linker.defaultLookup().find("gnu_get_libc_version").orElseThrow(),
                    FunctionDescriptor.of(ADDRESS));
            MemorySegment s = (MemorySegment) h.invokeExact();
            return "glibc " + s.reinterpret(64).getString(0);
        } catch (Throwable t) {
            return "unknown C library";
        }
    }

    /**
     * The machine as a Markdown table.
     *
     * @return the table
     */
    public String markdown() {
        return "| | |\n|---|---|\n"
                + "| processor | " + cpu + (virtualized ? " (virtual machine)" : "") + " |\n"
                + "| cores | " + cores + " |\n"
                + "| memory | " + String.format(Locale.ROOT, "%.1f GiB", memoryBytes / (double) (1L << 30)) + " |\n"
                + "| operating system | " + os + " |\n"
                + "| transparent huge pages | " + transparentHugePages + " |\n"
                + "| C library | " + libc + " |\n"
                + "| JDK | " + jdk + " |\n";
    }
}
