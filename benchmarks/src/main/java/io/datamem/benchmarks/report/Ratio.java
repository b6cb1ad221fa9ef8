package io.datamem.benchmarks.report;

import static io.datamem.benchmarks.report.Format.fmt;
import static io.datamem.benchmarks.report.Format.ratio;
import static io.datamem.benchmarks.report.Verdicts.ratioError;

/** A ratio and its error (NaN where a figure has none), for a goal's figures. */
record Ratio(double value, double error, int forks) {

    static Ratio of(Result a, Result b) {
        double e = Double.isFinite(a.error()) && Double.isFinite(b.error())
                ? ratioError(a.score(), a.error(), b.score(), b.error()) : Double.NaN;
        return new Ratio(a.score() / b.score(), e, Math.min(forksOf(a), forksOf(b)));
    }

    /** This ratio and its error multiplied by {@code factor}. */
    Ratio times(double factor) {
        return new Ratio(value * factor, error * factor, forks);
    }

    private static int forksOf(Result r) {
        return r.benchmark().startsWith("NumPy.") ? Integer.MAX_VALUE : r.forks();
    }

    /** Without an error, a re-run could flip the verdict as far as anyone can tell. */
    Check check(double target) {
        return new Check(value <= target, !(Math.abs(value - target) >= error));
    }

    @Override
    public String toString() {
        return ratio(value) + " ± " + fmt(error);
    }
}
