/**
 * datamem's runnable examples and the {@code datamem} command line.
 */
module io.datamem.examples {
    requires io.datamem.impl;
    // io.datamem.impl needs these only for NUMA and JFR (requires static); the command line uses both
    requires org.lwjgl.hwloc;
    requires org.lwjgl.hwloc.natives;
    requires org.lwjgl.natives;
    requires jdk.jfr;
    requires io.datamem.cuda;
    requires io.datamem.sycl;
    requires info.picocli;
    requires micrometer.core;
    requires micrometer.registry.prometheus;
    requires jdk.httpserver;
    // datamem snapshot --pid: attach, start the management agent, call the MBean over JMX (RMI)
    requires jdk.attach;
    requires java.management;
    requires java.management.rmi;

    opens io.datamem.examples.cli to info.picocli;
}
