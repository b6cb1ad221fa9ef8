/**
 * datamem's JMH benchmarks: allocation against its peers, scoping, statistics, huge pages and
 * alignment, with the runner of the suite and the generator of {@code docs/performance.md}.
 */
module io.datamem.benchmarks {
    requires io.datamem.impl;
    requires io.datamem.cuda;
    requires io.datamem.ucx;
    requires io.datamem.numpy;
    requires io.datamem.arrow;
    requires jmh.core;
    requires micrometer.core;
    requires io.netty.buffer;
    requires io.netty.common;
    requires com.sun.jna;
    requires xchart;
    requires java.desktop;
}
