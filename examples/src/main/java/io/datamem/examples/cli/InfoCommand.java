package io.datamem.examples.cli;

import io.datamem.DataMem;
import io.datamem.impl.placement.HugePages;
import io.datamem.impl.placement.NumaTopology;
import io.datamem.impl.snapshot.MemorySnapshots;
import io.datamem.spi.Availability;
import io.datamem.spi.DataMemProvider;
import picocli.CommandLine.Command;

import java.io.PrintStream;
import java.util.concurrent.Callable;

/**
 * {@code datamem info}: the machine, and every handler name the providers offer with its
 * availability.
 */
@Command(name = "info", mixinStandardHelpOptions = true,
        description = "Prints the machine, the process default handler, every provider with its availability, "
                + "the huge pages offered and the NUMA topology.")
public final class InfoCommand implements Callable<Integer> {

    /** Creates the command (picocli instantiates it). */
    public InfoCommand() {
    }

    /**
     * Prints the report.
     *
     * @return {@value DatamemCli#OK}
     * @throws IllegalStateException if the process default handler cannot be used
     */
    @Override
    public Integer call() {
        PrintStream out = System.out;
        out.println("datamem info");
        out.println("  java:          " + Runtime.version() + " (" + System.getProperty("java.vm.name") + ")");
        out.println("  os:            " + System.getProperty("os.name") + " " + System.getProperty("os.version")
                + " " + System.getProperty("os.arch"));
        out.println("  processors:    " + Runtime.getRuntime().availableProcessors());
        out.println("  page size:     " + DataMem.builtinDefault().traits().pageSize() + " bytes");
        out.println("  default:       " + DataMem.current().name()
                + (System.getProperty(DataMem.HANDLER_PROPERTY) != null ? " (from -D" + DataMem.HANDLER_PROPERTY + ")"
                : System.getenv(DataMem.HANDLER_ENV) != null ? " (from " + DataMem.HANDLER_ENV + ")" : ""));
        out.println();
        out.println("providers (handler names: LEAF or LEAF+ADAPTOR+...):");
        for (DataMemProvider p : DataMemProvider.installed()) {
            Availability a = p.availability();
            out.printf("  %-18s %-8s %s%n", p.name(), p.role().name().toLowerCase(java.util.Locale.ROOT),
                    a.available() ? "available" : "UNAVAILABLE: " + a.reason());
            out.println("      " + String.join(", ", p.names()));
        }
        out.println();
        out.println("CUDA:");
        io.datamem.cuda.Cuda.report().lines().forEach(line -> out.println("  " + line));
        out.println();
        out.println("huge pages:");
        HugePages.report().lines().forEach(line -> out.println("  " + line));
        out.println();
        try {
            out.print(NumaTopology.current().report());
        } catch (IllegalStateException e) {
            out.println("NUMA topology: unavailable: " + e.getMessage());
        }
        out.println();
        out.println("memory snapshots (docs/observability.md):");
        out.println("  in code:       MemorySnapshot.take(handler).write(path)   (io.datamem.impl.snapshot)");
        out.println("  from a log:    datamem snapshot --log LOG --handler NAME   (a log written with +log=FILE)");
        out.println("  a running JVM: datamem snapshot --pid PID [--handler NAME]   (Attach API, MBean "
                + MemorySnapshots.OBJECT_NAME + "; " + (MemorySnapshots.enabled()
                ? "JVMs register it with their first handler, unless -D" + MemorySnapshots.JMX_PROPERTY + "=false)"
                : "off in this JVM: -D" + MemorySnapshots.JMX_PROPERTY + "=false)"));
        String dir = System.getProperty("datamem.snapshot.onFailure");
        out.println("  on failure:    " + (dir == null ? "summaries in the messages; add -Ddatamem.snapshot.onFailure=DIR"
                + " for a file per failure" : "summaries in the messages, a file per failure in " + dir));
        return 0;
    }
}
