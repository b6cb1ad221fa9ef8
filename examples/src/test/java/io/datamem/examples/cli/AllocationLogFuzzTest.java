package io.datamem.examples.cli;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;

/**
 * Fuzz target for the allocation-log reader ({@code datamem replay}, {@code datamem trace}): the
 * fuzzer's bytes, read as UTF-8, are a log. Only the documented {@link IllegalArgumentException}
 * (a malformed line, named) may escape.
 */
class AllocationLogFuzzTest {

    @FuzzTest
    void read(byte[] input) {
        try {
            for (AllocationLog.Entry e : AllocationLog.read(new StringReader(
                    new String(input, StandardCharsets.UTF_8)), "fuzz.log")) {
                e.toString();
            }
        } catch (IllegalArgumentException refused) {
            // the documented refusal, naming the line
        }
    }
}
