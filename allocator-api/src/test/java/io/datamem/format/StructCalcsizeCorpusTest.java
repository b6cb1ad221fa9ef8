package io.datamem.format;

import io.datamem.testing.NativeToolchain;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Item sizes against Python's own {@code struct.calcsize}, on a corpus generated here: valid and
 * invalid struct formats in every mode, with counts (up to the overflow boundary), whitespace and
 * stray characters. {@link FormatString#parseStruct} must accept exactly what {@code struct}
 * accepts, with the same size; {@link FormatString#parse}, a superset, must give the same size
 * for every format {@code struct} accepts.
 */
class StructCalcsizeCorpusTest {

    private static final String SCRIPT = """
            import struct, sys
            for line in sys.stdin:
                fmt = bytes.fromhex(line.strip()).decode('ascii')
                try:
                    print('ok', struct.calcsize(fmt))
                except struct.error as e:
                    print('error', str(e).replace(' ', '_'))
            """;

    @Test
    void itemSizesMatchPythonStructCalcsize() {
        NativeToolchain.python3();
        List<String> corpus = corpus();
        StringBuilder input = new StringBuilder();
        for (String f : corpus) {
            input.append(HexFormat.of().formatHex(f.getBytes(StandardCharsets.US_ASCII))).append('\n');
        }
        NativeToolchain.Result r = NativeToolchain.run(List.of(NativeToolchain.PYTHON3.toString(), "-c", SCRIPT),
                input.toString());
        assertEquals(0, r.exitCode(), r.output());
        String[] lines = r.output().split("\n");
        assertEquals(corpus.size(), lines.length, "one answer per format");
        int valid = 0;
        int compared = 0;
        for (int i = 0; i < corpus.size(); i++) {
            String format = corpus.get(i);
            String[] answer = lines[i].split(" ", 2);
            String shown = "'" + format.replace("\u000b", "\\v").replace("\t", "\\t").replace("\u0000", "\\0") + "'";
            if (answer[0].equals("ok")) {
                valid++;
                long size = Long.parseLong(answer[1]);
                try {
                    assertEquals(size, FormatString.parseStruct(format).itemSize(), "parseStruct " + shown);
                } catch (FormatException e) {
                    fail("struct.calcsize(" + shown + ") = " + size + ", but parseStruct refused: " + e.getMessage());
                }
                if (hasItem(format)) {
                    assertEquals(size, FormatString.parse(format).itemSize(), "parse " + shown);
                    compared++;
                }
            } else {
                try {
                    FormatString f = FormatString.parseStruct(format);
                    fail("struct.calcsize(" + shown + ") raised " + answer[1] + ", but parseStruct gave " + f.itemSize());
                } catch (FormatException expected) {
                    // agreed
                }
            }
        }
        assertTrue(valid > corpus.size() / 3 && valid < corpus.size(), "the corpus has valid and invalid formats: "
                + valid + " valid of " + corpus.size());
        assertTrue(compared > 500, "compared " + compared);
    }

    private static boolean hasItem(String format) {
        for (char c : format.toCharArray()) {
            if ("@=<>! \t\n\r\u000b\u000c".indexOf(c) < 0) {
                return true;
            }
        }
        return false;
    }

    static List<String> corpus() {
        List<String> out = new ArrayList<>(List.of("", "di", "id", "0l", "llh0l", "?e", "@e", "=e", "<e", ">e", "!e",
                "9223372036854775807x", "9223372036854775808x", "99999999999999999999x", "4611686018427387904h",
                "4611686018427387903h", "1152921504606846975q", "1152921504606846976q", "x9223372036854775807x",
                "b9223372036854775807x", "@b9223372036854775806x", "@bh9223372036854775805x", "3", "i3", "3 i", " <i",
                "i<i", "\u000bi", "x\u000c", "5p", "0s", "0p", "Zf", "T{i}", "<n", "<N", "<P", "@nNP", "g", "w", "u",
                "2(3)d", "i\u0000i", "bq", "=bq", "<bq", ">bq", "!bq", "@bq", "   ", "<", "@", "c3cs10p"));
        Random random = new Random(42);
        String chars = "xcbB?hHiIlLqQnNefdspP";
        String stray = "ZTgwu{}()<>=@!:[]$;\u0000";
        for (int n = 0; n < 3000; n++) {
            StringBuilder b = new StringBuilder();
            if (random.nextInt(3) > 0) {
                b.append("@=<>!".charAt(random.nextInt(5)));
            }
            int items = random.nextInt(8);
            for (int k = 0; k < items; k++) {
                int r = random.nextInt(100);
                if (r < 8) {
                    b.append(" \t\u000b".charAt(random.nextInt(3)));
                }
                if (r < 3) {
                    b.append(stray.charAt(random.nextInt(stray.length())));
                    continue;
                }
                int c = random.nextInt(100);
                if (c < 30) {
                    b.append(random.nextInt(4));
                } else if (c < 40) {
                    b.append(random.nextInt(100));
                } else if (c < 42) {
                    b.append(Long.MAX_VALUE / (1L << random.nextInt(4)) - random.nextInt(3));
                }
                if (random.nextInt(100) < 2) {
                    b.append(' ');
                }
                b.append(chars.charAt(random.nextInt(chars.length())));
            }
            if (random.nextInt(50) == 0) {
                b.append(random.nextInt(10));
            }
            out.add(b.toString());
        }
        return out;
    }
}
