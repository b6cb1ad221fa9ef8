package io.datamem.examples.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * The {@code datamem} command line: {@code datamem demo}, {@code datamem info}, {@code datamem replay},
 * {@code datamem metrics}.
 */
@Command(name = "datamem", mixinStandardHelpOptions = true, versionProvider = DatamemCli.Version.class,
        description = "Pluggable native-memory allocators for the JVM (NEP 49 for Java).",
        subcommands = {DemoCommand.class, InfoCommand.class, ReplayCommand.class, MetricsCommand.class,
                CommandLine.HelpCommand.class})
public final class DatamemCli implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** Creates the command (picocli instantiates it). */
    public DatamemCli() {
    }

    /**
     * Runs the command line and exits with its status.
     *
     * @param args the arguments
     */
    public static void main(String[] args) {
        System.exit(run(args));
    }

    /**
     * Runs the command line.
     *
     * @param args the arguments
     * @return the exit status
     */
    public static int run(String... args) {
        return new CommandLine(new DatamemCli())
                .setExecutionExceptionHandler(DatamemCli::report)
                .execute(args);
    }

    /**
     * Reports a failure: the message alone for the errors users cause (an unknown or unavailable
     * handler name, a bad argument, an allocation failure), the stack trace for anything else.
     */
    private static int report(Exception e, CommandLine commandLine, CommandLine.ParseResult parseResult) {
        if (e instanceof IllegalArgumentException || e instanceof IllegalStateException
                || e instanceof io.datamem.AllocationException || e instanceof UnsupportedOperationException) {
            commandLine.getErr().println("datamem " + commandLine.getCommandName() + ": " + e.getMessage());
        } else {
            e.printStackTrace(commandLine.getErr());
        }
        return 2;
    }

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
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
