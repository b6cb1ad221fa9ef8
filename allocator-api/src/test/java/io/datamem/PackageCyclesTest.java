package io.datamem;

import io.datamem.testing.PackageGraph;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * allocator-api's packages form no import cycle, and the core package uses nothing above it
 * (docs/architecture.md, "Packages"); nor do the packages of any other module of the build (a
 * public package and its {@code internal} included), read from the sources beside this module.
 */
class PackageCyclesTest {

    private final PackageGraph graph = PackageGraph.ofMainSources();

    @Test
    void noPackageIsPartOfACycle() {
        graph.assertNoCycles();
    }

    @Test
    void noModuleOfTheBuildHasAPackageCycleInItsMainCode() throws IOException {
        Path root = Path.of("").toAbsolutePath().getParent();
        List<String> modules = modules(root);
        assertTrue(modules.containsAll(List.of("allocator-api", "allocator-impl", "allocator-cuda", "allocator-sycl",
                "allocator-ucx", "datamem-arrow", "datamem-numpy", "datamem-jna", "datamem-jcuda", "benchmarks")),
                "the build's modules, from " + root.resolve("pom.xml") + ": " + modules);
        StringBuilder found = new StringBuilder();
        for (String module : modules) {
            Path sources = root.resolve(module).resolve(Path.of("src", "main", "java"));
            if (!Files.isDirectory(sources)) {
                assertTrue(module.endsWith("-bom"), module + " has no " + sources);
                continue;
            }
            PackageGraph g = PackageGraph.of(sources);
            for (Set<String> cycle : g.cycles()) {
                found.append('\n').append(module).append(": ").append(cycle).append(g.describe(cycle));
            }
        }
        if (!found.isEmpty()) {
            fail("import cycles between packages:" + found);
        }
    }

    @Test
    void theModuleListIsReadFromTheBuild(@TempDir Path root) throws IOException {
        Files.writeString(root.resolve("pom.xml"), """
                <project><modules>
                  <module>a</module>
                  <!-- <module>commented</module> -->
                  <module> b </module>
                </modules></project>""");
        assertEquals(List.of("a", "b"), modules(root));
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

    /** The {@code <module>}s of the build's root {@code pom.xml}, in order, comments aside. */
    private static List<String> modules(Path root) throws IOException {
        String pom = Files.readString(root.resolve("pom.xml")).replaceAll("(?s)<!--.*?-->", "");
        List<String> modules = new ArrayList<>();
        Matcher m = Pattern.compile("<module>\\s*([^<\\s]+)\\s*</module>").matcher(pom);
        while (m.find()) {
            modules.add(m.group(1));
        }
        return modules;
    }

    private static void write(Path root, String file, String text) throws IOException {
        Path p = root.resolve(file);
        Files.createDirectories(p.getParent());
        Files.writeString(p, text);
    }
}
