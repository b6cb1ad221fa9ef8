package io.datamem.examples;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A separate project of a datamem user ({@code examples/consumer}: the BOM, {@code allocator-impl},
 * Micrometer through the BOM, a module declaration, JDK 25 through a toolchain, as
 * docs/getting-started.md says) built with Maven against the artifacts this build installed into
 * the local repository, then run with the two commands its README and the guide give
 * ({@code package}, then {@code validate exec:exec}), on the class path, on the module path and as a
 * {@code jlink} image, with the launch lines the guide gives. Nothing may print a warning, Maven
 * included.
 *
 * <p>It needs the libraries installed: the README's test command is {@code ./mvnw install}, which
 * installs each module before the next one is built. After a plain {@code verify} the local
 * repository may hold other jars than this build's, and the test says so instead of testing them.
 */
class ConsumerProjectIT {

    private static final Path ROOT = Path.of(System.getProperty("datamem.repo.root"));
    private static final String VERSION = System.getProperty("datamem.project.version");
    private static final Path LOCAL_REPO = Path.of(System.getProperty("datamem.local.repo"));
    private static final Path JDK = Path.of(System.getProperty("java.home"));
    private static final String MICROMETER_VERSION = System.getProperty("datamem.micrometer.version");

    private static Path project;

    @BeforeAll
    static void buildTheConsumer(@TempDir Path dir) throws Exception {
        for (String module : List.of("allocator-api", "allocator-impl")) {
            Path built = ROOT.resolve(module).resolve("target").resolve(module + "-" + VERSION + ".jar");
            Path installed = LOCAL_REPO.resolve("io/datamem").resolve(module).resolve(VERSION)
                    .resolve(module + "-" + VERSION + ".jar");
            assertTrue(Files.isRegularFile(installed), installed + " is not installed: this test builds a separate "
                    + "project against the installed artifacts; run ./mvnw install (the README's test command)");
            assertEquals(sha256(built), sha256(installed), installed + " is not the jar this build made ("
                    + built + "): run ./mvnw install (the README's test command)");
        }
        project = dir.resolve("consumer");
        copyTree(ROOT.resolve("examples/consumer"), project);
        // Maven runs on whatever JDK the machine's default is; the toolchain picks JDK 25 to compile.
        String[] package_ = {ROOT.resolve("mvnw").toString(), "-B", "-ntp", "-Dmaven.repo.local=" + LOCAL_REPO,
                "-Ddatamem.version=" + VERSION, "package"};
        Command build = run(project, package_);
        assertEquals(0, build.exit(), build.out());
        assertTrue(build.out().contains("BUILD SUCCESS"), build.out());
        assertFalse(build.out().contains("[WARNING]"), "the consumer's build prints no warning:\n" + build.out());
        System.out.println("ConsumerProjectIT: " + String.join(" ", package_) + "\n" + build.out());
    }

    @Test
    void runsWithTheSecondCommandOfItsReadme() throws Exception {
        String[] exec = {ROOT.resolve("mvnw").toString(), "-B", "-q", "-ntp", "-Dmaven.repo.local=" + LOCAL_REPO,
                "-Ddatamem.version=" + VERSION, "validate", "exec:exec"};
        Command r = run(project, exec);
        System.out.println("ConsumerProjectIT: " + String.join(" ", exec) + "\n" + r.out());
        assertEquals(0, r.exit(), r.out());
        // Maven 3.9's own JVM warns of Guice's Unsafe use when Maven itself runs on JDK 24+ (here the
        // test's JDK 25 is JAVA_HOME); that is Maven's, not the program's, which must print nothing else.
        String program = r.out().lines().filter(l -> !(l.startsWith("WARNING: ") && (l.contains("sun.misc.Unsafe")
                || l.contains("com.google.inject")))).map(l -> l + "\n").collect(Collectors.joining());
        assertEquals("consumer: sum 4950.0 through aligned64+stats\n"
                + "consumer: Micrometer " + MICROMETER_VERSION + ": datamem.allocations 1, datamem.memory.peak 8000"
                + " bytes, datamem.memory.used 0 bytes\n", program, "the program's output alone, on JDK 25: " + r.out());
    }

    @Test
    void getsMicrometerFromTheBomAtTheVersionDatamemIsBuiltWith() throws Exception {
        assertTrue(Files.isRegularFile(project.resolve("target/lib/micrometer-core-" + MICROMETER_VERSION + ".jar")),
                "the BOM manages micrometer-core at datamem's version " + MICROMETER_VERSION + ": "
                        + String.join(", ", libs()));
    }

