package io.datamem.examples.cli;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code datamem demo --elements=N}: any positive N runs (not only multiples of a row length), and
 * N below 1 is a usage error.
 */
class DemoCommandTest {

    @ParameterizedTest
    @ValueSource(longs = {1, 1500, 4099})
    void theDemoRunsWithAnyPositiveNumberOfElements(long elements) {
        var r = CommandLineConventionsTest.cli("demo", "--elements=" + elements);
        assertEquals(0, r.status(), r.out() + r.err());
        assertTrue(r.out().contains("; vectors of " + elements + " float64\n"), r.out());
        assertTrue(r.out().contains("  datamem.allocations            counter                        3\n")
                        && r.out().contains(" bytes   " + 3 * 8 * elements + "\n")
                        && r.out().contains("  datamem.allocation.size.max    gauge                  bytes   "
                        + 8 * elements + "\n"), "the profiled run allocated the vectors: " + r.out());
        assertTrue(r.out().strip().endsWith("ok: both blocks computed the same result and every byte was freed"),
                r.out());
        assertEquals("", r.err());
    }

    @ParameterizedTest
    @ValueSource(strings = {"0", "-1", "-9223372036854775808"})
    void fewerThanOneElementIsAUsageError(String elements) {
        var r = CommandLineConventionsTest.cli("demo", "--elements", elements);
        assertEquals(2, r.status(), r.err());
        assertEquals("", r.out());
        assertTrue(r.err().startsWith("datamem demo: Invalid value for option '--elements': " + elements
                + " (expected: >= 1)\nUsage: datamem demo "), r.err());
    }
}
