package io.datamem;

import io.datamem.testing.ProviderDeclarations;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** This module's {@code module-info} and {@code META-INF/services} declare the same providers. */
class ProviderDeclarationsTest {

    @Test
    void moduleInfoAndServicesFileAgree() throws IOException {
        assertEquals(Set.of("io.datamem.internal.registry.BuiltinProvider", "io.datamem.internal.registry.WorkspaceProvider"),
                ProviderDeclarations.assertSame("io.datamem.spi.DataMemProvider"));
        assertEquals(Set.of("io.datamem.internal.registry.ProviderRegistry"),
                ProviderDeclarations.assertSame("io.datamem.internal.HandlerRegistry"));
    }
}
