package io.datamem.examples.cli;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.impl.AllocationLog;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code datamem replay LOG --handler NAME}: replays an allocation log written by the {@code log=FILE}
 * adaptor against one or more handlers and reports peak bytes, operation counts and time.
 */
@Command(name = "replay", mixinStandardHelpOptions = true,
        description = "Replays an allocation log (written by a handler with +log=FILE) against handlers and reports"
                + " operation counts, peak bytes and time.")
public final class ReplayCommand implements Callable<Integer> {

    @Parameters(paramLabel = "LOG", description = "The allocation log.")
    Path log;

    @Option(names = "--handler", paramLabel = "NAME",
            description = "A handler to replay against, by name; repeat to compare (default: the process default).")
    List<String> handlers;

    /** Creates the command (picocli instantiates it). */
    public ReplayCommand() {
    }

    @Override
    public Integer call() {
        if (!Files.isReadable(log)) {
            throw new IllegalArgumentException("LOG: " + log + " (expected: a readable allocation log, written by"
                    + " a handler with +log=FILE)");
        }
        List<AllocationLog.Entry> entries = AllocationLog.read(log);
        List<String> names = handlers == null || handlers.isEmpty() ? List.of(DataMem.current().name()) : handlers;
        System.out.println("datamem replay: " + log + ", " + entries.size() + " operations");
        int status = 0;
        for (String name : names) {
            DataMemHandler h = DataMem.createHandler(name);
            AllocationLog.Replay r = AllocationLog.replay(entries, h.allocator());
            System.out.println();
            System.out.println("against '" + h.name() + "':");
            r.toString().lines().forEach(l -> System.out.println("  " + l));
            if (r.failures() > 0) {
                status = 1;
            }
        }
        return status;
    }
}
