/**
 * datamem's API: the NEP 49 handler contract, scoping, arrays and dtypes, and the provider SPI.
 * Depends on the JDK alone.
 *
 * <p>Native access: this module creates memory segments over native addresses, a restricted
 * operation. Run with {@code --enable-native-access=io.datamem.api} (module path) or
 * {@code --enable-native-access=ALL-UNNAMED} (class path).
 */
module io.datamem.api {
    exports io.datamem;
    exports io.datamem.array;
    exports io.datamem.buffer;
    exports io.datamem.dlpack;
    exports io.datamem.format;
    exports io.datamem.usm;
    exports io.datamem.spi;
    exports io.datamem.internal to io.datamem.impl, io.datamem.cuda, io.datamem.sycl, io.datamem.arrow;

    uses io.datamem.spi.DataMemProvider;
    uses io.datamem.internal.HandlerRegistry;
    uses io.datamem.internal.FailureDiagnostics;
    uses io.datamem.internal.HandlerWatcher;

    provides io.datamem.spi.DataMemProvider with io.datamem.internal.registry.BuiltinProvider,
            io.datamem.internal.registry.WorkspaceProvider;
    provides io.datamem.internal.HandlerRegistry with io.datamem.internal.registry.ProviderRegistry;
}
