/**
 * datamem CUDA backend: pinned, device, managed and registered CUDA memory through JCuda, exported
 * as device buffers and DLPack tensors.
 *
 * <p>Native access: the backend opens {@code libcuda.so.1} through the foreign function API to
 * decide whether CUDA works here. Run with {@code --enable-native-access=io.datamem.cuda} on the
 * module path ({@code ALL-UNNAMED} on the class path).
 */
module io.datamem.cuda {
    requires transitive io.datamem.impl;
    requires jcuda;

    exports io.datamem.cuda;

    provides io.datamem.spi.DataMemProvider with io.datamem.cuda.internal.CudaProvider;
}
