package io.datamem.format;

import io.datamem.array.DType;
import io.datamem.format.FormatString.Custom;
import io.datamem.format.FormatString.Field;
import io.datamem.format.FormatString.Mode;
import io.datamem.format.FormatString.Scalar;
import io.datamem.format.FormatString.Struct;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** PEP 3118 parsing and writing: sizes, offsets, extensions, custom dtypes, errors. */
class FormatStringTest {

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
        "d|8", "di|12", "id|16", "T{di}|16", "T{<d:x:<d:y:}|16", "<i|4", "=l|4", "l|8", "<q|8", "3d|24",
        "(2,3)d|48", "(2,3)4d|192", "( 2 , 3 )d|48", "10s|10", "0s|0", "3c|3", "5p|5", "Zf|8", "Zd|16", "Ze|4",
        "?e|4", "^?e|3", "=?e|3", "xxd|16", "bd|16", "<bd|9", "llh0l|24", "0l|0", "T{bT{bd}}|24", "2T{di}|32",
        "b(3)T{bd}|56", "g|16", "Zg|32", "w|4", "3w|12", "u|2", "4u|8", "n|8", "N|8", "P|8", "i < i|8",
        "T{}|0", "T{i}b|5", "bT{i}|8", "[ml_dtypes$bfloat16]|2", "b[ml_dtypes$bfloat16]|4",
        "<b[ml_dtypes$bfloat16]|3", "3[ml_dtypes$float8_e4m3fn]|3", "[struct$2i]|8", "[struct$<bi]|5",
        "[mymodule$coords2d;buffer$T{d:X:d:Y:}]|16", "[buffer$di]|16", "[buffer$<di]|12",
        "[foo$;ml_dtypes$bfloat16;buffer$H]|2", "@d|8", "!d|8", ">h|2"
    })
    void itemSizes(String format, long itemSize) {
        FormatString f = FormatString.parse(format);
        assertEquals(itemSize, f.itemSize(), format);
        assertEquals(f, FormatString.parse(f.toString()), "canonical form " + f + " of " + format);
    }

    @Test
    void fieldOffsetsFollowNativeAlignment() {
        FormatString f = FormatString.parse("b:a:d:b:(2)h:c:T{bi}:s:");
        List<Field> fields = f.fields();
        assertEquals(List.of(0L, 8L, 16L, 20L), fields.stream().map(Field::offset).toList());
        assertEquals(List.of("a", "b", "c", "s"), fields.stream().map(Field::name).toList());
        assertEquals(List.of(2L), fields.get(2).shape());
        Struct s = assertInstanceOf(Struct.class, fields.get(3).type());
        assertEquals(List.of(0L, 4L), s.fields().stream().map(Field::offset).toList());
        assertEquals(8, s.itemSize());
        assertEquals(4, s.alignment());
        assertEquals(28, f.itemSize());
        assertEquals(8, f.alignment());

        FormatString packed = FormatString.parse("<b:a:d:b:(2)h:c:T{bi}:s:");
        assertEquals(List.of(0L, 1L, 9L, 13L), packed.fields().stream().map(Field::offset).toList());
        assertEquals(18, packed.itemSize());
        assertEquals(1, packed.alignment());
    }

    @Test
    void contractExample() {
        FormatString f = FormatString.parse("T{<d:x:<d:y:}");
        assertEquals(16, f.itemSize());
        Struct s = assertInstanceOf(Struct.class, f.fields().getFirst().type());
        assertEquals("x", s.fields().get(0).name());
        assertEquals(8, s.fields().get(1).offset());
        Scalar d = assertInstanceOf(Scalar.class, s.fields().get(1).type());
        assertEquals(Mode.LITTLE_ENDIAN, d.mode());
        assertEquals("T{<d:x:d:y:}", f.toString());
    }

    @Test
    void modesPersistAcrossStructsAsNumPyReadsThem() {
        FormatString f = FormatString.parse("T{<b}i");
        // '<' stays in effect after the struct: 'i' is standard and unaligned
        assertEquals(5, f.itemSize());
        assertEquals(1, f.fields().get(1).offset());
    }

    static List<DType> dtypes() {
        List<DType> all = new ArrayList<>(DType.builtins());
        all.addAll(CustomDTypes.float8());
        return all;
    }

    @ParameterizedTest
    @MethodSource("dtypes")
    void everyDtypeFormatParsesBackToTheDtype(DType dtype) {
        FormatString f = FormatString.of(dtype);
        assertEquals(dtype.itemSize(), f.itemSize());
        assertEquals(Optional.of(dtype), f.dtype());
        assertEquals(dtype.alignment(), f.alignment(), "native alignment of " + dtype);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "<i|int32", "=l|int32", "l|int64", "<q|int64", "?|bool", "B|uint8", "<e|float16", ">b|int8",
        "<[ml_dtypes$bfloat16]|bfloat16", "n|int64", "N|uint64"
    })
    void dtypesOfSpellings(String format, String dtype) {
        assertEquals(Optional.of(dtype), FormatString.parse(format).dtype().map(DType::name));
    }

    @ParameterizedTest
    @CsvSource({"'>i'", "'!d'", "'2d'", "'d:x:'", "'T{d}'", "'c'", "'s'", "'x'", "'g'", "'P'", "'Zg'", "'bd'",
        "'>[ml_dtypes$bfloat16]'", "'[struct$i]'"})
    void formatsWithoutADtype(String format) {
        assertEquals(Optional.empty(), FormatString.parse(format).dtype());
    }

    @Test
    void customAlternativesFirstUnderstoodWins() {
        Custom c = custom("[numpy$numpy.dtypes:StringDType:0x1;ml_dtypes$float8_e5m2;ml_dtypes$bfloat16]");
        assertEquals(1, c.chosen());
        assertEquals(CustomDTypes.FLOAT8_E5M2, c.dtype());
        assertEquals("numpy", c.spellings().getFirst().id());
        assertEquals("numpy.dtypes:StringDType:0x1", c.spellings().getFirst().payload());

        Custom coords = custom("[mymodule$coords2d;buffer$T{d:X:d:Y:}]");
        assertEquals(1, coords.chosen());
        assertNull(coords.dtype());
        assertEquals(16, coords.layout().itemSize());
        assertEquals("[mymodule$coords2d;buffer$T{d:X:d:Y:}]", FormatString.parse(
                "[mymodule$coords2d;buffer$T{d:X:d:Y:}]").toString());

        Custom s = custom("[struct$<hq]");
        assertEquals(10, s.itemSize());
        assertTrue(s.spelling().isReserved());
    }

    private static Custom custom(String format) {
        return assertInstanceOf(Custom.class, FormatString.parse(format).fields().getFirst().type());
    }

    @Test
    void unknownCustomIdsAreNamed() {
        FormatException e = assertThrows(FormatException.class, () -> FormatString.parse("d[numpy$x;torch$y]"));
        assertEquals(1, e.position());
        assertTrue(e.getMessage().contains("'numpy'") && e.getMessage().contains("'torch'"), e.getMessage());
        assertTrue(e.getMessage().contains("ml_dtypes"), e.getMessage());
        FormatException unknownPayload = assertThrows(FormatException.class,
                () -> FormatString.parse("[ml_dtypes$float128]"));
        assertTrue(unknownPayload.getMessage().contains("ml_dtypes$float128"), unknownPayload.getMessage());
    }

    @Test
    void registeringACustomDtype() {
        DType coords = DType.custom("coords3f", 12, 4, "[datamem.test$coords3f;buffer$T{f:x:f:y:f:z:}]",
                DType.DL_OPAQUE_HANDLE, 96, 1, "|V12");
        CustomDTypes.register(coords);
        CustomDTypes.register(coords); // idempotent
        assertEquals(Optional.of(coords), CustomDTypes.lookup("datamem.test", "coords3f"));
        FormatString f = FormatString.parse("2[datamem.test$coords3f;buffer$T{f:x:f:y:f:z:}]");
        assertEquals(24, f.itemSize());
        assertEquals(coords, ((Custom) f.fields().getFirst().type()).dtype());
        assertTrue(CustomDTypes.ids().contains("datamem.test"));

        DType clash = DType.custom("other", 12, 4, "[datamem.test$coords3f]", DType.DL_OPAQUE_HANDLE, 96, 1, "|V12");
        assertThrows(IllegalArgumentException.class, () -> CustomDTypes.register(clash));
        DType int8Twin = DType.custom("twin", 1, 1, "[datamem.test$twin]", DType.DL_INT, 8, 1, "|i1");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CustomDTypes.register(int8Twin));
        assertTrue(e.getMessage().contains("int8"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> CustomDTypes.register(
                DType.custom("plain", 1, 1, "B", DType.DL_OPAQUE_HANDLE, 8, 1, "|V1")));
        assertThrows(IllegalArgumentException.class, () -> CustomDTypes.register(
                DType.custom("reserved", 1, 1, "[buffer$B]", DType.DL_OPAQUE_HANDLE, 8, 1, "|V1")));
    }

    @ParameterizedTest(name = "{0} fails at {1}")
    @CsvSource(delimiter = '|', value = {
        "''|0", "'   '|3", "'<'|1", "'3'|1", "'d3'|2", "'3 d'|1", "'T'|0", "'T{d'|0", "'T{d}}'|4", "'(2,3'|0",
        "'()d'|1", "'(2,)d'|3", "'(2;3)d'|2", "'(2)'|3", "'d:x'|1", "'d:x:d:x:'|4", "'O'|0", "'&d'|0", "'t'|0",
        "'X{}'|0", "'Zq'|1", "'Z'|0", "'<g'|1", "'=Zg'|1", "'<n'|1", "'!P'|1", "'['|0", "'[abc]'|1",
        "'[$x]'|1", "'[a$b$c]'|4", "'[a$b'|0", "'[buffer$[x]'|8", "'[struct$T{i}]'|8",
        "'[buffer$]'|8", "'q:\u00e9:'|2", "'\u00e9'|0", "'\u0000'|0", "'99999999999999999999d'|0",
        "'1152921504606846976d'|0", "'(4294967296,4294967296)d'|0", "'}'|0", "'ii}'|2"
    })
    void errorsNameThePosition(String format, int position) {
        FormatException e = assertThrows(FormatException.class, () -> FormatString.parse(format));
        assertEquals(position, e.position(), e.getMessage());
        assertTrue(e.getMessage().contains("at position " + position), e.getMessage());
        assertEquals(format, e.format());
    }

    @Test
    void nestingIsBounded() {
        String ok = "T{".repeat(FormatString.MAX_DEPTH) + "d" + "}".repeat(FormatString.MAX_DEPTH);
        assertEquals(8, FormatString.parse(ok).itemSize());
        String deep = "T{".repeat(FormatString.MAX_DEPTH + 1) + "d" + "}".repeat(FormatString.MAX_DEPTH + 1);
        FormatException e = assertThrows(FormatException.class, () -> FormatString.parse(deep));
        assertEquals(2 * FormatString.MAX_DEPTH, e.position());
        String hostile = "T{".repeat(1_000_000);
        assertThrows(FormatException.class, () -> FormatString.parse(hostile));
        String buffers = "[buffer$T{d}]";
        assertEquals(8, FormatString.parse(buffers).itemSize());
    }

    @Test
    void longInputsParseInOnePass() {
        String many = "d".repeat(200_000);
        assertEquals(1_600_000, FormatString.parse(many).itemSize());
        String bigCount = "9223372036854775807x";
        assertEquals(Long.MAX_VALUE, FormatString.parse(bigCount).itemSize());
        assertEquals(Long.MAX_VALUE, FormatString.parseStruct(bigCount).itemSize());
        assertThrows(FormatException.class, () -> FormatString.parse("9223372036854775807xx"));
    }

    /** Random and adversarial strings: a FormatException or a result, nothing else, never a hang. */
    @Test
    void fuzzing() {
        Random random = new Random(3118);
        String alphabet = "@=<>!^xcbB?hHiIlLqQnNefdspPgwuZOT{}():[]$;,0123456789 \t&tX_az.";
        int accepted = 0;
        for (int n = 0; n < 30_000; n++) {
            int length = random.nextInt(n < 25_000 ? 12 : 200);
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < length; i++) {
                int r = random.nextInt(100);
                if (r < 2) {
                    b.append((char) random.nextInt(0x300));
                } else if (r < 10) {
                    b.append(random.nextBoolean() ? "T{" : random.nextBoolean() ? "[ml_dtypes$bfloat16]" : ":f:");
                } else {
                    b.append(alphabet.charAt(random.nextInt(alphabet.length())));
                }
            }
            accepted += fuzzOne(b.toString());
        }
        for (String s : adversarial()) {
            fuzzOne(s);
        }
        assertTrue(accepted > 1000, "the fuzzer also produced valid formats: " + accepted);
    }

    private static int fuzzOne(String s) {
        int ok = 0;
        for (int strict = 0; strict < 2; strict++) {
            try {
                FormatString f = strict == 0 ? FormatString.parse(s) : FormatString.parseStruct(s);
                assertTrue(f.itemSize() >= 0);
                if (strict == 0) {
                    FormatString again = FormatString.parse(f.toString());
                    assertEquals(f, again, "canonical round trip of '" + s + "' via '" + f + "'");
                    ok++;
                }
            } catch (FormatException e) {
                assertTrue(e.position() >= 0 && e.position() <= s.length(), e.getMessage());
            }
        }
        return ok;
    }

    private static List<String> adversarial() {
        List<String> out = new ArrayList<>();
        out.add("(" + "1,".repeat(100) + "1)d");
        out.add("(" + "1,".repeat(10_000));
        out.add("[" + "a$b;".repeat(10_000) + "]");
        out.add("[" + "a".repeat(100_000));
        out.add(":".repeat(100_001));
        out.add("d:" + "n".repeat(100_000));
        out.add("9".repeat(100_000) + "d");
        out.add("T{".repeat(5000) + "}".repeat(5000));
        out.add("[buffer$" + "T{".repeat(70) + "d" + "}".repeat(70) + "]");
        out.add("T{".repeat(40) + "[buffer$" + "T{".repeat(40) + "d" + "}".repeat(40) + "]" + "}".repeat(40));
        out.add("Z".repeat(1000));
        out.add("(" + "9".repeat(30) + ")d");
        out.add("(9223372036854775807)(9223372036854775807)d");
        out.add("(3037000500,3037000500)B");
        out.add("4611686018427387904h");
        out.add("9223372036854775807x1x");
        out.add("@".repeat(10_000));
        out.add("[struct$" + "9".repeat(40) + "x]");
        out.add("\u0000d");
        out.add("d\ud800");
        return out;
    }

    @Test
    void structGrammarIsStrict() {
        assertEquals(24, FormatString.parseStruct("llh0l").itemSize());
        assertEquals(0, FormatString.parseStruct("").itemSize());
        assertEquals(4, FormatString.parseStruct("\u000bi").itemSize());
        for (String bad : List.of(" <i", "i<i", "Zf", "T{i}", "(2)d", "d:x:", "<n", "=P", "3", "i3", "3 i", "i\u0000i",
                "g", "w")) {
            assertThrows(FormatException.class, () -> FormatString.parseStruct(bad), bad);
        }
    }
}
