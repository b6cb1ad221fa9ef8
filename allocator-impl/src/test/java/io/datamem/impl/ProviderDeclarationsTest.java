package io.datamem.impl;

import io.datamem.testing.ProviderDeclarations;
import org.junit.jupiter.api.Test;

import java.io.IOException;

/** This module's {@code module-info} and {@code META-INF/services} declare the same providers. */
class ProviderDeclarationsTest {

    @Test
    void moduleInfoAndServicesFileAgree() throws IOException {
        ProviderDeclarations.assertSame("io.datamem.spi.DataMemProvider");
        ProviderDeclarations.assertSame("io.datamem.internal.FailureDiagnostics");
    }
}
