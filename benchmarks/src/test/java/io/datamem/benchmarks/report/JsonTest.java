package io.datamem.benchmarks.report;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class JsonTest {

    @Test
    void parsesEveryKindOfValue() {
        Object v = Json.parse(" {\"a\": [1, -2.5e3, true, false, null], \"b\": {\"c\": \"x\\\"y\\\\z\\n\\u00e9\"},"
                + " \"d\": [], \"e\": {}} ");
        Map<?, ?> m = (Map<?, ?>) v;
        assertEquals(List.of(1.0, -2500.0, true, false), ((List<?>) m.get("a")).subList(0, 4));
        assertNull(((List<?>) m.get("a")).get(4));
        assertEquals("x\"y\\z\né", ((Map<?, ?>) m.get("b")).get("c"));
        assertEquals(List.of(), m.get("d"));
        assertEquals(Map.of(), m.get("e"));
        assertEquals(List.of("a", "b", "d", "e"), List.copyOf(m.keySet()), "members keep their order");
    }

    @Test
    void rejectsMalformedDocumentsWithThePosition() {
        for (String bad : List.of("", "{", "[1,]", "{\"a\" 1}", "tru", "\"open", "[1] 2", "{\"a\":1,}", "\"\\q\"",
                "-", "[1 2]")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Json.parse(bad), bad);
            assertTrue(e.getMessage().startsWith("JSON: ") && e.getMessage().contains("at offset"), e.getMessage());
        }
    }
}
