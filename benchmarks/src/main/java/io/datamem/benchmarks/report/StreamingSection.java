package io.datamem.benchmarks.report;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Optional;
import java.util.SequencedMap;

import static io.datamem.benchmarks.report.Format.cell;
import static io.datamem.benchmarks.report.Format.fmt;
import static io.datamem.benchmarks.report.Format.ratio;
import static io.datamem.benchmarks.report.Format.sizeName;

/**
 * The streaming triad over float64 arrays that start aligned or a few bytes past a 64-byte boundary:
 * ns per pass, GB/s and the ratio against aligned, with a chart.
 */
final class StreamingSection extends Section {

    StreamingSection(PageInput input) {
        super(input);
    }

    /** The {@code {{streaming}}} slot: the triad per start offset and array size, and the chart. */
    String streaming() {
        List<Result> rs = results.stream().filter(r -> r.benchmark().equals("Streaming.triad")).toList();
        if (rs.isEmpty()) {
            return "_Not measured in this run._\n";
        }
        List<Long> kibs = rs.stream().map(r -> Long.parseLong(r.param("kib"))).distinct().sorted().toList();
        List<Long> offsets = rs.stream().map(r -> Long.parseLong(r.param("offset"))).distinct().sorted().toList();
        StringBuilder b = new StringBuilder("| start | ");
        for (long k : kibs) {
            b.append(sizeName(k << 10)).append(" arrays: ns per pass | GB/s | against aligned | ");
        }
        b.setLength(b.length() - 1);
        b.append("\n|---").append("|---:|---:|---:".repeat(kibs.size())).append("|\n");
        SequencedMap<String, double[]> series = new LinkedHashMap<>();
        for (long k : kibs) {
            series.put(sizeName(k << 10) + " arrays", offsets.stream().mapToDouble(o -> triad(o, k)
                    .map(r -> gbPerSecond(k, r.score())).orElse(Double.NaN)).toArray());
        }
        for (long o : offsets) {
            b.append("| ").append(o == 0 ? "64-byte aligned" : o + (o == 1 ? " byte" : " bytes")
                    + " past a 64-byte boundary");
            for (long k : kibs) {
                Optional<Result> r = triad(o, k);
                Optional<Result> aligned = triad(0, k);
                b.append(" | ").append(cell(r)).append(" | ")
                        .append(r.map(x -> fmt(gbPerSecond(k, x.score()))).orElse("n/a")).append(" | ")
                        .append(r.isPresent() && aligned.isPresent()
                                ? ratio(aligned.get().score() / r.get().score()) : "n/a");
            }
            b.append(" |\n");
        }
        b.append(chart(Charts.Kind.BARS, "streaming.png", "Triad a = b + 3c over float64", "",
                "GB/s (higher is better)", offsets.stream().map(o -> o == 0 ? "aligned" : "+" + o + " B").toList(),
                series, false));
        return b.toString();
    }

    private Optional<Result> triad(long offset, long kib) {
        return find(r -> r.benchmark().equals("Streaming.triad") && Long.toString(offset).equals(r.param("offset"))
                && Long.toString(kib).equals(r.param("kib")));
    }

    /** Three arrays of {@code kib} KiB move per pass (two read, one written). */
    static double gbPerSecond(long kib, double nsPerPass) {
        return 3.0 * (kib << 10) / nsPerPass;
    }
}
