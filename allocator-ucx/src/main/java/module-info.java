/**
 * datamem UCX module: memory registered with UCX (an adaptor that registers every block of its
 * upstream, and a leaf allocator whose memory UCX allocates), packed remote keys, and zero-copy
 * transfers of arrays between processes with RMA put/get and tagged send/receive.
 *
 * <p>Native access: the module calls Debian's UCX 1.13 ({@code libucp.so.0}, {@code libucs.so.0})
 * through the foreign function API. Run with {@code --enable-native-access=io.datamem.ucx} on the
 * module path ({@code ALL-UNNAMED} on the class path).
 */
module io.datamem.ucx {
    requires transitive io.datamem.impl;

    exports io.datamem.ucx;

    provides io.datamem.spi.DataMemProvider with io.datamem.ucx.provider.UcxProvider,
            io.datamem.ucx.provider.UcxAdaptorProvider;
}
