package io.datamem.benchmarks.report;

/**
 * One comparison a goal makes.
 *
 * @param pass   whether it meets the target
 * @param within whether the target lies within the figure's error
 */
record Check(boolean pass, boolean within) {
}
