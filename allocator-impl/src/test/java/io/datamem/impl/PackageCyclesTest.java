package io.datamem.impl;

import io.datamem.testing.PackageGraph;
import org.junit.jupiter.api.Test;

import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * allocator-impl's packages form no import cycle and follow the direction docs/architecture.md
 * gives: {@code provider} on top, the feature packages, then {@code os}.
 */
class PackageCyclesTest {

    private final PackageGraph graph = PackageGraph.ofMainSources();

    @Test
    void noPackageIsPartOfACycle() {
        graph.assertNoCycles();
    }

    @Test
    void nothingImportsTheProvidersAndThePlumbingImportsNoFeature() {
        for (String p : graph.packages()) {
            assertTrue(!graph.uses(p).contains("io.datamem.impl.provider"), p + " imports the providers");
        }
        assertEquals(Set.of(), graph.uses("io.datamem.impl.os"), "io.datamem.impl.os imports this module's packages");
    }

    @Test
    void noExportedPackageImportsTheImplementations() {
        // io.datamem.impl.internal.* hold the implementations behind the exported interfaces; they
        // may import the exported packages, os and snapshot, and only the providers (and jmx)
        // import them
        for (String p : graph.packages()) {
            if (p.startsWith("io.datamem.impl.internal.") || p.equals("io.datamem.impl.provider")
                    || p.equals("io.datamem.impl.jmx")) {
                continue;
            }
            for (String used : graph.uses(p)) {
                assertTrue(!used.startsWith("io.datamem.impl.internal."), p + " imports " + used);
            }
        }
    }

    @Test
    void everyPackageHoldsAtMostADozenFiles() {
        assertTrue(graph.packages().size() >= 8, graph.packages().toString());
        for (String p : graph.packages()) {
            assertTrue(graph.fileCount(p) <= 12, p + " holds " + graph.fileCount(p) + " files");
        }
    }
}
