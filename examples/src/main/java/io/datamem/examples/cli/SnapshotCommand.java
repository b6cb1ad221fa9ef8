package io.datamem.examples.cli;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.impl.snapshot.MemorySnapshot;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code datamem snapshot --pid PID [--handler NAME] [--out FILE]} or
 * {@code datamem snapshot --log LOG [--handler NAME] [--out FILE]}.
 *
 * <p>With {@code --pid}: takes a memory snapshot of a running JVM, of the very handlers it
 * allocates through, through the Attach API and its {@value io.datamem.impl.snapshot.MemorySnapshots#OBJECT_NAME}
 * MBean ({@link io.datamem.impl.snapshot.MemorySnapshots}); without {@code --handler}, of every
 * handler it can describe, in one file.
 *
 * <p>With {@code --log}: replays an allocation log written by
 * the {@code log=FILE} adaptor against a handler and takes a memory snapshot of that handler at the
 * log's end, while the blocks the log left live are still allocated: where the memory of the
 * logged program stood when it stopped, on the handler given (a pool shows its size classes and
 * fragmentation, {@code +tracking} the live blocks). Prints the snapshot's summary and writes its
 * JSON ({@code docs/observability.md}, "Memory snapshots").
 */
@Command(name = "snapshot", mixinStandardHelpOptions = true,
        description = {"Writes a memory snapshot (JSON, schema datamem-snapshot v1) of a running JVM's handlers"
                + " (--pid, through the Attach API and its datamem MBean), or of a handler at the end of an allocation"
                + " log replayed against it (--log, a log written by a handler with +log=FILE)."})
public final class SnapshotCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--pid", paramLabel = "PID",
            description = "The running JVM to take the snapshot of (not with --log).")
    Long pid;

    @Option(names = "--log", paramLabel = "LOG", description = "The allocation log to replay (not with --pid).")
    Path log;

    @Option(names = "--handler", paramLabel = "NAME",
            description = "With --pid: the handler of that JVM to describe (default: every handler it can describe)."
                    + " With --log: the handler to replay against and take the snapshot of (default: the process"
                    + " default).")
    String handler;

    @Option(names = "--out", paramLabel = "FILE",
            description = "Where to write the snapshot's JSON (default: datamem-PID.snapshot.json with --pid, LOG with"
                    + " .snapshot.json appended with --log).")
    Path out;

    /** Creates the command (picocli instantiates it). */
    public SnapshotCommand() {
    }

    /**
     * Takes the snapshot of the JVM ({@code --pid}) or replays the log and takes the snapshot at its
     * end ({@code --log}), prints the summary and writes the JSON.
     *
     * @return {@value DatamemCli#OK} if the snapshot was written and, with {@code --log}, every
     *         operation succeeded; {@value DatamemCli#FAILURE} if some logged operation failed (the
     *         snapshot is written either way)
     * @throws picocli.CommandLine.ParameterException if both or neither of {@code --pid} and {@code --log}
     *                                                 are given, {@code --pid} is not positive, or
     *                                                 {@code --handler} is not a handler name (with
     *                                                 {@code --log}) or not one of the JVM's (with
     *                                                 {@code --pid}; the message lists its handlers): usage
     *                                                 errors
     * @throws IllegalStateException                   if the handler is unavailable here; with {@code --pid},
     *                                                 if no process has that pid, it cannot be attached to,
     *                                                 or it has no datamem MBean (the message says why)
     * @throws IllegalArgumentException                if the log is not readable or a line of it is malformed
     * @throws UncheckedIOException                    if reading the log or writing the snapshot fails
     */
    @Override
    public Integer call() {
        if (pid != null && log != null) {
            throw new ParameterException(spec.commandLine(), "--pid and --log are mutually exclusive (expected: one of"
                    + " them: --pid PID for a running JVM, --log LOG for a recorded allocation log)");
        }
        if (pid == null && log == null) {
            throw new ParameterException(spec.commandLine(), "Missing option: --pid PID or --log LOG (expected: one of"
                    + " them: --pid PID for a running JVM, --log LOG for a recorded allocation log)");
        }
        return pid != null ? fromProcess(pid) : fromLog();
    }

    private int fromProcess(long processId) {
        if (processId <= 0) {
            throw UsageErrors.invalid(spec, "--pid", processId, "a process id >= 1");
        }
        Path file = out != null ? out : Path.of("datamem-" + processId + ".snapshot.json");
        String json;
        List<String> names;
        try (LiveSnapshot live = LiveSnapshot.connect(processId)) {
            names = live.handlerNames();
            if (handler != null && !names.contains(handler)) {
                throw UsageErrors.invalid(spec, "--handler", "'" + handler + "'", "a handler of process " + processId
                        + ", one of " + String.join(", ", names));
            }
            json = live.snapshotJson(handler);
        }
        MemorySnapshot snapshot = MemorySnapshot.parse(json);
        try {
            Files.writeString(file, json, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the snapshot to " + file, e);
        }
        System.out.println("datamem snapshot: process " + processId + ", " + snapshot.handlers().size()
                + " handler(s) described" + (handler == null ? " (of " + names.size() + " name(s): "
                + String.join(", ", names) + ")" : ""));
        snapshot.summary().lines().forEach(l -> System.out.println("  " + l));
        System.out.println("snapshot written to " + file);
        return DatamemCli.OK;
    }

    private int fromLog() {
        DataMemHandler h = handler == null ? DataMem.createHandler(DataMem.current().name())
                : UsageErrors.named(spec, "--handler", handler, DataMem::createHandler);
        List<AllocationLog.Entry> entries = UsageErrors.readLog("LOG", log);
        Path file = out != null ? out : log.resolveSibling(log.getFileName() + ".snapshot.json");
        MemorySnapshot[] taken = new MemorySnapshot[1];
        AllocationLog.Replay r = AllocationLog.replay(entries, h.allocator(), target -> {
            taken[0] = MemorySnapshot.take(h);
            try {
                taken[0].write(file);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write the snapshot to " + file, e);
            }
        });
        System.out.println("datamem snapshot: " + log + ", " + entries.size() + " operations replayed against '"
                + h.name() + "'; at the log's end " + r.leftLiveBlocks() + " block(s), " + r.leftLiveBytes()
                + " bytes were live");
        taken[0].summary().lines().forEach(l -> System.out.println("  " + l));
        System.out.println("snapshot written to " + file);
        return r.failures() > 0 ? DatamemCli.FAILURE : DatamemCli.OK;
    }
}
