package io.datamem.arrow;

import io.datamem.testing.PackageGraph;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Arrow Java only where it is needed: {@code io.datamem.arrow} (the C interfaces) names no Arrow
 * Java class, so it works without {@code arrow-memory-core}; only {@code io.datamem.arrow.memory}
 * does. The two packages do not import each other.
 */
class ModuleBoundaryTest {

    private static String code(Path file) {
        try {
            return PackageGraph.stripCommentsAndStrings(Files.readString(file, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void theCInterfacesNeedTheJdkAndAllocatorApiOnly() throws IOException {
        Path root = Path.of("src", "main", "java", "io", "datamem", "arrow");
        List<Path> files;
        try (Stream<Path> s = Files.list(root)) {
            files = s.filter(p -> p.toString().endsWith(".java")).toList();
        }
        assertTrue(files.size() >= 5, files.toString());
        for (Path f : files) {
            assertFalse(code(f).contains("org.apache.arrow"), f + " names Arrow Java");
        }
        Path memory = root.resolve("memory").resolve("HandlerAllocationManager.java");
        assertTrue(code(memory).contains("org.apache.arrow.memory"));
    }

    @Test
    void thePackagesDoNotImportEachOther() {
        PackageGraph graph = PackageGraph.ofMainSources();
        graph.assertNoCycles();
        assertEquals(Set.of(), graph.uses("io.datamem.arrow"));
        assertEquals(Set.of(), graph.uses("io.datamem.arrow.memory"));
    }
}
