/**
 * datamem's runnable examples and the {@code datamem} command line.
 */
module io.datamem.examples {
    requires io.datamem.impl;
    requires io.datamem.cuda;
    requires io.datamem.sycl;
    requires info.picocli;
    requires micrometer.core;
    requires micrometer.registry.prometheus;
    requires jdk.httpserver;

    opens io.datamem.examples.cli to info.picocli;
}
