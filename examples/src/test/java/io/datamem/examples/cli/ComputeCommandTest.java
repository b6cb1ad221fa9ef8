package io.datamem.examples.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code datamem compute}: the compute block's products equal {@code double[][]}'s and it prints
 * its comparison; sizes and repetitions out of range are usage errors.
 */
class ComputeCommandTest {

    @Test
    void theComputeBlockMatchesDoubleArraysAndPrintsTheComparison() {
        var r = CommandLineConventionsTest.cli("compute", "--size", "24", "--repeat", "1");
        assertEquals(0, r.status(), r.out() + r.err());
        assertTrue(r.out().startsWith("datamem compute: 24 x 24 matrix multiply, 1 repetitions each"), r.out());
        for (String row : new String[] {"matrix multiply, 1 thread ", "matrix multiply, Parallel.forRange / IntStream",
                "  speed-up over 1 thread", "workspace: 1,000 cycles of 2 temporaries of 24 float64: "}) {
            assertTrue(r.out().contains("\n" + row), row + " in\n" + r.out());
        }
        assertTrue(r.out().contains("each cycle 384 bytes"), "two arrays of 24 float64 a cycle: " + r.out());
        assertTrue(r.out().strip().endsWith("ok: every kernel computed the product double[][] did, and the workspace"
                + " gave its memory back"), r.out());
        assertEquals("", r.err());
    }

    @ParameterizedTest
    @CsvSource({"--size,0,1 to 4096", "--size,4097,1 to 4096", "--repeat,0,1 to 100", "--repeat,101,1 to 100"})
    void outOfRangeIsAUsageError(String option, String value, String expected) {
        var r = CommandLineConventionsTest.cli("compute", option, value);
        assertEquals(2, r.status(), r.err());
        assertEquals("", r.out());
        assertTrue(r.err().startsWith("datamem compute: Invalid value for option '" + option + "': " + value
                + " (expected: " + expected + ")"), r.err());
    }
}
