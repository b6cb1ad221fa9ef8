package io.datamem.impl.placement;

import io.datamem.spi.DataMemProvider;
import io.datamem.DataMem;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * LWJGL (and hwloc) are loaded only when a NUMA or topology feature is used: a fresh JVM that lists
 * the providers, resolves names and allocates huge pages loads no {@code org.lwjgl} class; one that
 * builds {@code numa:local} does, and prints no JVM warning with datamem's flags.
 */
class LazyHwlocLoadingTest {

    /** The child JVM's program: {@code numa} as argument uses NUMA, otherwise everything else. */
    public static void main(String[] args) {
        DataMem.describeProviders();
        DataMemProvider.installed().forEach(p -> p.availability());
        for (String name : List.of("aligned64+stats", "hugepages:fallback=normal")) {
            var a = DataMem.createHandler(name).allocator();
            MemorySegment p = a.malloc(8 << 20);
            a.free(p, 8 << 20);
        }
        if (args.length > 0 && args[0].equals("numa")) {
            var a = DataMem.createHandler("numa:local").allocator();
            a.free(a.malloc(4096), 4096);
        }
        System.out.println("child done");
    }

    private static String run(String... args) throws IOException, InterruptedException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new java.util.ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED",
                "--sun-misc-unsafe-memory-access=allow", "-Xlog:class+load=info", "-cp",
                System.getProperty("java.class.path"), LazyHwlocLoadingTest.class.getName()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(2, TimeUnit.MINUTES));
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("child done"), out);
        return out;
    }

    @Test
    void lwjglIsLoadedOnlyWhenNumaIsUsed() throws Exception {
        String without = run();
        assertFalse(without.contains("org.lwjgl"), "no LWJGL class loaded without NUMA: "
                + without.lines().filter(l -> l.contains("lwjgl")).findFirst().orElse(""));
        String with = run("numa");
        assertTrue(with.contains("org.lwjgl.util.hwloc.HWLoc"), "NUMA loads hwloc through LWJGL");
        assertFalse(with.contains("WARNING"), with.lines().filter(l -> l.contains("WARNING")).toList().toString());
    }
}
