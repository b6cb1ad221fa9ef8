package io.datamem.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.spi.ProviderTerm;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Fuzz target for the handler-name grammar ({@code DATAMEM_HANDLER}, configuration files,
 * {@link DataMem#createHandler}) with every provider of allocator-impl installed. The fuzzer's
 * bytes, read as UTF-8, are split into terms and built; only the documented
 * {@link IllegalArgumentException} (malformed, unknown term, bad option) and
 * {@link IllegalStateException} (a provider unavailable here) may escape. A handler that builds
 * serves one small block. Names with a {@code log} term are split only, never built: that
 * family opens the file its name gives.
 */
class HandlerNameFuzzTest {

    @FuzzTest
    void createHandler(byte[] input) {
        String name = new String(input, StandardCharsets.UTF_8);
        List<ProviderTerm> terms;
        try {
            terms = ProviderTerm.split(name);
            for (ProviderTerm t : terms) {
                t.family();
                t.argument();
                t.nested();
                t.options(t.family());
            }
        } catch (IllegalArgumentException refused) {
            terms = null;
        }
        if (name.contains("log")) {
            return;
        }
        DataMemHandler h;
        try {
            h = DataMem.createHandler(name);
        } catch (IllegalArgumentException | IllegalStateException refused) {
            return;
        }
        MemorySegment p = h.allocator().malloc(24);
        if (p.address() != 0) {
            h.allocator().free(p, 24);
        }
        assertEquals(true, terms != null, "built a handler whose name does not split: " + name);
    }
}
