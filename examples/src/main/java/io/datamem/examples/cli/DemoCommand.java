package io.datamem.examples.cli;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.impl.AllocatorStack;
import io.datamem.impl.adaptor.StatisticsAdaptor;
import io.datamem.impl.snapshot.LayerSnapshot;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code datamem demo}: two compute blocks, each under its own scoped handler, then which handler
 * owns each array, its alignment, and the bytes each handler allocated and freed.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Runs two compute blocks under two scoped handlers (default and aligned64) and reports"
                + " which handler owns each array, its alignment, and the bytes allocated and freed per handler.")
public final class DemoCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    long elements;

    /** Creates the command (picocli instantiates it). */
    public DemoCommand() {
    }

    /**
     * Sets the number of elements per vector ({@code --elements}).
     *
     * @param elements the number of elements, at least 1
     * @throws picocli.CommandLine.ParameterException if {@code elements} is less than 1 (a usage error)
     */
    @Option(names = "--elements", paramLabel = "N", defaultValue = "1000000",
            description = "Elements per vector, at least 1 (default: ${DEFAULT-VALUE}).")
    void elements(long elements) {
        if (elements < 1) {
            throw UsageErrors.invalid(spec, "--elements", elements, ">= 1");
        }
        this.elements = elements;
    }

    private record Row(String block, String name, NDArray array, DataMemHandler handler) {
    }

    /**
     * Runs the demo and prints its report.
     *
     * @return {@value DatamemCli#OK} if both blocks computed the same result, every byte was freed and
     *         the CUDA part (where there is a GPU) came back bit for bit; {@value DatamemCli#FAILURE} if not
     * @throws IllegalStateException if the process default handler cannot be used
     * @throws io.datamem.AllocationException if an allocation fails
     * @throws IllegalArgumentException if the vectors' byte size overflows a {@code long}
     */
    @Override
    public Integer call() {
        PrintStream out = System.out;
        String processDefault = DataMem.current().name(); // fails here, before any output, if misconfigured
        DataMemHandler defaultHandler = AllocatorStack.on(DataMem.builtinDefault().allocator()).with("stats")
                .handler("default_allocator+stats");
        DataMemHandler aligned = DataMem.createHandler("aligned64+stats");   // fresh statistics
        StatisticsAdaptor defaultStats = AllocatorStack.find(defaultHandler, StatisticsAdaptor.class).orElseThrow();
        StatisticsAdaptor alignedStats = AllocatorStack.find(aligned, StatisticsAdaptor.class).orElseThrow();

        out.println("datamem demo: two compute blocks, each under its own scoped handler");
        out.println("process default: " + processDefault + "; vectors of " + elements + " float64");
        out.println();

        List<Row> rows = new ArrayList<>();
        double dot1 = DataMem.callWith(defaultHandler, () -> computeBlock("block 1", rows));
        double dot2 = DataMem.callWith(aligned, () -> computeBlock("block 2", rows));
        out.printf("block 1 under %-24s x.y = %.6e%n", "'" + defaultHandler.name() + "':", dot1);
        out.printf("block 2 under %-24s x.y = %.6e%n", "'" + aligned.name() + "':", dot2);
        out.println();

        out.printf("%-8s %-6s %-26s %-24s %-20s %s%n", "block", "array", "shape", "owned by", "address",
                "alignment (guaranteed)");
        for (Row r : rows) {
            NDArray a = r.array();
            out.printf("%-8s %-6s %-26s %-24s 0x%-18x %d B (%d B)%n", r.block(), r.name(),
                    a.dtype() + java.util.Arrays.toString(a.shape()), a.handler().name(), a.address(),
                    Math.min(Long.lowestOneBit(a.address()), 4096), a.handler().traits().byteAlignment());
        }
        // Outside both scopes, and with another default set: every array still frees through its own handler.
        DataMemHandler previous = DataMem.setDefaultHandler(DataMem.builtinDefault());
        rows.forEach(r -> r.array().close());
        DataMem.setDefaultHandler(previous);
        out.println();
        out.println("arrays closed after both scopes ended; each freed through the handler it was created with:");
        out.printf("%-24s %12s %6s %16s %16s %12s %8s%n", "handler", "allocations", "frees", "bytes allocated",
                "bytes freed", "peak bytes", "in use");
        for (var e : List.of(java.util.Map.entry(defaultHandler, defaultStats), java.util.Map.entry(aligned,
                alignedStats))) {
            LayerSnapshot.Statistics s = e.getValue().figures();
            out.printf("%-24s %12d %6d %16d %16d %12d %8d%n", e.getKey().name(), s.allocations(), s.frees(),
                    s.allocatedBytes(), s.freedBytes(), s.peakBytes(), s.currentBytes());
        }
        out.println();
        boolean profiled = ProfiledRun.run(out, elements);
        out.println();
        boolean cuda = CudaPart.run(out);   // one line saying it is skipped and why, without a GPU
        boolean balanced = profiled && cuda && defaultStats.figures().currentBytes() == 0
                && alignedStats.figures().currentBytes() == 0
                && Math.abs(dot1 - dot2) <= 1e-9 * Math.abs(dot1);
        out.println();
        out.println(balanced ? "ok: both blocks computed the same result and every byte was freed"
                : "FAILED: results differ or bytes are still in use");
        return balanced ? DatamemCli.OK : DatamemCli.FAILURE;
    }

    /** x = i / n, y = 2 - x, z = 3x + y (saxpy), returns x . z; keeps the arrays open. */
    private double computeBlock(String block, List<Row> rows) {
        DataMemHandler h = DataMem.current();
        NDArray x = NDArray.empty(DType.FLOAT64, elements);
        NDArray y = NDArray.empty(DType.FLOAT64, elements);
        NDArray z = NDArray.zeros(DType.FLOAT64, elements);
        MemorySegment xs = x.segment();
        MemorySegment ys = y.segment();
        MemorySegment zs = z.segment();
        for (long i = 0; i < elements; i++) {
            double v = (double) i / elements;
            xs.setAtIndex(ValueLayout.JAVA_DOUBLE, i, v);
            ys.setAtIndex(ValueLayout.JAVA_DOUBLE, i, 2 - v);
        }
        double dot = 0;
        for (long i = 0; i < elements; i++) {
            double xv = xs.getAtIndex(ValueLayout.JAVA_DOUBLE, i);
            double zv = 3 * xv + ys.getAtIndex(ValueLayout.JAVA_DOUBLE, i);
            zs.setAtIndex(ValueLayout.JAVA_DOUBLE, i, zv);
            dot += xv * zv;
        }
        NDArray grid = x.reshape(1, -1); // a view, for any number of elements: reports x's handler, owns nothing
        if (grid.ownsData() || grid.handler() != h) {
            throw new AssertionError("a view must report its base's handler");
        }
        rows.add(new Row(block, "x", x, h));
        rows.add(new Row(block, "y", y, h));
        rows.add(new Row(block, "z", z, h));
        return dot;
    }
}
