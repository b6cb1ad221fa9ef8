package io.datamem;

import io.datamem.testing.PackageGraph;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * allocator-api's packages form no import cycle, and the core package uses nothing above it
 * (docs/architecture.md, "Packages").
 */
class PackageCyclesTest {

    private final PackageGraph graph = PackageGraph.ofMainSources();

    @Test
    void noPackageIsPartOfACycle() {
        List<Set<String>> cycles = graph.cycles();
        assertTrue(cycles.isEmpty(), () -> cycles.stream().map(c -> c + graph.describe(c))
                .collect(Collectors.joining("\n", "import cycles between packages:\n", "")));
    }

    @Test
    void theCorePackageUsesOnlyTheJdkOnlyHelpers() {
        assertEquals(Set.of("io.datamem.internal"), graph.uses("io.datamem"));
        assertEquals(Set.of(), graph.uses("io.datamem.internal"), "io.datamem.internal holds JDK-only helpers");
    }

    @Test
    void theGraphSeesQualifiedNamesButNotCommentsOrStrings() {
        String code = PackageGraph.stripCommentsAndStrings("""
                import a.b.C; // io.datamem.x.Y
                /* io.datamem.z.W */ String s = "io.datamem.q.R"; char c = '"';
                io.datamem.ok.Fine f;""");
        assertTrue(code.contains("io.datamem.ok.Fine"), code);
        assertTrue(!code.contains("io.datamem.x") && !code.contains("io.datamem.z") && !code.contains("io.datamem.q"),
                code);
    }
}
