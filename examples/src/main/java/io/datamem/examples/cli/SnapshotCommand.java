package io.datamem.examples.cli;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.impl.adaptor.AllocationLog;
import io.datamem.impl.snapshot.MemorySnapshot;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code datamem snapshot --log LOG --handler NAME [--out FILE]}: replays an allocation log written by
 * the {@code log=FILE} adaptor against a handler and takes a memory snapshot of that handler at the
 * log's end, while the blocks the log left live are still allocated: where the memory of the
 * logged program stood when it stopped, on the handler given (a pool shows its size classes and
 * fragmentation, {@code +tracking} the live blocks). Prints the snapshot's summary and writes its
 * JSON ({@code docs/observability.md}, "Memory snapshots").
 */
@Command(name = "snapshot", mixinStandardHelpOptions = true,
        description = "Replays an allocation log (written by a handler with +log=FILE) against a handler and writes"
                + " the memory snapshot of that handler at the log's end (JSON, schema datamem-snapshot v1).")
public final class SnapshotCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--log", paramLabel = "LOG", required = true, description = "The allocation log to replay.")
    Path log;

    @Option(names = "--handler", paramLabel = "NAME",
            description = "The handler to replay against and take the snapshot of (default: the process default).")
    String handler;

    @Option(names = "--out", paramLabel = "FILE",
            description = "Where to write the snapshot's JSON (default: LOG with .snapshot.json appended).")
    Path out;

    /** Creates the command (picocli instantiates it). */
    public SnapshotCommand() {
    }

    /**
     * Replays the log, takes the snapshot at its end, prints the summary and writes the JSON.
     *
     * @return {@value DatamemCli#OK} if every operation succeeded, {@value DatamemCli#FAILURE} if some
     *         failed (the snapshot is written either way)
     * @throws picocli.CommandLine.ParameterException if {@code --handler} is not a handler name (a usage error)
     * @throws IllegalStateException                   if the handler is unavailable here
     * @throws IllegalArgumentException                if the log is not readable or a line of it is malformed
     * @throws UncheckedIOException                    if reading the log or writing the snapshot fails
     */
    @Override
    public Integer call() {
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
