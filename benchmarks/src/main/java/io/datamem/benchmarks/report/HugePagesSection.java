package io.datamem.benchmarks.report;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Optional;
import java.util.SequencedMap;

import static io.datamem.benchmarks.report.Format.cell;
import static io.datamem.benchmarks.report.Format.fmt;
import static io.datamem.benchmarks.report.Format.ratio;
import static io.datamem.benchmarks.report.Format.speedUp;
import static io.datamem.benchmarks.report.Goal.NOT_MEASURED;
import static io.datamem.benchmarks.report.Report.THP_SPEEDUP;
import static io.datamem.benchmarks.report.Verdicts.ratioError;
import static io.datamem.benchmarks.report.Verdicts.strictVerdict;

/**
 * Transparent huge pages against 4 KiB pages: first touch and random read-modify-write of large
 * blocks, their charts, what backed each block, and the goal on random access.
 */
final class HugePagesSection extends Section {

    HugePagesSection(PageInput input) {
        super(input);
    }

    /** The {@code {{hugepages}}} slot: first touch and random update per block size, charts, residency. */
    String hugePages() {
        List<Integer> sizes = results.stream()
                .filter(r -> r.benchmark().equals("RandomAccess.update") || r.benchmark().equals("FirstTouch.touch"))
                .map(r -> Integer.parseInt(r.param("gib"))).distinct().sorted().toList();
        if (sizes.isEmpty()) {
            return "_Not measured in this run._\n";
        }
        StringBuilder b = new StringBuilder(
                "| block | first touch, THP (ms) | first touch, 4 KiB (ms) | THP speed-up | random update, THP (ns)"
                + " | random update, 4 KiB (ns) | THP speed-up |\n|---|---:|---:|---:|---:|---:|---:|\n");
        SequencedMap<String, double[]> touch = new LinkedHashMap<>();
        SequencedMap<String, double[]> gups = new LinkedHashMap<>();
        for (String pages : List.of("thp", "4k")) {
            String label = pages.equals("thp") ? "transparent huge pages" : "4 KiB pages";
            touch.put(label, sizes.stream().mapToDouble(g -> firstTouch(pages, g).map(r -> r.score() / g)
                    .orElse(Double.NaN)).toArray());
            gups.put(label, sizes.stream().mapToDouble(g -> gups(pages, g).map(Result::score).orElse(Double.NaN))
                    .toArray());
        }
        for (int g : sizes) {
            Optional<Result> tt = firstTouch("thp", g);
            Optional<Result> t4 = firstTouch("4k", g);
            Optional<Result> gt = gups("thp", g);
            Optional<Result> g4 = gups("4k", g);
            b.append("| ").append(g).append(" GiB | ").append(cell(tt)).append(" | ").append(cell(t4)).append(" | ")
                    .append(speedUp(t4, tt)).append(" | ").append(cell(gt)).append(" | ").append(cell(g4))
                    .append(" | ").append(speedUp(g4, gt)).append(" |\n");
        }
        List<String> categories = sizes.stream().map(g -> g + " GiB").toList();
        b.append(chart(Charts.Kind.BARS, "first-touch.png", "First touch (fault in every page)", "block",
                "ms per GiB", categories, touch, false));
        b.append(chart(Charts.Kind.BARS, "random-access.png", "Random read-modify-write of 64-bit words", "block",
                "ns per update", categories, gups, false));
        List<String> residency = run.notes().stream().filter(n -> n.startsWith("RandomAccess ")
                || n.startsWith("FirstTouch ")).toList();
        if (!residency.isEmpty()) {
            b.append("\nWhat backed each block after it was touched (from `/proc/self/smaps`):\n\n");
            for (String n : residency) {
                int tab = n.indexOf('\t');
                b.append("* ").append(n, 0, tab).append(": ").append(n.substring(tab + 1)).append('\n');
            }
        }
        return b.toString();
    }

    private Optional<Result> firstTouch(String pages, int gib) {
        return find(r -> r.benchmark().equals("FirstTouch.touch") && pages.equals(r.param("pages"))
                && Integer.toString(gib).equals(r.param("gib")));
    }

    private Optional<Result> gups(String pages, int gib) {
        return find(r -> r.benchmark().equals("RandomAccess.update") && pages.equals(r.param("pages"))
                && Integer.toString(gib).equals(r.param("gib")));
    }

    /** Goal: huge pages at least {@link Report#THP_SPEEDUP}× faster on random access over 4 GiB. */
    Goal thpGoal() {
        String goal = "transparent huge pages ≥ " + THP_SPEEDUP + "× faster than 4 KiB pages on random access over"
                + " 4 GiB";
        Optional<Result> thp = gups("thp", 4);
        Optional<Result> base = gups("4k", 4);
        if (thp.isEmpty() || base.isEmpty()) {
            return new Goal(goal, NOT_MEASURED, NOT_MEASURED, thp.isEmpty() && base.isPresent()
                    ? "the transparent huge page run did not complete (transparent huge pages unavailable?)" : "");
        }
        double r = base.get().score() / thp.get().score();
        double e = ratioError(base.get().score(), base.get().error(), thp.get().score(), thp.get().error());
        boolean met = r >= THP_SPEEDUP;
        String why = "";
        if (!met) {
            String residency = run.notes().stream().filter(n -> n.startsWith("RandomAccess thp 4 GiB"))
                    .findFirst().map(n -> n.substring(n.indexOf('\t') + 1)).orElse("not recorded");
            why = "the block's residency after touching it was: " + residency + ". If little of it is on transparent"
                    + " huge pages, the kernel could not find free 2 MiB pages (fragmented memory, `defrag` setting);"
                    + " if all of it is, the page walks of 4 KiB pages were cheap here (a large TLB or page-walk"
                    + " cache, or a hypervisor backing guest memory with small pages, which puts a second-level walk"
                    + " under both).";
        }
        return new Goal(goal, "4 KiB pages " + fmt(base.get().score()) + " ns, transparent huge pages "
                + fmt(thp.get().score()) + " ns per update: " + ratio(r) + " ± " + fmt(e),
                strictVerdict(List.of(new Check(met, !(Math.abs(r - THP_SPEEDUP) >= e))), Integer.MAX_VALUE), why);
    }
}
