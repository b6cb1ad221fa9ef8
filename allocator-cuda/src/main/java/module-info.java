/**
 * datamem CUDA backend: pinned, device, managed and registered CUDA memory through the CUDA driver
 * API, exported as device buffers and DLPack tensors.
 *
 * <p>Native access: the backend calls the CUDA driver library {@code libcuda.so.1} through the
 * foreign function API; it needs nothing else (no CUDA toolkit, no JNI library). Run with
 * {@code --enable-native-access=io.datamem.cuda} on the module path ({@code ALL-UNNAMED} on the
 * class path).
 */
module io.datamem.cuda {
    requires transitive io.datamem.impl;

    exports io.datamem.cuda;

    provides io.datamem.spi.DataMemProvider with io.datamem.cuda.provider.CudaProvider;
}
