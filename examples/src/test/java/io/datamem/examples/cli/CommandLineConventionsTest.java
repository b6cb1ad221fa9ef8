package io.datamem.examples.cli;

import io.datamem.DataMem;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The command line's conventions, for every command: {@code -V}/{@code --version} print the build's
 * version; exit status 0 on success, 1 when the command ran and failed, 2 when the command line is
 * wrong, with the error and the usage on standard error; the usage help lists these statuses.
 */
class CommandLineConventionsTest {

    @TempDir
    Path dir;

    /** What a run of the command line returned and printed. */
    record Run(int status, String out, String err) {
    }

    /** Runs the command line in this JVM, capturing what it prints. */
    static synchronized Run cli(String... args) {
        PrintStream savedOut = System.out;
        PrintStream savedErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            int status = DatamemCli.run(args);
            return new Run(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(savedOut);
            System.setErr(savedErr);
        }
    }

    @ParameterizedTest
    @MethodSource("versionOptions")
    void theVersionOptionsPrintTheBuildsVersion(List<String> args) {
        String expected = System.getProperty("datamem.project.version");
        assertNotNull(expected, "the build passes datamem.project.version to the tests");
        Run r = cli(args.toArray(String[]::new));
        assertEquals(0, r.status(), r.err());
        assertEquals(List.of("datamem " + expected, "Java " + Runtime.version()), r.out().lines().toList());
        assertEquals("", r.err());
    }

    static Stream<List<String>> versionOptions() {
        return Stream.of(List.of("-V"), List.of("--version"), List.of("demo", "--version"), List.of("info", "-V"));
    }

    @Test
    void noSubcommandPrintsTheUsageToStandardErrorAndExits2() {
        Run r = cli();
        assertEquals(2, r.status(), r.err());
        assertEquals("", r.out());
        assertTrue(r.err().startsWith("datamem: Missing required subcommand\nUsage: datamem "), r.err());
        assertTrue(r.err().contains("Commands:\n  demo ") && r.err().contains("\nExit status:\n"), r.err());
    }

    @ParameterizedTest
    @MethodSource("usageErrors")
    void aWrongCommandLineIsReportedWithTheUsageAndExits2(String command, List<String> args, String message) {
        Run r = cli(args.toArray(String[]::new));
        assertEquals(2, r.status(), r.err());
        assertEquals("", r.out());
        assertTrue(r.err().startsWith(command + ": " + message), r.err());
        assertTrue(r.err().contains("\nUsage: " + command + " "), r.err());
    }

    static Stream<Arguments> usageErrors() {
        return Stream.of(
                Arguments.of("datamem", List.of("nosuch"), "unknown subcommand 'nosuch' (expected one of: demo, compute, info,"
                        + " replay, snapshot, view, metrics, help)"),
                Arguments.of("datamem", List.of("--nope"), "Unknown option: '--nope'"),
                Arguments.of("datamem demo", List.of("demo", "extra"), "Unmatched argument at index 1: 'extra'"),
                Arguments.of("datamem demo", List.of("demo", "--nope"), "Unknown option: '--nope'"),
                Arguments.of("datamem demo", List.of("demo", "--elements=many"),
                        "Invalid value for option '--elements': 'many'"),
                Arguments.of("datamem replay", List.of("replay"), "Missing required parameter: 'LOG'"),
                Arguments.of("datamem snapshot", List.of("snapshot"), "Missing option: --pid PID or --log LOG"),
                Arguments.of("datamem snapshot", List.of("snapshot", "--pid", "1", "--log", "x.log"),
                        "--pid and --log are mutually exclusive"),
                Arguments.of("datamem snapshot", List.of("snapshot", "--pid", "-5"),
                        "Invalid value for option '--pid': -5 (expected: a process id >= 1)"),
                Arguments.of("datamem replay", List.of("replay", "some.log", "--handler", "no_such_allocator"),
                        "Invalid value for option '--handler': unknown handler name 'no_such_allocator'"),
                Arguments.of("datamem metrics", List.of("metrics", "--handler", "no_such_allocator"),
                        "Invalid value for option '--handler': unknown handler name 'no_such_allocator'"),
                Arguments.of("datamem metrics", List.of("metrics", "--handler", "aligned:3+stats"),
                        "Invalid value for option '--handler': "),
                Arguments.of("datamem metrics", List.of("metrics", "--handler", "aligned64"),
                        "Invalid value for option '--handler': handler 'aligned64' has no statistics to publish"),
                Arguments.of("datamem metrics", List.of("metrics", "--serve", "65536"),
                        "Invalid value for option '--serve': 65536 (expected: a TCP port in [0, 65535], 0 for any)"),
                Arguments.of("datamem metrics", List.of("metrics", "--seconds", "-1"),
                        "Invalid value for option '--seconds': -1 (expected: >= 0)"));
    }

    @Test
    void anAllocationFailureExits1WithItsMessageAlone() {
        Run r = cli("metrics", "--handler", "aligned64+limit=1k+stats");
        assertEquals(1, r.status(), r.err());
        assertEquals("", r.out());
        assertTrue(r.err().startsWith("datamem metrics: handler 'aligned64+limit=1k+stats' refused "), r.err());
        assertFalse(r.err().contains("Usage:") || r.err().contains("\tat "), "no usage, no stack trace: " + r.err());
    }

    @Test
    void aHandlerUnavailableHereExits1() {
        Optional<String> unavailable = Stream.of("cuda:pinned+stats", "sycl:host+stats").filter(name -> {
            try {
                DataMem.createHandler(name);
                return false;
            } catch (IllegalStateException e) {
                return true;
            }
        }).findFirst();
        assumeTrue(unavailable.isPresent(), "CUDA and SYCL are both available here: no handler is unavailable");
        Run r = cli("metrics", "--handler", unavailable.get());
        assertEquals(1, r.status(), r.err());
        assertTrue(r.err().startsWith("datamem metrics: handler '" + unavailable.get() + "' is unavailable: "),
                r.err());
        assertFalse(r.err().contains("Usage:"), r.err());
    }

    @Test
    void aLogThatCannotBeReadOrParsedExits1() throws Exception {
        Run missing = cli("replay", dir.resolve("missing.log").toString());
        assertEquals(1, missing.status(), missing.err());
        assertTrue(missing.err().startsWith("datamem replay: LOG: " + dir.resolve("missing.log")), missing.err());
        Path bad = Files.writeString(dir.resolve("bad.log"), "1 1 malloc 10\n");
        Run malformed = cli("replay", bad.toString());
        assertEquals(1, malformed.status(), malformed.err());
        assertTrue(malformed.err().contains("bad.log line 1"), malformed.err());
        assertFalse(malformed.err().contains("Usage:"), malformed.err());
    }

    @ParameterizedTest
    @MethodSource("helpRequests")
    void everyUsageHelpListsTheExitStatuses(List<String> args) {
        Run r = cli(args.toArray(String[]::new));
        assertEquals(0, r.status(), r.err());
        assertTrue(r.out().contains("\nExit status:\n  0   success\n  1   failure: the command ran and failed"),
                r.out());
        assertTrue(r.out().contains("\n  2   usage error: "), r.out());
    }

    static Stream<List<String>> helpRequests() {
        return Stream.of(List.of("--help"), List.of("demo", "--help"), List.of("info", "-h"),
                List.of("replay", "--help"), List.of("snapshot", "--help"), List.of("metrics", "--help"),
                List.of("help", "demo"));
    }
}
