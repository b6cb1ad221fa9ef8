package io.datamem.benchmarks.report;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Optional;
import java.util.SequencedMap;

import static io.datamem.benchmarks.report.Format.cell;
import static io.datamem.benchmarks.report.Format.nz;
import static io.datamem.benchmarks.report.Format.ratio;
import static io.datamem.benchmarks.report.Format.sizeName;
import static io.datamem.benchmarks.report.Report.POOL_MAX_SIZE;
import static io.datamem.benchmarks.report.Report.SIZES;
import static io.datamem.benchmarks.report.Row.C;
import static io.datamem.benchmarks.report.Row.C_ROWS;
import static io.datamem.benchmarks.report.Row.DEFAULT;
import static io.datamem.benchmarks.report.Row.FFM;
import static io.datamem.benchmarks.report.Row.POOL;
import static io.datamem.benchmarks.report.Row.ROWS;

/**
 * The allocate + free tables: ns per pair of every {@link Row} at every block size, on 1 thread and
 * on each thread count above 1, their ratios against the C floor and {@code pool(aligned64)} and
 * {@code default_allocator} against each peer, and a chart per thread count.
 */
final class AllocationSection extends Section {

    AllocationSection(PageInput input) {
        super(input);
    }

    /** The tables and chart of the pairs on {@code threads} threads (the {@code {{alloc1}}} slot for 1). */
    String allocation(int threads) {
        List<Long> sizes = SIZES.stream().filter(s -> ROWS.stream().anyMatch(r -> alloc(r, s, threads).isPresent()))
                .toList();
        if (sizes.isEmpty()) {
            return "_Not measured in this run._\n";
        }
        StringBuilder b = new StringBuilder();
        b.append("ns per allocate + free pair").append(threads > 1 ? " on each thread" : "")
                .append(" (mean ± 99.9% confidence half-width; lower is better):\n\n");
        header(b, "", sizes);
        for (Row row : ROWS) {
            if (sizes.stream().noneMatch(s -> alloc(row, s, threads).isPresent())) {
                continue;
            }
            b.append("| ").append(row.label());
            for (long s : sizes) {
                b.append(" | ").append(cell(alloc(row, s, threads)));
            }
            b.append(" |\n");
        }
        List<String> notFloor = new ArrayList<>();
        for (long s : sizes) {
            Optional<Result> c = alloc(C, s, threads);
            Optional<Result> f = alloc(FFM, s, threads);
            if (c.isPresent() && f.isPresent()
                    && c.get().score() - f.get().score() > Math.hypot(nz(c.get().error()), nz(f.get().error()))) {
                notFloor.add(sizeName(s));
            }
        }
        if (!notFloor.isEmpty()) {
            b.append("\nAt ").append(String.join(", ", notFloor)).append(" the C loop took longer than the same two"
                    + " calls made one at a time from Java (the FFM row), beyond the error: glibc's path for blocks of"
                    + " that size, taken back to back with nothing in between, was slower here than with a few"
                    + " nanoseconds of Java between the calls. There the C row is a reference rather than a floor,"
                    + " and ratios against it fall below 1.\n");
        }
        SequencedMap<String, double[]> series = new LinkedHashMap<>();
        for (Row row : ROWS) {
            series.put(row.label(), sizes.stream().mapToDouble(s -> allocScore(row, s, threads)).toArray());
        }
        List<String> categories = sizes.stream().map(Format::sizeName).toList();
        String suffix = threads == 1 ? "1t" : threads + "t";
        b.append(chart(Charts.Kind.LINES, "alloc-free-" + suffix + ".png",
                "Allocate + free, " + threads + (threads == 1 ? " thread" : " threads"), "block size",
                "ns per pair (log scale)", categories, series, true));

        b.append("\nEach row against the C floor (its time ÷ C's time; 1.00× is as fast as C):\n\n");
        header(b, "", sizes);
        for (Row row : ROWS) {
            if (row == C || sizes.stream().noneMatch(s -> alloc(row, s, threads).isPresent())) {
                continue;
            }
            b.append("| ").append(row.label());
            for (long s : sizes) {
                b.append(" | ").append(ratio(allocScore(row, s, threads) / allocScore(C, s, threads)));
            }
            b.append(" |\n");
        }
        for (Row us : List.of(POOL, DEFAULT)) {
            b.append("\n`").append(us.handler()).append("` against each peer (the peer's time ÷ ")
                    .append(us.handler()).append("'s; above 1.00× ").append(us.handler()).append(" is faster):\n\n");
            header(b, "peer", sizes);
            for (Row peer : ROWS) {
                if (!peer.javaPeer() && peer != C && peer != FFM && !C_ROWS.contains(peer)
                        || sizes.stream().noneMatch(s -> alloc(peer, s, threads).isPresent())) {
                    continue;
                }
                b.append("| ").append(peer.label());
                for (long s : sizes) {
                    double r = allocScore(peer, s, threads) / allocScore(us, s, threads);
                    String t = ratio(r);
                    b.append(" | ").append(peer.javaPeer() && s <= POOL_MAX_SIZE && r < 1 ? "**" + t + "**" : t);
                }
                b.append(" |\n");
            }
        }
        if (threads == 1) {
            b.append(cNotMeasured());
        }
        return b.toString();
    }

    /** A section per thread count above 1 that the allocation benchmarks ran on. */
    String threadedAllocation() {
        List<Integer> counts = results.stream().filter(r -> ROWS.stream().anyMatch(row -> row.matches(r)))
                .map(Result::threads).filter(t -> t > 1).distinct().sorted().toList();
        if (counts.isEmpty()) {
            return "## Allocate + free on several threads\n\n_Not measured in this run._\n";
        }
        StringBuilder b = new StringBuilder();
        for (int t : counts) {
            b.append(b.isEmpty() ? "" : "\n").append("## Allocate + free, ").append(t).append(" threads\n\n")
                    .append("The same pairs on ").append(t).append(" threads at once, each thread with its own blocks;"
                    + " times are per pair on each thread. A pool with per-thread caches scales; allocators that"
                    + " share a lock do not.");
            if (t > machine.cores()) {
                b.append(" **").append(t).append(" threads on ").append(machine.cores()).append(" cores: oversubscribed.**"
                        + " The threads take turns on the cores, so each thread's time per pair includes the time it"
                        + " waited for one: an allocator that scales perfectly shows about ")
                        .append(ratio((double) t / machine.cores())).append(" its 1-thread time here. The goal on"
                        + " threads divides that out (per-thread time × cores ÷ threads).");
            }
            b.append("\n\n").append(allocation(t));
        }
        return b.toString();
    }

    private static void header(StringBuilder b, String first, List<Long> sizes) {
        b.append("| ").append(first);
        for (long s : sizes) {
            b.append(" | ").append(sizeName(s));
        }
        b.append(" |\n|---");
        b.append("|---:".repeat(sizes.size()));
        b.append("|\n");
    }
}
