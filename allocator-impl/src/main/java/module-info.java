import io.datamem.impl.internal.AlignedProvider;
import io.datamem.impl.internal.HugePagesProvider;
import io.datamem.impl.internal.NumaProvider;
import io.datamem.impl.internal.PoolProvider;
import io.datamem.impl.internal.FaultsProvider;
import io.datamem.impl.internal.GuardProvider;
import io.datamem.impl.internal.JfrProvider;
import io.datamem.impl.internal.LimitProvider;
import io.datamem.impl.internal.LogProvider;
import io.datamem.impl.internal.StatsProvider;
import io.datamem.impl.internal.TrackingProvider;

/**
 * datamem's CPU backends and adaptors.
 *
 * <p>Micrometer is optional ({@code requires static}): only {@code io.datamem.impl.micrometer} uses
 * it; a module using that package requires {@code micrometer.core} itself.
 */
module io.datamem.impl {
    requires transitive io.datamem.api;
    requires org.lwjgl.hwloc;
    requires org.lwjgl.hwloc.natives; // the bundled hwloc library: resolved on the module path without --add-modules
    requires org.lwjgl.natives;
    requires jdk.jfr;
    requires static micrometer.core;

    exports io.datamem.impl;
    exports io.datamem.impl.micrometer;

    provides io.datamem.spi.DataMemProvider with AlignedProvider, StatsProvider,
            HugePagesProvider, NumaProvider, PoolProvider,
            TrackingProvider,
            LimitProvider,
            GuardProvider,
            LogProvider,
            FaultsProvider,
            JfrProvider;
}
