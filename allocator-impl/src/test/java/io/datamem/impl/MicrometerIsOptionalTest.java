package io.datamem.impl;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.impl.adaptor.StatisticsAdaptor;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Micrometer is an optional dependency: every adaptor, providers included, works in a JVM whose
 * class path has no Micrometer jar, and loads no Micrometer class.
 */
class MicrometerIsOptionalTest {

    /** Runs in the child JVM: every adaptor, by name, through an array. */
    public static void main(String[] args) {
        DataMemHandler h = DataMem.createHandler("aligned64+guard+tracking+limit=1g+faults=nth:1000+jfr+stats");
        try (NDArray a = DataMem.callWith(h, () -> NDArray.zeros(DType.FLOAT64, 1000))) {
            a.resize(2000);
        }
        StatisticsAdaptor s = AllocatorStack.find(h, StatisticsAdaptor.class).orElseThrow();
        System.out.println("ok " + s.figures().allocations() + " " + s.figures().frees());
    }

    @Test
    void adaptorsRunWithoutMicrometerOnTheClassPath() throws Exception {
        String classPath = Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(e -> !e.contains("micrometer") && !e.contains("HdrHistogram") && !e.contains("LatencyUtils"))
                .collect(Collectors.joining(File.pathSeparator));
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-verbose:class", "-cp", classPath,
                MicrometerIsOptionalTest.class.getName());
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(2, TimeUnit.MINUTES));
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("ok 1 1"), out.lines().filter(l -> !l.startsWith("[")).collect(Collectors.joining("\n")));
        assertFalse(out.contains("io.micrometer"), "no Micrometer class was even looked for");
    }
}
