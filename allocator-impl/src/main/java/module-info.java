import io.datamem.impl.internal.AlignedProvider;
import io.datamem.impl.internal.HugePagesProvider;
import io.datamem.impl.internal.NumaProvider;
import io.datamem.impl.internal.PoolProvider;
import io.datamem.impl.internal.StatsProvider;

/**
 * datamem's CPU backends and adaptors.
 */
module io.datamem.impl {
    requires transitive io.datamem.api;
    requires org.lwjgl.hwloc;
    requires org.lwjgl.hwloc.natives; // the bundled hwloc library: resolved on the module path without --add-modules
    requires org.lwjgl.natives;

    exports io.datamem.impl;

    provides io.datamem.spi.DataMemProvider with AlignedProvider, StatsProvider,
            HugePagesProvider, NumaProvider, PoolProvider;
}
