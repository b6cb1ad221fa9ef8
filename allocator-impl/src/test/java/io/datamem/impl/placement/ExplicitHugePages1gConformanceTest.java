package io.datamem.impl.placement;

import org.junit.jupiter.api.Tag;

/**
 * The conformance suite against explicit 1 GiB huge pages ({@code hugepages:1g}, no fallback), with
 * one page reserved for the run when running as root (restored afterwards). Every block of 4 MiB or
 * more takes a whole 1 GiB page, and the suite never holds two at once.
 */
@Tag("hugepages")
class ExplicitHugePages1gConformanceTest extends ExplicitHugePagesConformance {

    ExplicitHugePages1gConformanceTest() {
        super("hugepages:1g", 1L << 30, 1);
    }
}
