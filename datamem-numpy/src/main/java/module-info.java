/**
 * datamem NumPy: NEP 49 handlers across the C boundary. A datamem handler exported as NumPy's
 * {@code PyDataMem_Handler} (for {@code PyDataMem_SetHandler}), and a native
 * {@code PyDataMem_Handler} imported as a datamem handler. Depends on {@code io.datamem.api} alone;
 * it links to no Python or NumPy library.
 *
 * <p>Native access: this module creates upcall stubs and downcall handles and reads native structs,
 * restricted operations. Run with {@code --enable-native-access=io.datamem.numpy} (module path) or
 * {@code --enable-native-access=ALL-UNNAMED} (class path).
 */
module io.datamem.numpy {
    requires transitive io.datamem.api;

    exports io.datamem.numpy;
}
