package io.datamem;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What docs/index.md promises of messages: they quote at most the first 128 characters of what
 * was written, then its length.
 */
class QuotedInputTest {

    @Test
    void aRefusedHandlerNameIsQuotedToItsFirst128CharactersAndItsLength() {
        String name = "x".repeat(1000) + "+";
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DataMem.handler(name));
        String quoted = "'" + "x".repeat(128) + "…' (1001 characters)";
        assertTrue(e.getMessage().contains(quoted), e.getMessage());
        assertFalse(e.getMessage().contains("x".repeat(129)), e.getMessage());
        String exactly128 = "y".repeat(127) + "+";
        String whole = assertThrows(IllegalArgumentException.class, () -> DataMem.handler(exactly128)).getMessage();
        assertTrue(whole.contains("'" + exactly128 + "'") && !whole.contains(" characters)"),
                "128 characters are quoted whole: " + whole);
    }
}
