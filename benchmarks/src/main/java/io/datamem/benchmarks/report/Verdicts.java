package io.datamem.benchmarks.report;

import java.util.List;

import static io.datamem.benchmarks.report.Format.nz;
import static io.datamem.benchmarks.report.Report.VERDICT_FORKS;

/**
 * A goal's verdict from its checks ({@link Check}): met, missed, qualified when a re-run could flip
 * it, or undecided; and the error of a ratio, which the checks compare with their targets.
 */
final class Verdicts {

    private static String verdict(boolean met) {
        return met ? "**met**" : "**missed**";
    }

    /** A verdict, qualified when the target lies within the figure's error. */
    static String verdict(boolean met, boolean withinError) {
        return verdict(met) + (withinError ? " (within the error)" : "");
    }

    /**
     * The verdict of a goal made of checks: met if every check passes; qualified when a re-run could
     * flip it (met: some check is within the error; missed: every failing check is).
     */
    static String verdict(List<Check> checks) {
        boolean met = checks.stream().allMatch(Check::pass);
        return verdict(met, couldFlip(checks, met));
    }

    private static boolean couldFlip(List<Check> checks, boolean met) {
        return met ? checks.stream().anyMatch(Check::within)
                : checks.stream().filter(c -> !c.pass()).allMatch(Check::within);
    }

    /**
     * The verdict of a goal that is decided only on figures from {@value Report#VERDICT_FORKS} forks or
     * more: met or missed as {@link #verdict(List)} says, but undecided where a re-run could flip it
     * (a confidence interval straddles the target) or where the figures come from fewer forks.
     *
     * @param checks the goal's comparisons
     * @param forks  the fewest forks any of its figures comes from
     */
    static String strictVerdict(List<Check> checks, int forks) {
        if (forks < VERDICT_FORKS) {
            return "**undecided** (" + forks + (forks == 1 ? " fork" : " forks") + "; a verdict needs at least "
                    + VERDICT_FORKS + ")";
        }
        boolean met = checks.stream().allMatch(Check::pass);
        return couldFlip(checks, met) ? "**undecided** (the target lies within the error)" : verdict(met);
    }

    /** The error of a / b from the errors of a and b; NaN if either has none. */
    static double knownRatioError(double a, double ea, double b, double eb) {
        return Double.isFinite(ea) && Double.isFinite(eb) ? ratioError(a, ea, b, eb) : Double.NaN;
    }

    /** The error of a / b from the errors of a and b (a missing error counts as 0). */
    static double ratioError(double a, double ea, double b, double eb) {
        return Math.abs(a / b) * Math.hypot(nz(ea) / a, nz(eb) / b);
    }

    private Verdicts() {
    }
}