    @Test
    void runsOnTheClassPath() throws Exception {
        String classPath = project.resolve("target/consumer.jar") + File.pathSeparator
                + project.resolve("target/lib") + File.separator + "*";
        // the guide's class-path line for programs that use NUMA (LWJGL reads fields through Unsafe)
        Command r = run(project, JDK.resolve("bin/java").toString(), "--enable-native-access=ALL-UNNAMED",
                "--sun-misc-unsafe-memory-access=allow", "-cp", classPath, "com.example.consumer.Main", "metrics",
                "numa:local");
        assertEquals(0, r.exit(), r.out());
        assertTrue(r.out().contains("consumer: sum 4950.0 through aligned64+stats"), r.out());
        assertTrue(r.out().contains("consumer: Micrometer " + MICROMETER_VERSION + ": datamem.allocations 1,"), r.out());
        assertTrue(r.out().contains("consumer: numa:local -> numa:local"), "LWJGL is on the class path: " + r.out());
        assertFalse(r.out().contains("WARNING"), r.out());
    }

    @Test
    void runsOnTheModulePath() throws Exception {
        Command r = run(project, JDK.resolve("bin/java").toString(),
                "--enable-native-access=io.datamem.api,io.datamem.impl", "-p", modulePath(),
                "-m", "com.example.consumer/com.example.consumer.Main", "numa:local");
        assertEquals(0, r.exit(), r.out());
        assertTrue(r.out().contains("consumer: sum 4950.0 through aligned64+stats"), r.out());
        // LWJGL is optional (requires static): on the module path it is resolved only when asked for
        assertTrue(r.out().contains("consumer: numa:local -> ") && r.out().contains("--add-modules org.lwjgl.hwloc"),
                "NUMA says which modules to add: " + r.out());
        assertFalse(r.out().contains("WARNING"), r.out());

        Command numa = run(project, JDK.resolve("bin/java").toString(),
                "--enable-native-access=io.datamem.api,io.datamem.impl,org.lwjgl",
                "--sun-misc-unsafe-memory-access=allow",
                "--add-modules", "org.lwjgl.hwloc,org.lwjgl.hwloc.natives,org.lwjgl.natives", "-p", modulePath(),
                "-m", "com.example.consumer/com.example.consumer.Main", "numa:local");
        assertEquals(0, numa.exit(), numa.out());
        assertTrue(numa.out().contains("consumer: numa:local -> numa:local"), numa.out());
        assertFalse(numa.out().contains("WARNING"), numa.out());
    }

    @Test
    void linksIntoAnImageWithoutTheOptionalModules() throws Exception {
        Path image = project.resolve("target/image");
        Command link = run(project, JDK.resolve("bin/jlink").toString(), "--module-path", modulePath(),
                "--add-modules", "com.example.consumer", "--strip-debug", "--no-header-files", "--no-man-pages",
                "--output", image.toString());
        assertEquals(0, link.exit(), link.out());
        Command modules = run(project, image.resolve("bin/java").toString(), "--list-modules");
        assertTrue(modules.out().contains("io.datamem.impl") && modules.out().contains("io.datamem.api"),
                modules.out());
        assertFalse(modules.out().contains("org.lwjgl") || modules.out().contains("jdk.jfr"),
                "LWJGL and JFR are optional: " + modules.out());
        Command r = run(project, image.resolve("bin/java").toString(),
                "--enable-native-access=io.datamem.api,io.datamem.impl",
                "-m", "com.example.consumer/com.example.consumer.Main", "aligned64+jfr");
        assertEquals(0, r.exit(), r.out());
        assertTrue(r.out().contains("consumer: sum 4950.0 through aligned64+stats"), r.out());
        assertTrue(r.out().contains("consumer: aligned64+jfr -> ") && r.out().contains("jdk.jfr"),
                "the JFR adaptor says what is missing: " + r.out());
        assertFalse(r.out().contains("WARNING"), r.out());
    }

    private static List<String> libs() throws IOException {
        try (Stream<Path> jars = Files.list(project.resolve("target/lib"))) {
            return jars.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    private static String modulePath() throws IOException {
        try (Stream<Path> jars = Files.list(project.resolve("target/lib"))) {
            return Stream.concat(Stream.of(project.resolve("target/consumer.jar")), jars.sorted())
                    .map(Path::toString).collect(Collectors.joining(File.pathSeparator));
        }
    }

    private static Command run(Path dir, String... command) throws IOException, InterruptedException {
        return Command.run(dir, Map.of(), 5, List.of(command));
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> files = Files.walk(from)) {
            files.forEach(source -> {
                try {
                    Path target = to.resolve(from.relativize(source).toString());
                    if (Files.isDirectory(source)) {
                        Files.createDirectories(target);
                    } else {
                        Files.copy(source, target, StandardCopyOption.REPLACE_EXISTING);
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
    }

    private static String sha256(Path file) throws IOException, NoSuchAlgorithmException {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
    }
}
