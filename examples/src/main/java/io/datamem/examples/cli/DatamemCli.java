package io.datamem.examples.cli;

import io.datamem.AllocationException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;

/**
 * The {@code datamem} command line: {@code datamem demo}, {@code datamem info}, {@code datamem replay},
 * {@code datamem snapshot}, {@code datamem view}, {@code datamem metrics}.
 *
 * <p>Exit status, for every command: {@value #OK} on success; {@value #FAILURE} when the command
 * ran and failed (an allocation failure, a handler unavailable here, an unreadable or malformed
 * file, a check the command makes that did not hold); {@value #USAGE} when the command line is
 * wrong (no subcommand, an unknown subcommand or option, a missing or invalid argument), with the
 * usage on standard error.
 */
@Command(name = "datamem", mixinStandardHelpOptions = true, versionProvider = DatamemCli.Version.class,
        description = "Pluggable native-memory allocators for the JVM (NEP 49 for Java).",
        subcommands = {DemoCommand.class, ComputeCommand.class, InfoCommand.class, ReplayCommand.class, SnapshotCommand.class,
                ViewCommand.class, MetricsCommand.class,
                CommandLine.HelpCommand.class})
public final class DatamemCli {

    /** The exit status of a command that succeeded. */
    public static final int OK = CommandLine.ExitCode.OK;

    /** The exit status of a command that ran and failed. */
    public static final int FAILURE = CommandLine.ExitCode.SOFTWARE;

    /** The exit status of a command line that is wrong (usage error). */
    public static final int USAGE = CommandLine.ExitCode.USAGE;

    /** Creates the command (picocli instantiates it). */
    public DatamemCli() {
    }

    /**
     * Runs the command line and exits with its status: {@value #OK}, {@value #FAILURE} or
     * {@value #USAGE}.
     *
     * @param args the arguments
     */
    public static void main(String[] args) {
        System.exit(run(args));
    }

    /**
     * Runs the command line, printing to {@link System#out} and {@link System#err} as they are
     * when it is called.
     *
     * @param args the arguments
     * @return the exit status: {@value #OK} on success, {@value #FAILURE} if the command failed,
     *         {@value #USAGE} if the command line is wrong
     */
    public static int run(String... args) {
        CommandLine commandLine = new CommandLine(new DatamemCli())
                .setParameterExceptionHandler(DatamemCli::usageError)
                .setExecutionExceptionHandler(DatamemCli::failure);
        configure(commandLine);
        return commandLine.execute(args);
    }

    /** Gives every command the same version, exit codes and their list in the usage help. */
    private static void configure(CommandLine commandLine) {
        CommandSpec spec = commandLine.getCommandSpec();
        Map<String, String> codes = new LinkedHashMap<>();
        codes.put(String.valueOf(OK), "success");
        codes.put(String.valueOf(FAILURE), "failure: the command ran and failed (allocation failure, handler"
                + " unavailable here, unreadable or malformed file, failed check)");
        codes.put(String.valueOf(USAGE),
                "usage error: no or unknown subcommand, unknown option, missing or invalid argument");
        spec.usageMessage().exitCodeListHeading("%nExit status:%n").exitCodeList(codes);
        spec.versionProvider(new Version());
        spec.exitCodeOnSuccess(OK).exitCodeOnExecutionException(FAILURE).exitCodeOnInvalidInput(USAGE);
        commandLine.getSubcommands().values().forEach(DatamemCli::configure);
    }

    /**
     * Reports a wrong command line: what is wrong, then the usage of the command it was for (or
     * suggestions for a mistyped name), on standard error.
     */
    private static int usageError(ParameterException e, String[] args) {
        CommandLine commandLine = e.getCommandLine();
        PrintWriter err = commandLine.getErr();
        String unknown = unknownSubcommand(e);
        err.println(commandLine.getCommandSpec().qualifiedName() + ": " + (unknown == null ? e.getMessage()
                : "unknown subcommand '" + unknown + "' (expected one of: "
                + String.join(", ", commandLine.getSubcommands().keySet()) + ")"));
        if (!CommandLine.UnmatchedArgumentException.printSuggestions(e, err)) {
            commandLine.usage(err, commandLine.getColorScheme());
        }
        err.flush();
        return commandLine.getCommandSpec().exitCodeOnInvalidInput();
    }

    /**
     * The word a user gave where a subcommand was expected and that names none ({@code datamem
     * bogus}), or null when the error is another: an unknown option, an extra argument to a command
     * that has no subcommands.
     */
    private static String unknownSubcommand(ParameterException e) {
        if (!(e instanceof CommandLine.UnmatchedArgumentException u) || e.getCommandLine().getSubcommands().isEmpty()
                || u.getUnmatched().isEmpty()) {
            return null;
        }
        String first = u.getUnmatched().getFirst();
        return first.startsWith("-") ? null : first;
    }

    /**
     * Reports a command that failed: the message alone for the failures a user meets (an
     * unavailable handler, an allocation failure, a bad file, I/O), the stack trace for anything
     * else, which is a bug.
     */
    private static int failure(Exception e, CommandLine commandLine, CommandLine.ParseResult parseResult) {
        PrintWriter err = commandLine.getErr();
        if (e instanceof IllegalArgumentException || e instanceof IllegalStateException
                || e instanceof AllocationException || e instanceof UnsupportedOperationException
                || e instanceof IOException || e instanceof UncheckedIOException) {
            err.println(commandLine.getCommandSpec().qualifiedName() + ": " + e.getMessage());
        } else {
            e.printStackTrace(err);
        }
        err.flush();
        return commandLine.getCommandSpec().exitCodeOnExecutionException();
    }

    /**
     * The version of the build ({@code version.properties}, written by Maven resource filtering)
     * and of the Java runtime.
     */
    static final class Version implements CommandLine.IVersionProvider {

        /**
         * The version lines.
         *
         * @return {@code datamem VERSION} and {@code Java VERSION}
         * @throws IOException           if {@code version.properties} cannot be read
         * @throws IllegalStateException if it is missing or was not filtered by the build
         */
        @Override
        public String[] getVersion() throws IOException {
            return new String[] {"datamem " + version(), "Java " + Runtime.version()};
        }

        /** The Maven project version this build was made from. */
        static String version() throws IOException {
            Properties p = new Properties();
            try (InputStream in = DatamemCli.class.getResourceAsStream("version.properties")) {
                if (in == null) {
                    throw new IllegalStateException("version.properties is missing from the build");
                }
                p.load(in);
            }
            String v = p.getProperty("version", "");
            if (v.isBlank() || v.contains("${")) {
                throw new IllegalStateException("version.properties was not filtered by the build: '" + v + "'");
            }
            return v;
        }
    }
}
