package io.datamem.benchmarks.report;

/**
 * A goal's verdict.
 *
 * @param goal    what was aimed at
 * @param figure  what was measured
 * @param verdict met, missed or not measured
 * @param why     for a miss, why; else empty
 */
record Goal(String goal, String figure, String verdict, String why) {

    /** The figure and verdict of a goal whose figures are not in the run. */
    static final String NOT_MEASURED = "not measured";
}
