package io.datamem.benchmarks.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static io.datamem.benchmarks.report.Format.cell;
import static io.datamem.benchmarks.report.Format.fmt;
import static io.datamem.benchmarks.report.Format.speedUp;
import static io.datamem.benchmarks.report.Goal.NOT_MEASURED;
import static io.datamem.benchmarks.report.Report.ACCESS_VS_SEGMENT;
import static io.datamem.benchmarks.report.Verdicts.strictVerdict;

/**
 * Element access through {@code NDArray} against the raw {@code MemorySegment} and a
 * {@code double[]}, one access and loops over every element, with the two goals on the segment.
 */
final class AccessSection extends Section {

    /**
     * An accessor benchmark of {@code NDArrayAccess}.
     *
     * @param label what it does
     * @param ndarray the method through {@code NDArray}
     * @param segment the method through the raw segment
     * @param array   the method through a {@code double[]}
     */
    private record Access(String label, String ndarray, String segment, String array) {

        /** Whether this is a loop over every element (one operation = {@code NDArrayAccess} ROWS × COLUMNS accesses). */
        boolean loop() {
            return ndarray.contains("Sum") || ndarray.contains("Fill");
        }
    }

    private static final List<Access> ACCESSES = List.of(
            new Access("get, 1-D index: `a.getDouble(i)`", "ndarrayGet1d", "segmentGet1d", "arrayGet1d"),
            new Access("set, 1-D index: `a.setDouble(v, i)`", "ndarraySet1d", "segmentSet1d", "arraySet1d"),
            new Access("get, 2-D index: `a.getDouble(i, j)`", "ndarrayGet2d", "segmentGet2d", "arrayGet2d"),
            new Access("set, 2-D index: `a.setDouble(v, i, j)`", "ndarraySet2d", "segmentSet2d", "arraySet2d"),
            new Access("sum, 1-D loop of 1,024: `s += a.getDouble(i)`", "ndarraySum1d", "segmentSum1d", "arraySum1d"),
            new Access("fill, 1-D loop of 1,024: `a.setDouble(v, i)`", "ndarrayFill1d", "segmentFill1d",
                    "arrayFill1d"),
            new Access("sum, 2-D loop of 32 × 32: `s += a.getDouble(i, j)`", "ndarraySum2d", "segmentSum2d",
                    "arraySum2d"),
            new Access("fill, 2-D loop of 32 × 32: `a.setDouble(v, i, j)`", "ndarrayFill2d", "segmentFill2d",
                    "arrayFill2d"));

    AccessSection(PageInput input) {
        super(input);
    }

    private Optional<Result> access(String method) {
        return named("NDArrayAccess." + method);
    }

    /** The {@code {{access}}} slot: ns per access or loop through each of the three, and the ratios. */
    String access() {
        if (ACCESSES.stream().noneMatch(a -> access(a.ndarray()).isPresent() || access(a.segment()).isPresent()
                || access(a.array()).isPresent())) {
            return "_Not measured in this run._\n";
        }
        StringBuilder b = new StringBuilder("ns per operation: one access, or a loop over all 1,024 elements"
                + " (mean ± 99.9% confidence half-width; lower is better):\n\n| access | `NDArray` | `MemorySegment` | `double[]` | `NDArray` ÷ segment |"
                + " `NDArray` ÷ `double[]` |\n|---|---:|---:|---:|---:|---:|\n");
        for (Access a : ACCESSES) {
            Optional<Result> nd = access(a.ndarray());
            Optional<Result> seg = access(a.segment());
            Optional<Result> arr = access(a.array());
            b.append("| ").append(a.label()).append(" | ").append(cell(nd)).append(" | ").append(cell(seg))
                    .append(" | ").append(cell(arr)).append(" | ").append(speedUp(nd, seg)).append(" | ")
                    .append(speedUp(nd, arr)).append(" |\n");
        }
        return b.toString();
    }

    /**
     * The accessor goal, once for single accesses (the accessor's checks end to end) and once for
     * loops over every element (what is left once the compiler hoisted what does not change).
     */
    Goal accessVsSegment(boolean loops) {
        String goal = "element access through `NDArray` ≤ " + ACCESS_VS_SEGMENT + "× raw `MemorySegment` access"
                + (loops ? ", in loops over every element" : ", one access per operation");
        List<String> parts = new ArrayList<>();
        List<String> whys = new ArrayList<>();
        List<Check> checks = new ArrayList<>();
        int forks = Integer.MAX_VALUE;
        for (Access a : ACCESSES) {
            if (a.loop() != loops) {
                continue;
            }
            Optional<Result> nd = access(a.ndarray());
            Optional<Result> seg = access(a.segment());
            if (nd.isEmpty() || seg.isEmpty()) {
                continue;
            }
            Ratio r = Ratio.of(nd.get(), seg.get());
            forks = Math.min(forks, r.forks());
            checks.add(r.check(ACCESS_VS_SEGMENT));
            String what = a.label().substring(0, a.label().indexOf(':'));
            parts.add(what + " " + r);
            if (r.value() > ACCESS_VS_SEGMENT) {
                whys.add(what + ": " + fmt(nd.get().score()) + " ns through `NDArray` against " + fmt(seg.get().score())
                        + " ns through the segment");
            }
        }
        if (checks.isEmpty()) {
            return new Goal(goal, NOT_MEASURED, NOT_MEASURED, "");
        }
        String why = whys.isEmpty() ? "" : String.join("; ", whys) + (loops ? "." : ". A single access pays"
                + " every check of the accessor once: the calling thread against the one the memory's local segment"
                + " was granted to, the memory's generation (not closed, not resized), the index against the axis;"
                + " the segment pays its bounds and scope checks (its scope is a shared arena's, checked by"
                + " the JDK). In a loop the compiler keeps all but the index check out of the loop.");
        return new Goal(goal, String.join("; ", parts), strictVerdict(checks, forks), why);
    }
}
