package io.datamem.format;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.charset.StandardCharsets;

/**
 * Fuzz targets for PEP 3118 format strings, which come from other runtimes' buffers. Only
 * {@link FormatException} (an {@code IllegalArgumentException}) may escape; a string that parses
 * parses again to the same result (the input is the fuzzer's bytes read as UTF-8).
 * docs/reliability.md says how to fuzz them; without JAZZER_FUZZ they replay their corpus
 * ({@code FormatStringFuzzTestInputs/<method>}).
 */
class FormatStringFuzzTest {

    @FuzzTest
    void parse(byte[] input) {
        String format = new String(input, StandardCharsets.UTF_8);
        FormatString parsed;
        try {
            parsed = FormatString.parse(format);
        } catch (FormatException expected) {
            return;
        }
        FormatString again = FormatString.parse(format);
        assertEquals(parsed.toString(), again.toString(), format);
    }

    @FuzzTest
    void parseStruct(byte[] input) {
        String format = new String(input, StandardCharsets.UTF_8);
        try {
            FormatString.parseStruct(format);
        } catch (FormatException expected) {
            // the documented refusal
        }
    }
}
