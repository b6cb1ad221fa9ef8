package io.datamem.examples.cli;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code datamem replay LOG --handler NAME}: says what an allocation log written by the {@code log=FILE}
 * adaptor holds (operations, threads, sizes, peak, what it left live), then replays it against one or
 * more handlers and reports what each replay issued, its failures and peak, and the time of that one
 * pass, which is no benchmark.
 */
@Command(name = "replay", mixinStandardHelpOptions = true,
        description = "Says what an allocation log (written by a handler with +log=FILE) holds, then replays it"
                + " against handlers and reports each replay's operations, failures and peak bytes.")
public final class ReplayCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Parameters(paramLabel = "LOG", description = "The allocation log.")
    Path log;

    @Option(names = "--handler", paramLabel = "NAME",
            description = "A handler to replay against, by name; repeat to compare (default: the process default).")
    List<String> handlers;

    /** Creates the command (picocli instantiates it). */
    public ReplayCommand() {
    }

    /**
     * Prints what the log holds, then replays it against each handler and prints what each replay
     * did.
     *
     * @return {@value DatamemCli#OK} if every operation succeeded against every handler,
     *         {@value DatamemCli#FAILURE} if some failed
     * @throws picocli.CommandLine.ParameterException if a {@code --handler} is not a handler name (a usage
     *                                                 error)
     * @throws IllegalStateException                   if a handler is unavailable here, or no handler is
     *                                                 given and the process default cannot be used
     * @throws IllegalArgumentException                if the log is not readable or a line of it is malformed
     * @throws java.io.UncheckedIOException            if reading the log fails
     */
    @Override
    public Integer call() {
        List<DataMemHandler> targets = handlers == null || handlers.isEmpty()
                ? List.of(DataMem.createHandler(DataMem.current().name()))
                : handlers.stream().map(name -> UsageErrors.named(spec, "--handler", name, DataMem::createHandler))
                .toList();
        List<AllocationLog.Entry> entries = UsageErrors.readLog("LOG", log);
        System.out.println("datamem replay: " + log + ", " + entries.size() + " operations");
        System.out.println("the log holds:");
        LogContents.of(entries).toString().lines().forEach(l -> System.out.println("  " + l));
        int status = DatamemCli.OK;
        for (DataMemHandler h : targets) {
            AllocationLog.Replay r = AllocationLog.replay(entries, h.allocator());
            System.out.println();
            System.out.println("against '" + h.name() + "':");
            r.toString().lines().forEach(l -> System.out.println("  " + l));
            if (r.failures() > 0) {
                status = DatamemCli.FAILURE;
            }
        }
        return status;
    }
}
