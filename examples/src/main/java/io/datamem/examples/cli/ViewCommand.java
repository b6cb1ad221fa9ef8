package io.datamem.examples.cli;

import io.datamem.impl.snapshot.MemorySnapshot;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code datamem view FILE [--log LOG] [--out PAGE]}: renders a memory snapshot's JSON (written by
 * {@code datamem snapshot} or {@link MemorySnapshot#write}) as one self-contained HTML page, with no
 * script and no external resource: per handler its live bytes, a fragmentation chart per pool and
 * size class, the top allocation sites and a table of the live blocks; with {@code --log}, the bytes
 * in use over time of an allocation log written by the {@code log=FILE} adaptor
 * ({@code docs/observability.md}, "Memory snapshots").
 */
@Command(name = "view", mixinStandardHelpOptions = true,
        description = "Renders a memory snapshot (JSON, schema datamem-snapshot v1) as one self-contained HTML page:"
                + " fragmentation per pool and size class, top allocation sites, live blocks and, with --log, the"
                + " bytes in use over time.")
public final class ViewCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "FILE", description = "The snapshot's JSON.")
    Path file;

    @Option(names = "--log", paramLabel = "LOG",
            description = "An allocation log (written by a handler with +log=FILE) to chart the bytes in use over"
                    + " time of.")
    Path log;

    @Option(names = "--out", paramLabel = "PAGE", description = "Where to write the page (default: FILE.html).")
    Path out;

    /** Creates the command (picocli instantiates it). */
    public ViewCommand() {
    }

    /**
     * Reads the snapshot (and the log), writes the page and prints where.
     *
     * @return {@value DatamemCli#OK}
     * @throws IllegalArgumentException if FILE or LOG is not readable, FILE is not a snapshot's JSON,
     *                                  or a line of LOG is malformed
     * @throws UncheckedIOException     if reading FILE or writing the page fails
     */
    @Override
    public Integer call() {
        if (!Files.isReadable(file)) {
            throw new IllegalArgumentException("FILE: " + file + " (expected: a readable memory snapshot's JSON,"
                    + " written by datamem snapshot)");
        }
        List<AllocationLog.Entry> entries = log == null ? null : UsageErrors.readLog("LOG", log);
        Path page = out != null ? out : file.resolveSibling(file.getFileName() + ".html");
        try {
            MemorySnapshot snapshot = MemorySnapshot.read(file);
            String html = SnapshotPage.render(snapshot, file.toString(), entries, log == null ? null : log.toString());
            Files.writeString(page, html, StandardCharsets.UTF_8);
            System.out.println("datamem view: " + file + ", " + snapshot.handlers().size() + " handler(s)"
                    + (entries == null ? "" : ", " + entries.size() + " logged operations from " + log)
                    + "; page written to " + page);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + " or write " + page, e);
        }
        return DatamemCli.OK;
    }
}
