/**
 * datamem's JMH benchmarks.
 */
module io.datamem.benchmarks {
    requires io.datamem.impl;
    requires io.datamem.cuda;
    requires jmh.core;
}
