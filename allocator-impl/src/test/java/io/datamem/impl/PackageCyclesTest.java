package io.datamem.impl;

import io.datamem.testing.PackageGraph;
import org.junit.jupiter.api.Test;

import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * allocator-impl's packages form no import cycle and follow the direction docs/architecture.md
 * gives: each feature's implementation and provider in its {@code internal} package, which no other
 * package imports ({@code module-info} names the providers); the exported packages; then
 * {@code os}.
 */
class PackageCyclesTest {

    private final PackageGraph graph = PackageGraph.ofMainSources();

    @Test
    void noPackageIsPartOfACycle() {
        graph.assertNoCycles();
    }

    @Test
    void thePlumbingImportsNoFeature() {
        assertEquals(Set.of(), graph.uses("io.datamem.impl.os"), "io.datamem.impl.os imports this module's packages");
    }

    @Test
    void noPackageImportsAnImplementation() {
        // io.datamem.impl.internal.* hold the implementations behind the exported interfaces, with
        // their providers; they may import the exported packages and os, and nothing imports them
        for (String p : graph.packages()) {
            for (String used : graph.uses(p)) {
                assertTrue(!used.startsWith("io.datamem.impl.internal.") || used.equals(p), p + " imports " + used);
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
