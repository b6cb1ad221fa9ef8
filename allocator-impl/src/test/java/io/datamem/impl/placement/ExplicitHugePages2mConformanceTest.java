package io.datamem.impl.placement;

import org.junit.jupiter.api.Tag;

/**
 * The conformance suite against explicit 2 MiB huge pages ({@code hugepages:2m}, no fallback), with
 * 16 pages reserved for the run when running as root (restored afterwards).
 */
@Tag("hugepages")
class ExplicitHugePages2mConformanceTest extends ExplicitHugePagesConformance {

    ExplicitHugePages2mConformanceTest() {
        super("hugepages:2m", 2L << 20, 16);
    }
}
