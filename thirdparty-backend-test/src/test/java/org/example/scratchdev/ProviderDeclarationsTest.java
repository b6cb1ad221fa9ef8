package org.example.scratchdev;

import io.datamem.testing.ProviderDeclarations;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** This module's {@code module-info} and {@code META-INF/services} declare the same provider. */
class ProviderDeclarationsTest {

    @Test
    void moduleInfoAndServicesFileAgree() throws IOException {
        assertEquals(Set.of("org.example.scratchdev.provider.ScratchProvider"),
                ProviderDeclarations.assertSame("io.datamem.spi.DataMemProvider"));
    }
}
