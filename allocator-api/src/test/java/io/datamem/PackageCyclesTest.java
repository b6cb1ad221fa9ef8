package io.datamem;

import io.datamem.testing.PackageGraph;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * allocator-api's packages form no import cycle, and the core package uses nothing above it
 * (docs/architecture.md, "Packages").
 */
class PackageCyclesTest {

    private final PackageGraph graph = PackageGraph.ofMainSources();

    @Test
    void noPackageIsPartOfACycle() {
        graph.assertNoCycles();
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

    @Test
    void aCycleIsFoundAndReportedWithItsFiles(@TempDir Path root) throws IOException {
        write(root, "io/datamem/a/A.java", "package io.datamem.a;\nimport io.datamem.b.B;\nclass A {}");
        write(root, "io/datamem/b/B.java", "package io.datamem.b;\nclass B { io.datamem.a.A a; }");
        write(root, "io/datamem/c/C.java", "package io.datamem.c;\n// io.datamem.a.A in a comment\nclass C {}");
        PackageGraph g = PackageGraph.of(root);
        assertEquals(List.of(Set.of("io.datamem.a", "io.datamem.b")), g.cycles());
        assertEquals(Set.of(), g.uses("io.datamem.c"));
        AssertionError e = assertThrows(AssertionError.class, g::assertNoCycles);
        assertTrue(e.getMessage().contains("io.datamem.b -> io.datamem.a: [B.java]"), e.getMessage());
        assertEquals(1, g.fileCount("io.datamem.a"));
    }

    private static void write(Path root, String file, String text) throws IOException {
        Path p = root.resolve(file);
        Files.createDirectories(p.getParent());
        Files.writeString(p, text);
    }
}
