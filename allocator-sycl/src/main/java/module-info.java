import io.datamem.sycl.provider.SyclProvider;

/**
 * datamem SYCL backend: SYCL USM host, shared and device memory through the OpenCL USM extension.
 *
 * <p>Native access: this module calls the OpenCL ICD loader. Run with
 * {@code --enable-native-access=io.datamem.sycl} (module path) or
 * {@code --enable-native-access=ALL-UNNAMED} (class path).
 */
module io.datamem.sycl {
    requires transitive io.datamem.impl;

    exports io.datamem.sycl;

    provides io.datamem.spi.DataMemProvider with SyclProvider;
}
