import io.datamem.impl.internal.AlignedProvider;
import io.datamem.impl.internal.PoolProvider;
import io.datamem.impl.internal.StatsProvider;

/**
 * datamem's CPU backends and adaptors.
 */
module io.datamem.impl {
    requires transitive io.datamem.api;

    exports io.datamem.impl;

    provides io.datamem.spi.DataMemProvider with AlignedProvider, StatsProvider, PoolProvider;
}
