package io.datamem.examples.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

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

    /** The version, from the jar manifest when there is one. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = DatamemCli.class.getPackage().getImplementationVersion();
            return new String[] {"datamem " + (v == null ? "(development build)" : v), "Java "
                    + Runtime.version()};
        }
    }
}
