package io.datamem.examples;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The packaged command line, end to end: the {@code ./datamem} launcher (class path), the module
 * path, the process default chosen by property and environment variable, the version and the
 * launcher's exit statuses.
 */
class LauncherIT {

    private static final Path ROOT = Path.of(System.getProperty("datamem.repo.root"));
    private static final Path TARGET = Path.of(System.getProperty("datamem.examples.target"));
    private static final String JAVA = Path.of(System.getProperty("java.home"), "bin", "java").toString();

    private static Command run(Map<String, String> env, String... command) throws IOException, InterruptedException {
        return Command.run(ROOT, env, 2, List.of(command));
    }

    @Test
    void launcherRunsTheDemoOnTheClassPath() throws Exception {
        Command r = run(Map.of(), ROOT.resolve("datamem").toString(), "demo");
        assertEquals(0, r.exit(), r.out());
        assertTrue(r.out().contains("ok: both blocks computed the same result and every byte was freed"), r.out());
        assertTrue(r.out().contains("aligned64+stats") && r.out().contains("default_allocator+stats"), r.out());
        assertFalse(r.out().contains("WARNING"), "no JVM warnings: " + r.out());
    }

    @Test
    void theModulePathWorksAsTheClassPathDoes() throws Exception {
        String modulePath;
        try (Stream<Path> jars = Files.list(TARGET.resolve("lib"))) {
            modulePath = Stream.concat(Stream.of(TARGET.resolve("datamem-examples.jar")), jars)
                    .map(Path::toString).collect(Collectors.joining(java.io.File.pathSeparator));
        }
        List<String> cmd = new ArrayList<>(List.of(JAVA,
                "--enable-native-access=io.datamem.api,io.datamem.impl,io.datamem.cuda,io.datamem.sycl,org.lwjgl",
                "--sun-misc-unsafe-memory-access=allow", "-Ddatamem.handler=aligned:128+stats",
                "--module-path", modulePath, "-m", "io.datamem.examples/io.datamem.examples.cli.DatamemCli"));
        Command info = run(Map.of(), concat(cmd, "info"));
        assertEquals(0, info.exit(), info.out());
        assertTrue(info.out().contains("default:       aligned:128+stats (from -Ddatamem.handler)"), info.out());
        assertTrue(info.out().contains("aligned64, aligned:N"), "providers found through module-info: " + info.out());
        assertTrue(info.out().contains("NUMA topology of this machine"), "hwloc natives resolved: " + info.out());
        assertFalse(info.out().contains("WARNING"), info.out());
        Command demo = run(Map.of(), concat(cmd, "demo", "--elements", "10000"));
        assertEquals(0, demo.exit(), demo.out());
        assertFalse(demo.out().contains("WARNING"), demo.out());
    }

    @Test
    void theEnvironmentVariableChoosesTheDefaultAndUnknownNamesListTheAvailableOnes() throws Exception {
        Command env = run(Map.of("DATAMEM_HANDLER", "aligned64"), ROOT.resolve("datamem").toString(), "info");
        assertEquals(0, env.exit(), env.out());
        assertTrue(env.out().contains("default:       aligned64 (from DATAMEM_HANDLER)"), env.out());
        Command bad = run(Map.of("DATAMEM_HANDLER", "no_such_allocator"), ROOT.resolve("datamem").toString(), "demo",
                "--elements", "10");
        assertEquals(1, bad.exit(), "a failure at run time, not a usage error: " + bad.out());
        assertTrue(bad.out().contains("DATAMEM_HANDLER='no_such_allocator' cannot be used: unknown handler name"),
                bad.out());
        assertTrue(bad.out().contains("Available: default_allocator"), bad.out());
    }

    @Test
    void theLauncherPrintsTheVersionAndExits2WithoutASubcommand() throws Exception {
        Command version = run(Map.of(), ROOT.resolve("datamem").toString(), "--version");
        assertEquals(0, version.exit(), version.out());
        assertTrue(version.out().startsWith("datamem " + System.getProperty("datamem.project.version") + "\nJava "),
                "the version in the jar: " + version.out());
        Command none = run(Map.of(), ROOT.resolve("datamem").toString());
        assertEquals(2, none.exit(), none.out());
        assertTrue(none.out().startsWith("datamem: Missing required subcommand\nUsage: datamem "), none.out());
    }

    @Test
    void aLauncherWithoutABuiltCommandLineSaysHowToBuildItAndExits1(@TempDir Path copy) throws Exception {
        Files.createDirectories(copy.resolve("scripts"));
        Path launcher = Files.copy(ROOT.resolve("datamem"), copy.resolve("datamem"));
        Files.copy(ROOT.resolve("scripts/find-jdk.sh"), copy.resolve("scripts/find-jdk.sh"));
        Command r = run(Map.of(), "sh", launcher.toString(), "demo");
        assertEquals(1, r.exit(), r.out());
        assertEquals("datamem: " + copy.resolve("examples/target/datamem-examples.jar")
                + " is missing; build it first with: ./mvnw -B -ntp -Pquickstart -pl examples -am package\n", r.out());
    }

    private static String[] concat(List<String> head, String... tail) {
        List<String> all = new ArrayList<>(head);
        all.addAll(List.of(tail));
        return all.toArray(String[]::new);
    }
}
